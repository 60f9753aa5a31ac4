/**
 * A write thread for a long-lived writer (the server). Ingest's inserts are
 * most of a batch's cost, and on the thread that serves requests they take
 * turns with parsing and validating the next batches: a server on a
 * machine with two cores or more left all but one idle. With a write
 * thread, each group's transaction runs on a worker with an engine
 * connection of its own (`_write_worker.ts`), from its first statement to
 * its commit, while this thread parses, validates and answers the next
 * requests.
 *
 * Nothing a batch is promised changes: group commit still takes the
 * waiting batches into one transaction (`_group_commit.ts`), the process's
 * other writes to the file wait for it as before (`holdWrites`), and a
 * batch is acknowledged once the thread reports its transaction committed.
 * Local files only, and only where ingest would write through an engine
 * connection (`engineConnection`); everything else writes as before.
 *
 * @module
 */

import { engineConnection, type TraceDb } from "../../db.ts";
import type { BatchPlan, BatchToWrite } from "./_plan.ts";
import { withRootTraceId } from "../normalize.ts";
import type {
  SentPlan,
  WriteThreadReply,
  WriteThreadRequest,
} from "./_write_thread_messages.ts";
import { NO_BACKGROUND_WORK, writerCheckpointPages } from "./checkpoints.ts";

/** A running write thread. */
export interface WriteThread {
  /** Lets the writes sent to the thread finish, then ends it; later writes run on the calling thread. */
  stop(): Promise<void>;
}

interface Pending {
  resolve: (plans: SentPlan[]) => void;
  reject: (error: Error) => void;
}

class Thread {
  readonly #db: TraceDb;
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #opened: (file: string | null) => void = () => {};
  #closed: () => void = () => {};
  #failed = false;
  #sent = 0;
  #onFailure: () => void;

  constructor(db: TraceDb, onFailure: () => void) {
    this.#db = db;
    this.#onFailure = onFailure;
    this.#worker = new Worker(
      new URL("./_write_worker.ts", import.meta.url),
      { type: "module" },
    );
    this.#worker.onmessage = (event: MessageEvent<WriteThreadReply>) =>
      this.#receive(event.data);
    this.#worker.onerror = (event) => {
      // Handled here: a thread that fails must not take the server with it.
      event.preventDefault();
      this.#fail(`the write thread failed: ${event.message}`);
    };
  }

  /** Opens the thread's connection; resolves with the file it reached (`null`: none). */
  open(path: string): Promise<string | null> {
    const opened = new Promise<string | null>((resolve) =>
      this.#opened = resolve
    );
    this.#send({ type: "open", path });
    return opened;
  }

  /** Groups sent to the thread so far. */
  get writesSent(): number {
    return this.#sent;
  }

  /** Writes a group on the thread; resolves once its transaction committed. */
  async write(batches: readonly BatchToWrite[]): Promise<BatchPlan[]> {
    // Ingest words a refused or unfinished write as a storage error.
    if (this.#failed) throw new Error("the write thread failed");
    const id = this.#nextId++;
    const sent = await new Promise<SentPlan[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      try {
        this.#send({
          type: "write",
          id,
          batches,
          checkpointPages: writerCheckpointPages(this.#db),
        });
        this.#sent++;
      } catch (error) {
        this.#pending.delete(id);
        throw error;
      }
    });
    return sent.map((plan, i) => withEvents(batches[i]!, plan));
  }

  /** Finishes the writes sent, closes the thread's connection and ends it. */
  async close(): Promise<void> {
    if (!this.#failed) {
      const closed = new Promise<void>((resolve) => this.#closed = resolve);
      this.#send({ type: "close" });
      await closed;
    }
    this.#worker.terminate();
    this.#rejectPending("the write thread stopped");
  }

  #send(message: WriteThreadRequest): void {
    this.#worker.postMessage(message);
  }

  #receive(reply: WriteThreadReply): void {
    switch (reply.type) {
      case "opened":
        return this.#opened(reply.file);
      case "closed":
        return this.#closed();
      case "written":
      case "failed": {
        const pending = this.#pending.get(reply.id);
        this.#pending.delete(reply.id);
        if (reply.type === "written") return pending?.resolve(reply.plans);
        return pending?.reject(new Error(reply.message));
      }
    }
  }

  #rejectPending(message: string): void {
    for (const { reject } of this.#pending.values()) {
      reject(new Error(message));
    }
    this.#pending.clear();
  }

  #fail(message: string): void {
    this.#failed = true;
    this.#worker.terminate();
    this.#onFailure();
    this.#rejectPending(message);
    this.#opened(null);
    this.#closed();
  }
}

/**
 * `plan` with the events of `batch` it names: the fresh rows are its items
 * that are not duplicates, each under the root the thread filed it under.
 */
function withEvents(batch: BatchToWrite, plan: SentPlan): BatchPlan {
  const fresh = plan.items.filter((item) => !item.duplicate)
    .map(({ seq, index }) => {
      const event = batch.events[index]!;
      const root = plan.roots?.[index];
      return { seq, event: root ? withRootTraceId(event, root) : event };
    });
  return { batch, fresh, items: plan.items, conflicts: plan.conflicts };
}

const running = new WeakMap<TraceDb, Thread>();

/** The write thread running for `db`, if any. */
export function writeThreadOf(db: TraceDb): Thread | undefined {
  return running.get(db);
}

/**
 * Moves the write transactions of `db` to a thread of their own until
 * stopped; a no-op where ingest writes through the client (remote,
 * in-memory and read-only databases), or when the thread cannot reach
 * the client's file. Starting twice for one handle returns the running one.
 */
export async function startWriteThread(db: TraceDb): Promise<WriteThread> {
  if (running.has(db)) return handleOf(db, running.get(db)!);
  const path = db.path;
  // This thread's engine connection already reaches the client's file.
  const here = path === null ? null : await engineConnection(db);
  if (path === null || !here) return NO_BACKGROUND_WORK;
  const thread = new Thread(db, () => {
    if (running.get(db) === thread) running.delete(db);
  });
  // A thread that cannot open resolves with null: writes stay on this thread.
  const ours = await thread.open(path);
  if (ours !== null && ours === here.file) {
    running.set(db, thread);
    return handleOf(db, thread);
  }
  await thread.close();
  return NO_BACKGROUND_WORK;
}

function handleOf(db: TraceDb, thread: Thread): WriteThread {
  return {
    stop: async () => {
      if (running.get(db) !== thread) return;
      // Writes from here on run on the calling thread. The thread takes its
      // messages in order: the writes sent before the close finish first.
      running.delete(db);
      await thread.close();
    },
  };
}
