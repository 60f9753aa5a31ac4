/// <reference lib="deno.worker" />
/**
 * The write thread of `write_thread.ts`: its own engine connection to the
 * database file, running each group's transaction (`_write_group.ts`) from
 * first statement to commit without giving way, since nothing else runs
 * here. Private to `ingest/`.
 *
 * @module
 */

import { EngineConnection } from "../../_db_engine.ts";
import { beginEngineWrite } from "./_engine_write.ts";
import { writeGroupOn, type WriteHost } from "./_write_group.ts";
import type { BatchPlan } from "./_plan.ts";
import type {
  SentPlan,
  WriteThreadReply,
  WriteThreadRequest,
} from "./_write_thread_messages.ts";

let engine: EngineConnection | null = null;

function reply(message: WriteThreadReply): void {
  self.postMessage(message);
}

function hostOn(connection: EngineConnection, pages: number): WriteHost {
  // Nothing else runs on this thread: the transaction never gives way.
  return {
    hold: (work) => work(),
    begin: () => Promise.resolve(beginEngineWrite(connection, pages)),
    givesWay: false,
  };
}

/** The message being handled: the next waits for it (see `onmessage`). */
let handled: Promise<void> = Promise.resolve();

// A handler that awaits can see the next message arrive between its
// awaits: messages are handled strictly one after the other instead, so a
// close sent after a write finds that write committed.
self.onmessage = (event: MessageEvent<WriteThreadRequest>) => {
  handled = handled.then(() => handle(event.data));
};

// An error that escapes ends this thread: its transaction must not keep
// SQLite's write lock for the rest of the process's life.
self.addEventListener("error", abandon);
self.addEventListener("unhandledrejection", abandon);

/** Rolls back the transaction left open, if any, and closes the connection. */
function abandon(): void {
  const connection = engine;
  engine = null;
  try {
    if (connection?.inTransaction) connection.exec("ROLLBACK");
  } catch {
    // Closing below ends the transaction with the connection.
  }
  try {
    connection?.close();
  } catch {
    // Nothing more this thread can do: it is ending.
  }
}

async function handle(message: WriteThreadRequest): Promise<void> {
  switch (message.type) {
    case "open":
      engine = EngineConnection.openFile(message.path);
      return reply({ type: "opened", file: engine?.file ?? null });
    case "write": {
      const { id, batches, checkpointPages } = message;
      try {
        if (!engine) throw new Error("the write thread has no connection");
        const plans = await writeGroupOn(
          hostOn(engine, checkpointPages),
          batches,
        );
        return reply({
          type: "written",
          id,
          plans: plans.map(sentPlan),
        });
      } catch (error) {
        return reply({
          type: "failed",
          id,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    case "close":
      engine?.close();
      engine = null;
      return reply({ type: "closed" });
  }
}

/**
 * What goes back of `plan`: its items and conflicts, and the roots it filed
 * rootless children under, which the caller's copy of the events lacks.
 */
function sentPlan(plan: BatchPlan): SentPlan {
  const { items, conflicts, fresh, batch } = plan;
  // A repeat within the batch shares its first copy's seq: the first is the fresh one.
  const indexOf = new Map(
    items.filter((item) => !item.duplicate).map((
      item,
    ) => [item.seq, item.index]),
  );
  const roots: Record<number, string> = {};
  for (const { seq, event } of fresh) {
    const index = indexOf.get(seq)!;
    const root = event.meta.root_trace_id;
    if (batch.events[index]!.meta.root_trace_id !== root) roots[index] = root;
  }
  return Object.keys(roots).length > 0
    ? { items, conflicts, roots }
    : { items, conflicts };
}
