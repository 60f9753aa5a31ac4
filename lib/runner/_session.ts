/**
 * One run's connection to its target: sends typed operations with the
 * configured per-operation timeouts, counts requests and turns failures into
 * content-free records (they are evidence, not exceptions).
 */

import type { StagingConfig } from "../contract/config.ts";
import {
  type Operation,
  type OperationRequests,
  type OperationResponses,
  parseResponse,
  ProtocolError,
  type StagingTransport,
  wasAltered,
} from "../contract/protocol.ts";
import type { Clock } from "./clock.ts";
import {
  type AnswerMatch,
  AnswerSearcher,
  AnswerSearchError,
} from "./marker/mod.ts";
import { MIN_BOUNDED_MS } from "./_interrupt_bounds.ts";
import type { RunEventListener } from "./events.ts";
import {
  alteredError,
  cutShortError,
  toRecord,
  unreadError,
  unsentError,
} from "./_request_errors.ts";
import type { RequestErrorRecord } from "./report.ts";

/**
 * The answer to one request: a value (and the answer as it came, with the
 * keys its schema leaves out), or the record of why there is none.
 */
export type Attempt<T> = {
  ok: true;
  value: T;
  answer: Record<string, unknown>;
} | {
  ok: false;
  error: RequestErrorRecord;
};

/**
 * One answer searched for one marker: what was found (`null`: not there),
 * or, when the search was cut short or failed, the record of an answer not
 * read, as a request that failed leaves one.
 */
export type Searched = {
  ok: true;
  match: AnswerMatch | null;
} | {
  ok: false;
  error: RequestErrorRecord;
};

/** Sees a usable answer as it came, with the keys its schema leaves out. */
export type AnswerListener = (
  op: Operation,
  role: "test" | "control",
  answer: Record<string, unknown>,
) => void;

/** Sends requests for one run. */
export class RunSession {
  #transport: StagingTransport;
  #timeouts: StagingConfig["timeout_seconds"];
  #clock: Clock;
  #emit: RunEventListener;
  #origin: number;
  #until: number | null = null;
  /** What a request past the bound still gets: 0 (called off unsent) until cleanup. */
  #pastBoundMs = 0;
  /** Ends the request in flight after the given milliseconds, if one is. */
  #cutInFlight: ((ms: number) => void) | null = null;
  /** Ends the search under way after the given milliseconds, if one is. */
  #cutSearch: ((ms: number) => void) | null = null;
  readonly #searcher = new AnswerSearcher();
  total = 0;
  failed = 0;
  /** Requests the bound after an interrupt ended before they were answered. */
  cutShort = 0;
  /**
   * Called with each usable answer before the schema reduced it: the engine
   * reads an inventory's other counts there, which the report does not keep.
   */
  onAnswer: AnswerListener | null = null;

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
   * Ends the request in flight and every later one by `clockMs` (on the
   * session's clock) instead of at its operation's full timeout: after an
   * interrupt, neither the request it arrived during nor cleanup's bounded
   * polling may wait minutes on an adapter that hangs. The request in
   * flight gets at least a second; a later one that would start past the
   * bound is called off unsent, or in cleanup still gets a second
   * ({@link keepSendingPastBound}). A search of an answer under way, or
   * started later, ends at the bound itself ({@link search}).
   */
  boundRequests(clockMs: number): void {
    this.#until = clockMs;
    const left = clockMs - this.#clock.now();
    this.#cutInFlight?.(Math.max(MIN_BOUNDED_MS, left));
    this.#cutSearch?.(Math.max(0, left));
  }

  /** Milliseconds left until the bound (0 once it has passed); `null` without one. */
  leftOfBoundMs(): number | null {
    return this.#until === null
      ? null
      : Math.max(0, this.#until - this.#clock.now());
  }

  /**
   * From now on a request that starts with the bound (nearly) passed still
   * gets {@link MIN_BOUNDED_MS}: cleanup's deletions and its last poll
   * deserve their chance. Before cleanup such a request is called off
   * without being sent: the run is interrupted, so its answer could decide
   * nothing, and it would only hold up the cleanup.
   */
  keepSendingPastBound(): void {
    this.#pastBoundMs = MIN_BOUNDED_MS;
  }

  #timeoutMs(op: Operation): number {
    const full = this.#timeouts[op] * 1000;
    if (this.#until === null) return full;
    return Math.min(
      full,
      Math.max(this.#pastBoundMs, this.#until - this.#clock.now()),
    );
  }

  /**
   * A search gets as long as its request was allowed (an answer that
   * cannot be read in the time the adapter had to send it is not read),
   * and after an interrupt no longer than the bound, with nothing past it:
   * the seconds an interrupt promises count requests, not searches.
   */
  #searchBudget(op: "query" | "inventory"): { ms: number; bounded: boolean } {
    const full = this.#timeouts[op] * 1000;
    if (this.#until === null) return { ms: full, bounded: false };
    const left = Math.max(0, this.#until - this.#clock.now());
    return left < full
      ? { ms: left, bounded: true }
      : { ms: full, bounded: false };
  }

  /**
   * Searches a usable answer of `op` for `marker` within
   * {@link #searchBudget}, ended early when an interrupt sets a bound that
   * comes sooner. A search cut short or failed is an answer not read: it
   * counts as a failed request, and one the interrupt's bound ended as cut
   * short, as a request called off does. A small answer is searched at
   * once, and nothing cuts it short.
   */
  async search(
    op: "query" | "inventory",
    role: "test" | "control",
    answer: Readonly<Record<string, unknown>>,
    marker: string,
  ): Promise<Searched> {
    const stop = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let budget = this.#searchBudget(op);
    // Real time, as the timer keeps it: an interrupt only ever brings the end closer.
    let endsAt = 0;
    const cutAfter = (next: typeof budget) => {
      clearTimeout(timer);
      budget = next;
      endsAt = performance.now() + next.ms;
      if (next.ms <= 0) stop.abort();
      else timer = setTimeout(() => stop.abort(), next.ms);
    };
    this.#cutSearch = (ms) => {
      if (performance.now() + ms < endsAt) cutAfter({ ms, bounded: true });
    };
    cutAfter(budget);
    try {
      const match = await this.#searcher.find(answer, marker, stop.signal);
      if (match === null && wasAltered(answer)) {
        // The token's replacement may have cut the marker: absent is unknown.
        return this.#unread(op, role, alteredError(op));
      }
      return { ok: true, match };
    } catch (error) {
      if (!(error instanceof AnswerSearchError)) throw error;
      if (budget.bounded && error.reason === "aborted") this.cutShort++;
      return this.#unread(op, role, unreadError(op, error, budget));
    } finally {
      clearTimeout(timer);
      this.#cutSearch = null;
    }
  }

  /**
   * An answer not read after all: its request counts as failed, and the
   * event says so, since the request's own event said it was answered.
   */
  #unread(
    op: "query" | "inventory",
    role: "test" | "control",
    error: ProtocolError,
  ): Searched {
    this.failed++;
    const record = toRecord(op, role, error);
    this.#emit({
      type: "answer_unread",
      op,
      namespace: role,
      failure: record.failure,
    });
    return { ok: false, error: record };
  }

