/**
 * A transport wrapper that knows which requests are still being answered.
 * `trace mcp` ends when its client closes stdin, and a tool call may still be
 * writing (a reference run appends to the ledger and the index): closing the
 * database under it would leave half of its writes and no word about it. The
 * command waits for {@link RequestTracker.idle} before it closes anything.
 *
 * @module
 */

import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  JSONRPCMessage,
  MessageExtraInfo,
} from "@modelcontextprotocol/sdk/types.js";

type RequestId = string | number;

/** `transport`, counting the requests it has received and not yet answered. */
export class RequestTracker implements Transport {
  readonly #inner: Transport;
  readonly #open = new Set<RequestId>();
  #idle = Promise.withResolvers<void>();
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    | (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void)
    | undefined;

  constructor(inner: Transport) {
    this.#inner = inner;
    this.#idle.resolve();
  }

  /** Requests received and not yet answered. */
  get pending(): number {
    return this.#open.size;
  }

  /** Resolves once every request received so far has been answered. */
  idle(): Promise<void> {
    return this.#idle.promise;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error: Error) => this.onerror?.(error);
    this.#inner.onmessage = (
      message: JSONRPCMessage,
      extra?: MessageExtraInfo,
    ) => {
      if ("method" in message && "id" in message) this.#opened(message.id);
      this.onmessage?.(message, extra);
    };
    return this.#inner.start();
  }

  async send(
    message: JSONRPCMessage,
    options?: TransportSendOptions,
  ): Promise<void> {
    try {
      await this.#inner.send(message, options);
    } finally {
      if (!("method" in message) && "id" in message) this.#answered(message.id);
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #opened(id: RequestId): void {
    if (this.#open.size === 0) this.#idle = Promise.withResolvers<void>();
    this.#open.add(id);
  }

  #answered(id: RequestId | null | undefined): void {
    if (id === null || id === undefined || !this.#open.delete(id)) return;
    if (this.#open.size === 0) this.#idle.resolve();
  }
}
