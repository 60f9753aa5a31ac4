/**
 * Background checkpoints for a long-lived writer (the server) and for a
 * large write in several transactions (a file ingested in batches). In WAL
 * mode SQLite copies the WAL back into the database file every 1,000 pages,
 * on the connection whose commit crossed the bound, and waits for the disk
 * twice while it does: a few megabytes of ingest later, one request holds
 * the thread for a hundred milliseconds or more. With background
 * checkpoints a worker thread with a connection of its own does that copy
 * (a passive checkpoint, which never waits for the writer) shortly after
 * commits, and ingest's own connection checkpoints only past a much larger
 * bound ({@link FALLBACK_CHECKPOINT_PAGES}), should the worker fall behind.
 *
 * Durability does not change: a batch is acknowledged once its transaction
 * has committed, whoever copies the WAL later. Local files only; a remote
 * server checkpoints on its own.
 *
 * Some work waits for the WAL to be truncated, not only copied: an erasure's
 * text may stay in old WAL frames until then ({@link WalTruncation}). While
 * it waits, the worker's checkpoints truncate the WAL (without waiting for
 * the writer or readers, so never stalling ingest), retried on later commits
 * and every {@link TRUNCATE_RETRY_MS} while they do not complete. An erasure
 * the server applies asks the worker for its truncations too
 * ({@link backgroundTruncation}): on the serving thread a checkpoint would
 * wait there for a reader up to the busy timeout.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";

/** Pages the writer's connection lets the WAL hold before checkpointing itself, with the worker on. */
export const FALLBACK_CHECKPOINT_PAGES = 16_384;
/** SQLite's default bound, restored when no worker runs. */
export const DEFAULT_CHECKPOINT_PAGES = 1_000;
/** Least time between two background checkpoints while commits keep coming. */
const CHECKPOINT_INTERVAL_MS = 200;
/** How soon a truncating checkpoint that did not complete is tried again without a commit. */
export const TRUNCATE_RETRY_MS = 1_000;

/**
 * Work waiting for the WAL to be truncated after it (erasures whose text
 * may be in old frames until then). Asked before each background
 * checkpoint, which truncates while something waits.
 */
export interface WalTruncation {
  /** A mark of what waits now (the newest waiting erasure), or `null` when nothing does. */
  waiting(): Promise<number | null>;
  /** A truncating checkpoint that began after `mark` was read completed; a throw only leaves it waiting. */
  reached(mark: number): Promise<void>;
}

/** Options for {@link startBackgroundCheckpoints}. */
export interface BackgroundCheckpointOptions {
  /** What waits for a truncated WAL; without it the worker only copies. */
  truncation?: WalTruncation;
}

/** A running background checkpointer. */
export interface BackgroundCheckpoints {
  /** Copies what is still owed, then ends the worker (the caller's own final checkpoint then finds little to do). */
  stop(): Promise<void>;
}

/** What starting background work returns where none runs: stopping it does nothing. */
export const NO_BACKGROUND_WORK: BackgroundCheckpoints = {
  stop: () => Promise.resolve(),
};

/** Checkpoint workers started and not yet ended. */
let liveWorkers = 0;

/** How many checkpoint worker threads this process runs now (a command must end each it starts). */
export function liveCheckpointWorkers(): number {
  return liveWorkers;
}

class Checkpointer {
  readonly #worker: Worker;
  readonly #truncation: WalTruncation | undefined;
  #running = false;
  #pending = false;
  #stopping = false;
  #lastStart = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** What the running checkpoint truncates for, or `null` when it only copies. */
  #mark: number | null = null;
  /** Callers of {@link truncate} the next checkpoint answers. */
  #asked: ((complete: boolean) => void)[] = [];
  /** Callers the running checkpoint answers. */
  #answering: ((complete: boolean) => void)[] = [];
  #idle: Promise<void> = Promise.resolve();
  #finished: () => void = () => {};
  readonly #closed: Promise<void>;
  #onClosed: () => void = () => {};

