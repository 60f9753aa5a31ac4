/** A scriptable in-process staging target and a virtual clock for engine tests. */

import {
  type Operation,
  ProtocolError,
  type StagingTransport,
} from "../lib/contract/protocol.ts";
import type { Clock } from "../lib/runner/clock.ts";

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
