/**
 * A transport wrapper that answers a malformed `tools/call` itself. The
 * SDK validates `tools/call` params with its own schema before any handler
 * runs and answers a name that is not a string, or arguments that are not
 * an object, with the schema library's issue dump as the message. Wrapped
 * in {@link guardToolCalls}, such a request gets the invalid-params error
 * (-32602) with one line saying what is wrong and where to look; every
 * other message passes through untouched. Used by `trace mcp` (stdio) and
 * `/mcp` (HTTP) alike. Given the server's {@link ToolCalls}, it counts a
 * well-formed call from the moment it is read, so `trace mcp` waits for a
 * call that was the last line before stdin closed.
 *
 * @module
 */

import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  type MessageExtraInfo,
} from "@modelcontextprotocol/sdk/types.js";
import { isObject, kindOf } from "./_kind.ts";
import type { ToolCalls } from "./context.ts";

/** JSON-RPC's invalid-params code. */
const INVALID_PARAMS = -32602;

/** `transport`, with malformed `tools/call` requests answered before they reach the server. */
export function guardToolCalls(
  transport: Transport,
  calls?: ToolCalls,
): Transport {
  return new ToolCallGuard(transport, calls);
}

class ToolCallGuard implements Transport {
  readonly #inner: Transport;
  readonly #calls: ToolCalls | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    | (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void)
    | undefined;

  constructor(inner: Transport, calls?: ToolCalls) {
    this.#inner = inner;
    this.#calls = calls;
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
    ) => this.#receive(message, extra);
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (("result" in message || "error" in message) && "id" in message) {
      if (message.id !== null) this.#calls?.answered(message.id);
    }
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const problem = toolCallProblem(message);
    if (problem === null || !("id" in message)) {
      if (isJSONRPCRequest(message) && message.method === "tools/call") {
        this.#calls?.arrived(message.id);
      }
      this.onmessage?.(message, extra);
      return;
    }
    this.#inner.send(
      {
        jsonrpc: "2.0",
        id: message.id,
        error: { code: INVALID_PARAMS, message: `Invalid params: ${problem}` },
      },
      { relatedRequestId: message.id },
    ).catch((error: unknown) => this.onerror?.(error as Error));
  }
}

/** What is wrong with the params of a `tools/call` request, or `null` (not one, or well formed). */
export function toolCallProblem(message: unknown): string | null {
  if (!isObject(message) || message.method !== "tools/call") return null;
  const params = message.params;
  if (!isObject(params)) {
    return "tools/call needs params, an object with name and arguments";
  }
  if (typeof params.name !== "string") {
    return `tools/call needs params.name, a string (got ${
      kindOf(params.name)
    })`;
  }
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return `tools/call needs params.arguments, an object of the tool's arguments (got ${
      kindOf(params.arguments)
    }); tools/list gives each tool's input schema`;
  }
  // The SDK's copy of the arguments turns a "__proto__" key into their
  // prototype, where no tool's schema sees it: refused while it is a key.
  if (
    isObject(params.arguments) && Object.hasOwn(params.arguments, "__proto__")
  ) {
    return 'tools/call arguments give "__proto__", which is no argument of any tool; remove it';
  }
  return null;
}
