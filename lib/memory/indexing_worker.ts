/**
 * The only writer of the vector index. Jobs go into a FIFO queue that is
 * drained on a microtask, so writers never touch the index inline; `submit`
 * resolves once that job has been applied, which is how ingest can still be
 * visible on return. `submitAfter` parks a job on the scheduler first, which
 * is where delayed propagation and late re-indexing come from.
 *
 * @module
 */

import type { Embedder } from "./embedding.ts";
import type { Scheduler, TimerId } from "./scheduler.ts";
import type { VectorIndex } from "./vector_index.ts";

/** Work the indexing worker understands. */
export type IndexJob =
  /** Embed `text` and store it under `id`. */
  | { kind: "upsert"; namespace: string; id: string; text: string }
  /** Delete vectors physically (`hard`) or as tombstones (`soft`). */
  | {
    kind: "remove";
    namespace: string;
    ids: readonly string[];
    mode: "hard" | "soft";
  }
  /**
   * Re-embed `ids` from whatever `resolve` returns when the job runs;
   * `undefined` means the document is gone and the id is skipped.
   */
  | {
    kind: "reindex";
    namespace: string;
    ids: readonly string[];
    resolve: (id: string) => string | undefined;
  };

/** What an applied job did, for tracing and tests. */
export interface AppliedJob {
  kind: IndexJob["kind"];
  namespace: string;
  /** Ids whose vectors the job wrote or deleted. */
  ids: string[];
  at: number;
}

/** Options for {@link IndexingWorker}. */
export interface IndexingWorkerOptions {
  embedder: Embedder;
  scheduler: Scheduler;
  /** Called after each job is applied. */
  onApplied?: (job: AppliedJob) => void;
}

interface QueuedJob {
  job: IndexJob;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Asynchronous queue in front of a {@link VectorIndex}. */
export class IndexingWorker {
  #index: VectorIndex;
  #options: IndexingWorkerOptions;
  #queue: QueuedJob[] = [];
  #timers = new Set<TimerId>();
  #idleWaiters: (() => void)[] = [];
  #drainScheduled = false;
  #closed = false;

  constructor(index: VectorIndex, options: IndexingWorkerOptions) {
    this.#index = index;
    this.#options = options;
  }

  /** Queues a job; resolves once it has been applied to the index. */
  submit(job: IndexJob): Promise<void> {
    if (this.#closed) {
      return Promise.reject(
        new Error("Cannot queue indexing job: the worker is closed"),
      );
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ job, resolve, reject });
      this.#scheduleDrain();
    });
  }

  /** Queues a job after `delayMs` on the scheduler; nobody awaits it (background work). */
  submitAfter(delayMs: number, job: IndexJob): void {
    if (this.#closed) return;
    const id = this.#options.scheduler.setTimeout(() => {
      this.#timers.delete(id);
      // A failed background job has no caller to report to; the next sample shows its effect.
      this.submit(job).catch(() => {});
    }, delayMs);
    this.#timers.add(id);
  }

  /** Jobs waiting on the scheduler. */
  get delayed(): number {
    return this.#timers.size;
  }

  /** Resolves when the queue is empty (delayed jobs are not waited for). */
  idle(): Promise<void> {
    if (this.#queue.length === 0 && !this.#drainScheduled) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Cancels delayed jobs and refuses queued ones; no timer outlives this call. */
  close(): void {
    this.#closed = true;
    for (const id of this.#timers) this.#options.scheduler.clearTimeout(id);
    this.#timers.clear();
    const dropped = this.#queue.splice(0);
    for (const item of dropped) {
      item.reject(
        new Error("Cannot apply indexing job: the worker was closed"),
      );
    }
  }

  #scheduleDrain(): void {
    if (this.#drainScheduled) return;
    this.#drainScheduled = true;
    queueMicrotask(() => this.#drain());
  }

  #drain(): void {
    this.#drainScheduled = false;
    for (let item = this.#queue.shift(); item; item = this.#queue.shift()) {
      try {
        const ids = this.#apply(item.job);
        this.#options.onApplied?.({
          kind: item.job.kind,
          namespace: item.job.namespace,
          ids,
          at: this.#options.scheduler.now(),
        });
        item.resolve();
      } catch (error) {
        item.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  #apply(job: IndexJob): string[] {
    switch (job.kind) {
      case "upsert":
        this.#index.upsert(
          job.namespace,
          job.id,
          this.#options.embedder.embed(job.text),
        );
        return [job.id];
      case "remove":
        return job.mode === "soft"
          ? this.#index.tombstone(job.namespace, job.ids)
          : this.#index.remove(job.namespace, job.ids);
      case "reindex":
        return job.ids.filter((id) => {
          const text = job.resolve(id);
          if (text !== undefined) {
            this.#index.upsert(
              job.namespace,
              id,
              this.#options.embedder.embed(text),
            );
          }
          return text !== undefined;
        });
    }
  }
}
