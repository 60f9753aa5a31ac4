/**
 * One run's connection to its target: sends typed operations with the
 * configured per-operation timeouts, counts requests and turns failures into
 * content-free records (they are evidence, not exceptions).
 */

import type { StagingConfig } from "../contract/config.ts";
import {
  callOperation,
  type Operation,
  type OperationRequests,
  type OperationResponses,
  ProtocolError,
  type StagingTransport,
} from "../contract/protocol.ts";
import { errorMessage } from "../errors.ts";
import type { Clock } from "./clock.ts";
import type { RunEventListener } from "./events.ts";
import type { RequestErrorRecord } from "./report.ts";

/** The answer to one request: a value, or the record of why there is none. */
export type Attempt<T> = { ok: true; value: T } | {
  ok: false;
  error: RequestErrorRecord;
};

/** Shortest budget a bounded request still gets: a deletion deserves its chance. */
const MIN_BOUNDED_MS = 1_000;

/** Sends requests for one run. */
export class RunSession {
  #transport: StagingTransport;
  #timeouts: StagingConfig["timeout_seconds"];
  #clock: Clock;
  #emit: RunEventListener;
  #origin: number;
  #until: number | null = null;
  total = 0;
  failed = 0;

  constructor(
    transport: StagingTransport,
    config: StagingConfig,
    clock: Clock,
    emit: RunEventListener,
  ) {
    this.#transport = transport;
    this.#timeouts = config.timeout_seconds;
    this.#clock = clock;
    this.#emit = emit;
    this.#origin = clock.now();
  }

  /**
   * Ends every later request by `clockMs` (on the session's clock), or at
   * least a second after it starts, instead of at its operation's full
   * timeout: after an interrupt, cleanup's bounded polling must not wait
   * minutes on an adapter that hangs. `null` lifts the bound.
   */
  boundRequests(clockMs: number | null): void {
    this.#until = clockMs;
  }

  #timeoutMs(op: Operation): number {
    const full = this.#timeouts[op] * 1000;
    if (this.#until === null) return full;
    return Math.min(
      full,
      Math.max(MIN_BOUNDED_MS, this.#until - this.#clock.now()),
    );
  }

  /** Milliseconds since the session started. */
  elapsedMs(): number {
    return this.#clock.now() - this.#origin;
  }

  /** Sends `op` to the namespace role; never throws for target misbehaviour. */
  async attempt<K extends Operation>(
    op: K,
    role: "test" | "control",
    body: OperationRequests[K],
  ): Promise<Attempt<OperationResponses[K]>> {
    const started = this.elapsedMs();
    this.total++;
    let result: Attempt<OperationResponses[K]>;
    try {
      const value = await callOperation(this.#transport, op, body, {
        timeoutMs: this.#timeoutMs(op),
      });
      result = { ok: true, value };
    } catch (error) {
      this.failed++;
      result = { ok: false, error: toRecord(op, role, error) };
    }
    this.#emit({
      type: "request",
      op,
      namespace: role,
      started_ms: started,
      duration_ms: this.elapsedMs() - started,
      outcome: result.ok ? "ok" : result.error.failure,
    });
    return result;
  }
}

function toRecord(
  op: Operation,
  role: "test" | "control",
  error: unknown,
): RequestErrorRecord {
  if (error instanceof ProtocolError) {
    const record: RequestErrorRecord = {
      op,
      namespace: role,
      failure: error.failure,
      message: error.message,
    };
    if (error.status !== undefined) record.status = error.status;
    return record;
  }
  // A transport bug must not leak internals into a report: keep the first line only.
  return {
    op,
    namespace: role,
    failure: "refused",
    message: `/${op}: ${errorMessage(error)}`,
  };
}

/**
 * A request error's message without the operation it starts with, for a
 * sentence that names the operation itself: the same error then reads the
 * same for every operation.
 */
export function requestDetail(error: RequestErrorRecord): string {
  for (const prefix of [`Request /${error.op} failed: `, `/${error.op}: `]) {
    if (error.message.startsWith(prefix)) {
      return error.message.slice(prefix.length);
    }
  }
  return error.message;
}