  /** `onFailure`: the worker could not load or failed; the writer checkpoints alone again. */
  constructor(
    url: string,
    onFailure: () => void,
    truncation: WalTruncation | undefined,
  ) {
    this.#truncation = truncation;
    this.#worker = new Worker(
      new URL("./_checkpoint_worker.ts", import.meta.url),
      { type: "module" },
    );
    this.#closed = new Promise((resolve) => this.#onClosed = resolve);
    liveWorkers += 1;
    void this.#closed.then(() => liveWorkers -= 1);
    this.#worker.onerror = (event) => {
      // Handled here: a checkpointer that fails must not take the server with it.
      event.preventDefault();
      this.#stopping = true;
      this.#pending = false;
      clearTimeout(this.#retry);
      this.#answer(false, [...this.#answering, ...this.#asked]);
      this.#finished();
      this.#onClosed();
      onFailure();
    };
    this.#worker.onmessage = (event) => {
      if (event.data === "closed") return this.#onClosed();
      void this.#ended(event.data === "truncated");
    };
    this.#worker.postMessage({ url });
    // Something may wait from before this process (an interrupted erasure).
    if (truncation) this.committed();
  }

  /** A checkpoint ended: settle what a completed truncation covered, or try again later. */
  async #ended(truncated: boolean): Promise<void> {
    const mark = this.#mark;
    this.#mark = null;
    if (mark !== null && truncated) {
      await this.#truncation?.reached(mark).catch(() => {});
    } else if (mark !== null && !this.#stopping) {
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.committed();
      }, TRUNCATE_RETRY_MS);
    }
    this.#running = false;
    this.#answer(truncated, this.#answering);
    this.#finished();
    if (this.#pending && !this.#stopping) this.committed();
  }

  #answer(complete: boolean, callers: ((complete: boolean) => void)[]): void {
    for (const answer of callers.splice(0)) answer(complete);
  }

  /**
   * A truncating checkpoint that begins after this call (once the running
   * one ends), without waiting for a reader or the writer: whether it
   * completed, and with it settled what waited for it.
   */
  truncate(): Promise<boolean> {
    if (this.#stopping) return Promise.resolve(false);
    const answered = new Promise<boolean>((resolve) =>
      this.#asked.push(resolve)
    );
    if (this.#running) {
      this.#pending = true;
    } else {
      // Asked for now: the interval between commits' checkpoints does not apply.
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#run();
    }
    return answered;
  }

  /** A transaction committed: checkpoint soon, at most once per interval. */
  committed(): void {
    if (this.#running || this.#timer !== undefined) {
      this.#pending = true;
      return;
    }
    const wait = this.#lastStart + CHECKPOINT_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.#pending = true;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#run();
      }, wait);
      return;
    }
    this.#run();
  }

  #run(): void {
    this.#pending = false;
    this.#running = true;
    this.#answering = this.#asked.splice(0);
    this.#lastStart = performance.now();
    this.#idle = new Promise((resolve) => this.#finished = resolve);
    void this.#start();
  }

  /** Asks what waits for a truncated WAL (read before the checkpoint begins), then checkpoints. */
  async #start(): Promise<void> {
    this.#mark = await this.#truncation?.waiting().catch(() => null) ?? null;
    const truncate = this.#mark !== null || this.#answering.length > 0;
    this.#worker.postMessage(truncate ? "truncate" : "checkpoint");
  }

  /** Runs a checkpoint still owed, then closes the worker's connection and ends it. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#idle;
    if (this.#pending) {
      this.#run();
      await this.#idle;
    }
    this.#answer(false, this.#asked);
    this.#worker.postMessage("close");
    await this.#closed;
    this.#worker.terminate();
  }
}

const running = new WeakMap<TraceDb, Checkpointer>();

/**
 * Moves the WAL checkpoints of `db` to a worker thread until stopped (a
 * no-op for remote and read-only databases). Starting twice for one handle
 * returns the running one.
 */
export function startBackgroundCheckpoints(
  db: TraceDb,
  options: BackgroundCheckpointOptions = {},
): BackgroundCheckpoints {
  if (db.path === null || db.readOnly) return NO_BACKGROUND_WORK;
  const checkpointer = running.get(db) ??
    new Checkpointer(db.url, () => {
      if (running.get(db) === checkpointer) running.delete(db);
    }, options.truncation);
  running.set(db, checkpointer);
  return {
    stop: async () => {
      if (running.get(db) !== checkpointer) return;
      running.delete(db);
      await checkpointer.stop();
    },
  };
}

/**
 * Events from which a write in several transactions (a file ingested in
 * batches) gains from {@link startBulkCheckpoints}: below it, starting the
 * worker costs about what it saves (measured with `trace events ingest`:
 * 20,000 events break even, 40,000 gain 3 to 10%, 100,000 about 10%).
 */
export const BULK_CHECKPOINT_EVENTS = 20_000;

/**
 * Background checkpoints for a write of `events` events in several
 * transactions, from {@link BULK_CHECKPOINT_EVENTS} on; below, a no-op and
 * the writer checkpoints as SQLite does.
 */
export function startBulkCheckpoints(
  db: TraceDb,
  events: number,
): BackgroundCheckpoints {
  return events >= BULK_CHECKPOINT_EVENTS
    ? startBackgroundCheckpoints(db)
    : NO_BACKGROUND_WORK;
}

/** The WAL bound of the writer's connection for `db`: larger while a worker checkpoints. */
export function writerCheckpointPages(db: TraceDb): number {
  return running.has(db) ? FALLBACK_CHECKPOINT_PAGES : DEFAULT_CHECKPOINT_PAGES;
}

/**
 * The background checkpointer's truncation for `db`, or `null` when none
 * runs: each call runs a truncating checkpoint on the worker (after the one
 * running, if any), which never waits for a reader or the writer, and
 * answers whether it completed. A caller on the thread that serves requests
 * uses it instead of a checkpoint of its own, which would wait there for a
 * reader up to the busy timeout.
 */
export function backgroundTruncation(
  db: TraceDb,
): (() => Promise<boolean>) | null {
  const checkpointer = running.get(db);
  return checkpointer ? () => checkpointer.truncate() : null;
}

/** Tells `db`'s background checkpointer, if any, that a transaction committed. */
export function noteCommit(db: TraceDb): void {
  running.get(db)?.committed();
}
