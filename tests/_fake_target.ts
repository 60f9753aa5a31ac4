/** A scriptable in-process staging target and a virtual clock for engine tests. */

import type { StagingConfig } from "../lib/contract/config.ts";
import {
  type Operation,
  ProtocolError,
  type StagingTransport,
} from "../lib/contract/protocol.ts";
import {
  type CheckpointSink,
  memoryCheckpointSink,
} from "../lib/runner/checkpoint.ts";
import type { Clock } from "../lib/runner/clock.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import type { RunEvent } from "../lib/runner/events.ts";
import type { RunIdentifiers } from "../lib/runner/ids.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { stagingConfig } from "./_helpers.ts";

/** A clock whose sleeps advance time instantly. */
export class VirtualClock implements Clock {
  #now = 0;
  now(): number {
    return this.#now;
  }
  wallNow(): Date {
    return new Date(Date.UTC(2026, 10, 29) + this.#now);
  }
  sleep(ms: number): Promise<void> {
    if (ms > 0) this.#now += ms;
    return Promise.resolve();
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}

/** How the fake target misbehaves; times are ms after the test deletion. */
export interface FakeBehaviour {
  /** Cache entry survives deletion and cleanup. */
  staleCache?: boolean;
  /** Vectors stay until this time after deletion. */
  vectorDelayMs?: number;
  /** Vectors come back at this time after deletion (until the next delete). */
  resurrectAtMs?: number;
  /** Deleting the test ids also deletes the control record. */
  loseControl?: boolean;
  /**
   * The first deletion re-files the deleted source records under the
   * control namespace, where no vector indexes them (so no query returns
   * them), as into a trash that a later deletion of the same ids empties.
   */
  moveToControl?: boolean;
  /** Inventories answer complete: false. */
  incomplete?: boolean;
  /** Operation that fails with this failure class (optionally only after deletion). */
  fail?: { op: Operation; afterDelete?: boolean };
  /** Ingest answers a different id. */
  rewriteIds?: boolean;
}

interface Doc {
  text: string;
}

/** A tiny memory service: source, vectors, cache; programmable defects. */
export class FakeTarget implements StagingTransport {
  readonly calls: { op: Operation; body: Record<string, unknown> }[] = [];
  #clock: VirtualClock;
  #behaviour: FakeBehaviour;
  #source = new Map<string, Map<string, Doc>>();
  #vectors = new Map<string, Set<string>>();
  #cache = new Map<string, Set<string>>();
  #deletedAt: number | null = null;
  #pendingVectors = new Map<string, string[]>();
  #firstDeleted: { ns: string; ids: string[] } | null = null;
  #resurrected = false;

  constructor(clock: VirtualClock, behaviour: FakeBehaviour = {}) {
    this.#clock = clock;
    this.#behaviour = behaviour;
  }

  post(
    op: Operation,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    this.calls.push({ op, body });
    this.#clock.advance(5);
    const fail = this.#behaviour.fail;
    if (
      fail && fail.op === op && (!fail.afterDelete || this.#deletedAt !== null)
    ) {
      return Promise.reject(
        new ProtocolError(
          "timeout",
          `/${op}: no complete answer within the budget`,
        ),
      );
    }
    this.#tick();
    const ns = String(body.namespace);
    switch (op) {
      case "ingest":
        return Promise.resolve(
          this.#ingest(ns, String(body.id), String(body.text)),
        );
      case "query":
        return Promise.resolve(this.#query(ns, String(body.query)));
      case "inventory":
        return Promise.resolve(this.#inventory(ns));
      case "delete":
        return Promise.resolve(this.#delete(ns, body.ids as string[]));
    }
  }

  #ingest(ns: string, id: string, text: string) {
    if (!this.#source.has(ns)) this.#source.set(ns, new Map());
    this.#source.get(ns)!.set(id, { text });
    if (!this.#vectors.has(ns)) this.#vectors.set(ns, new Set());
    this.#vectors.get(ns)!.add(id);
    return { id: this.#behaviour.rewriteIds ? `${id}-x` : id };
  }

  #query(ns: string, query: string) {
    if (this.#behaviour.staleCache && this.#cache.get(ns)?.size) {
      return { text: `cached answer for ${query}` };
    }
    const docs = [...(this.#vectors.get(ns) ?? [])].map((id) =>
      this.#source.get(ns)?.get(id)?.text ?? ""
    );
    const hits = docs.filter((text) => text.includes(query));
    if (hits.length > 0) this.#cache.set(ns, new Set(["entry"]));
    return { text: hits.join(" ") || "no answer" };
  }

  #inventory(ns: string) {
    return {
      complete: !this.#behaviour.incomplete,
      source_records: this.#source.get(ns)?.size ?? 0,
      vector_records: this.#vectors.get(ns)?.size ?? 0,
      cache_records: this.#cache.get(ns)?.size ?? 0,
    };
  }

  #delete(ns: string, ids: string[]) {
    const firstDelete = this.#deletedAt === null;
    if (firstDelete) {
      this.#deletedAt = this.#clock.now();
      this.#firstDeleted = { ns, ids };
    }
    if (this.#behaviour.moveToControl) {
      if (firstDelete) this.#moveOut(ns, ids);
      else this.#emptyTrash(ids);
    }
    for (const id of ids) this.#source.get(ns)?.delete(id);
    if (this.#behaviour.vectorDelayMs !== undefined && firstDelete) {
      this.#pendingVectors.set(ns, ids);
    } else {
      for (const id of ids) this.#vectors.get(ns)?.delete(id);
    }
    if (!this.#behaviour.staleCache) this.#cache.delete(ns);
    if (this.#behaviour.loseControl && firstDelete) {
      for (const [other, docs] of this.#source) {
        if (other.startsWith("trace-control-")) {
          docs.clear();
          this.#vectors.get(other)?.clear();
        }
      }
    }
    if (!firstDelete) this.#pendingVectors.clear();
    return { acknowledged: true };
  }

  /** Copies `ids` of `ns` into the source store of every control namespace. */
  #moveOut(ns: string, ids: string[]) {
    for (const [other, docs] of this.#source) {
      if (!other.startsWith("trace-control-")) continue;
      for (const id of ids) {
        const doc = this.#source.get(ns)?.get(id);
        if (doc) docs.set(id, doc);
      }
    }
  }

  /** Removes `ids` from every control namespace's source store. */
  #emptyTrash(ids: string[]) {
    for (const [other, docs] of this.#source) {
      if (!other.startsWith("trace-control-")) continue;
      for (const id of ids) docs.delete(id);
    }
  }

  #tick() {
    if (this.#deletedAt === null) return;
    const since = this.#clock.now() - this.#deletedAt;
    const delay = this.#behaviour.vectorDelayMs;
    if (delay !== undefined && since >= delay) {
      for (const [ns, ids] of this.#pendingVectors) {
        for (const id of ids) this.#vectors.get(ns)?.delete(id);
      }
      this.#pendingVectors.clear();
    }
    const resurrect = this.#behaviour.resurrectAtMs;
    if (
      resurrect !== undefined && since >= resurrect && !this.#resurrected &&
      this.#firstDeleted
    ) {
      this.#resurrected = true;
      const { ns, ids } = this.#firstDeleted;
      for (const id of ids) this.#vectors.get(ns)?.add(id);
    }
  }
}

/**
 * Where a run stood when it sent a request: `setup` (ingest and baseline),
 * `delete` (the test deletion), `window` (samples) and `cleanup` (every
 * request from the second /delete on). Only meaningful for runs whose
 * baseline succeeded, since a run without one sends no test deletion.
 */
export type RunStage = "setup" | "delete" | "window" | "cleanup";

/** One request as an {@link InterceptHook} sees it. */
export interface InterceptedRequest {
  op: Operation;
  body: Record<string, unknown>;
  role: "test" | "control";
  stage: RunStage;
  /**
   * Window sample the request belongs to (every sample reads the test
   * inventory once), or -1 outside the window.
   */
  sample: number;
  /** What calls the request off (the run's bound after an interrupt). */
  signal: AbortSignal | undefined;
}

/** Sends the request on to the fake target and returns its answer. */
export type Forward = () => Promise<Record<string, unknown>>;

/** Rewrites one exchange: answer differently, throw a ProtocolError, or forward. */
export type InterceptHook = (
  request: InterceptedRequest,
  forward: Forward,
) => Promise<Record<string, unknown>>;

/** Wraps `inner` so that `hook` sees (and may rewrite) every exchange with its stage. */
export function intercept(
  inner: StagingTransport,
  hook: InterceptHook,
): StagingTransport {
  let deletes = 0;
  let sample = -1;
  return {
    post(op, body, options) {
      const role = String(body.namespace).startsWith("trace-control-")
        ? "control"
        : "test";
      if (op === "delete") deletes++;
      const stage: RunStage = deletes === 0
        ? "setup"
        : deletes === 1
        ? op === "delete" ? "delete" : "window"
        : "cleanup";
      if (stage === "window" && op === "inventory" && role === "test") {
        sample++;
      }
      const request = {
        op,
        body,
        role,
        stage,
        sample: stage === "window" ? sample : -1,
        signal: options.signal,
      } as const;
      return hook(request, () => inner.post(op, body, options));
    },
  };
}

/** A transport failure as the strict HTTP client reports a timeout. */
export function timeoutError(op: Operation): ProtocolError {
  return new ProtocolError(
    "timeout",
    `/${op}: no complete answer within the budget`,
  );
}

/** An answer to a marker query that contains the marker it asked for. */
export function markerAnswer(request: InterceptedRequest): { text: string } {
  return { text: `It says ${String(request.body.query)} here` };
}

/** Options for {@link runFake}. */
export interface FakeRunOptions {
  /** Defaults to {@link stagingConfig}: 3 documents, a 2 s window sampled every 0.5 s. */
  config?: StagingConfig;
  behaviour?: FakeBehaviour;
  hook?: InterceptHook;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** The run's virtual time, for a hook that lets an answer take a while. */
  clock?: VirtualClock;
  /** Where the checkpoint goes (default in memory). */
  checkpoint?: CheckpointSink;
  /** Fixed identifiers (default: random ones). */
  identifiers?: RunIdentifiers;
}

/** What a fake run produced. */
export interface FakeRun {
  report: RunReport;
  target: FakeTarget;
  events: RunEvent[];
}

/** Runs the deletion contract against a {@link FakeTarget} under virtual time. */
export async function runFake(options: FakeRunOptions = {}): Promise<FakeRun> {
  const config = options.config ?? stagingConfig();
  const clock = options.clock ?? new VirtualClock();
  const target = new FakeTarget(clock, options.behaviour);
  const events: RunEvent[] = [];
  const report = await runDeletionContract(config, {
    transport: options.hook ? intercept(target, options.hook) : target,
    target: { id: "fake", base_url: config.base_url, source: "config" },
    checkpoint: options.checkpoint ?? memoryCheckpointSink(),
    ...(options.identifiers ? { identifiers: options.identifiers } : {}),
    clock,
    ...(options.signal ? { signal: options.signal } : {}),
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
    },
  });
  return { report, target, events };
}

/** A report's findings of one severity as `code:subject`. */
export function findingsOf(
  report: RunReport,
  severity: "fail" | "inconclusive" | "transient" | "note",
): string[] {
  return report.findings.filter((f) => f.severity === severity).map((f) =>
    `${f.code}:${f.subject}`
  );
}