  /** Ends the search thread, if one was started: no worker outlives the run. */
  [Symbol.dispose](): void {
    this.#searcher.close();
  }

  /** Milliseconds since the session started. */
  elapsedMs(): number {
    return this.#clock.now() - this.#origin;
  }

  /**
   * Sends `op` to the namespace role, or, once the bound has passed before
   * cleanup, calls it off unsent; never throws for target misbehaviour.
   */
  async attempt<K extends Operation>(
    op: K,
    role: "test" | "control",
    body: OperationRequests[K],
  ): Promise<Attempt<OperationResponses[K]>> {
    if (this.#timeoutMs(op) <= 0) {
      // Never sent, so not counted among the requests: only its record says so.
      this.cutShort++;
      return { ok: false, error: toRecord(op, role, unsentError(op)) };
    }
    const started = this.elapsedMs();
    this.total++;
    let result: Attempt<OperationResponses[K]>;
    try {
      const { value, answer } = await this.#send(op, body);
      this.onAnswer?.(op, role, answer);
      result = { ok: true, value, answer };
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

  /**
   * One request, called off when the bound after an interrupt runs out,
   * whether it was set before the request started or while it was in
   * flight. The bound is kept in real time, as the transport keeps its
   * budget: an answer that arrives in time is never lost to a virtual
   * clock's jump. A transport that ignores the signal is left behind, not
   * waited for.
   */
  async #send<K extends Operation>(
    op: K,
    body: OperationRequests[K],
  ): Promise<
    { value: OperationResponses[K]; answer: Record<string, unknown> }
  > {
    const timeoutMs = this.#timeoutMs(op);
    // A budget the bound shortened ends the request as calling it off would.
    const bounded = timeoutMs < this.#timeouts[op] * 1000;
    const call = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let leftMs = timeoutMs;
    const cut = new Promise<never>((_, reject) => {
      this.#cutInFlight = (ms) => {
        clearTimeout(timer);
        leftMs = ms;
        timer = setTimeout(() => {
          reject(cutShortError(op, ms));
          call.abort();
        }, ms);
      };
    });
    cut.catch(() => {});
    // Kept here too, for a transport that does not keep its budget.
    if (bounded) this.#cutInFlight?.(timeoutMs);
    try {
      const answer = await Promise.race([
        this.#transport.post(op, body as unknown as Record<string, unknown>, {
          timeoutMs,
          signal: call.signal,
        }),
        cut,
      ]);
      return { value: parseResponse(op, answer), answer };
    } catch (error) {
      const ranOut = bounded && error instanceof ProtocolError &&
        error.failure === "timeout";
      if (!call.signal.aborted && !ranOut) throw error;
      this.cutShort++;
      throw cutShortError(op, leftMs);
    } finally {
      clearTimeout(timer);
      this.#cutInFlight = null;
    }
  }
}
