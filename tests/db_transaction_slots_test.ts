/** Transactions of a local database client queue for a pooled connection, first come first served, with a bounded wait. */

import assert from "node:assert/strict";
import { DatabaseBusyError, migrate, openDb, type TraceDb } from "../lib/db.ts";
import { TransactionSlots } from "../lib/_db_transaction_slots.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { listAllRuns } from "../lib/runs/mod.ts";
import { withDb } from "./_helpers.ts";
import * as trace from "../mod.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

/** Opens a transaction of `mode`, reads through it across a turn of the event loop, and ends it. */
async function heldTransaction(
  db: TraceDb,
  mode: "read" | "deferred" | "write",
): Promise<number> {
  const tx = await db.client.transaction(mode);
  try {
    const row = (await tx.execute("SELECT 1 AS one")).rows[0]!;
    await tick();
    return Number(row.one);
  } finally {
    tx.close();
  }
}

Deno.test("openDb() queues 60 transactions asked for at once instead of refusing those past its pool", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    const modes = ["read", "deferred", "write"] as const;
    const opened = await Promise.all([
      ...Array.from(
        { length: 60 },
        (_, i) => heldTransaction(db, modes[i % 3]!),
      ),
      // Single statements still find a connection while transactions wait.
      ...Array.from({ length: 20 }, async () => {
        await tick();
        return Number(
          (await db.client.execute("SELECT 1 AS one")).rows[0]!.one,
        );
      }),
    ]);
    assert.deepEqual(opened, Array(80).fill(1));
  });
});

Deno.test("openDb() serves 40 ledger reads in flight at once, each verifying the chain in its own transaction", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const lists = await Promise.all(
      Array.from({ length: 40 }, () => listAllRuns(db, { dataDir })),
    );
    assert.ok(lists.every((list) => list.runs.length === 0));
  });
});

Deno.test("openDb() read-only queues its transactions too", async () => {
  await withDb(async (writer, dataDir) => {
    await migrate(writer, ALL_MIGRATIONS);
    const reader = await openDb({ dataDir, readOnly: true });
    try {
      const opened = await Promise.all(
        Array.from({ length: 40 }, () => heldTransaction(reader, "read")),
      );
      assert.deepEqual(opened, Array(40).fill(1));
    } finally {
      reader.close();
    }
  });
});

Deno.test("TransactionSlots hands a freed slot to the longest waiting caller, never to a newcomer", async () => {
  const slots = new TransactionSlots({ slots: 1 });
  const first = await slots.take();
  const order: string[] = [];
  const waiting = ["a", "b", "c"].map((name) =>
    slots.take().then((release) => {
      order.push(name);
      return release;
    })
  );
  assert.equal(slots.waiting, 3);
  first();
  first(); // A second release of the same slot frees nothing more.
  const a = await waiting[0]!;
  // A newcomer arriving now queues behind b and c.
  const late = slots.take().then((release) => {
    order.push("late");
    return release;
  });
  a();
  (await waiting[1]!)();
  (await waiting[2]!)();
  (await late)();
  assert.deepEqual(order, ["a", "b", "c", "late"]);
  assert.equal(slots.taken, 0);
  assert.equal(slots.waiting, 0);
});

Deno.test("TransactionSlots fails a wait past its bound with a busy error that says to retry, and keeps serving", async () => {
  const slots = new TransactionSlots({ slots: 2, waitMs: 20 });
  const held = [await slots.take(), await slots.take()];
  await assert.rejects(slots.take(), (error: unknown) => {
    assert.ok(error instanceof DatabaseBusyError);
    assert.equal(error.code, "storage");
    assert.equal(
      error.message,
      "Cannot open a database transaction: all 2 this process may hold at once stayed busy for 0.02 s; retry in a moment",
    );
    return true;
  });
  assert.equal(slots.waiting, 0, "the timed-out caller left the queue");
  held[0]!();
  const next = await slots.take();
  next();
  held[1]!();
  assert.equal(slots.taken, 0);
});

Deno.test("TransactionSlots lets its waiters through when the client closes, for the client to refuse", async () => {
  const slots = new TransactionSlots({ slots: 1 });
  const held = await slots.take();
  const waiter = slots.take();
  slots.close();
  (await waiter)();
  held();
});

Deno.test("DatabaseBusyError is exported by name from mod.ts, a StorageError with the code storage", () => {
  assert.equal(trace.DatabaseBusyError, DatabaseBusyError);
  const error = new trace.DatabaseBusyError(16, 30_000);
  assert.ok(error instanceof trace.StorageError);
  assert.ok(error instanceof trace.TraceError);
  assert.equal(error.name, "DatabaseBusyError");
  assert.equal(error.code, "storage");
});
