/**
 * Reads of one database take turns: one at a time, in arrival order, with
 * the event loop let through once a slice of reading has passed, and
 * health's samples out of line.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import {
  inTurn,
  outOfTurn,
  READ_SLICE_MS,
  readsInLine,
} from "../lib/obs/query/_turns.ts";

const fakeDb = () => ({}) as TraceDb;

/** Holds the calling thread, as a local statement does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

Deno.test("reads of one database run one at a time, in arrival order", async () => {
  const db = fakeDb();
  const log: string[] = [];
  const read = (name: string) =>
    inTurn(db, async () => {
      log.push(`${name} start`);
      // A read that awaits in the middle must still not let another in.
      await new Promise((resolve) => setTimeout(resolve, 1));
      log.push(`${name} end`);
      return name;
    });
  const all = Promise.all([read("a"), read("b"), read("c")]);
  assert.equal(readsInLine(db), 3);
  assert.deepEqual(await all, ["a", "b", "c"]);
  assert.deepEqual(log, [
    "a start",
    "a end",
    "b start",
    "b end",
    "c start",
    "c end",
  ]);
  assert.equal(readsInLine(db), 0);
});

Deno.test("past a slice of reading, a timer set meanwhile runs before the next read", async () => {
  const db = fakeDb();
  const log: string[] = [];
  const read = (name: string) =>
    inTurn(db, () => {
      log.push(name);
      busy(READ_SLICE_MS + 5);
      return Promise.resolve();
    });
  const reads = Promise.all([read("a"), read("b"), read("c")]);
  setTimeout(() => log.push("timer"), 0);
  await reads;
  // Without turns the three reads would run back to back before the timer.
  assert.deepEqual(log.slice(0, 2), ["a", "timer"]);
  assert.deepEqual(log.filter((entry) => entry !== "timer"), ["a", "b", "c"]);
});

Deno.test("separate databases do not wait for each other", async () => {
  const first = fakeDb();
  const second = fakeDb();
  let release!: () => void;
  const held = inTurn(first, () => new Promise<void>((r) => release = r));
  assert.equal(await inTurn(second, () => Promise.resolve("free")), "free");
  release();
  await held;
});

Deno.test("reads out of turn do not wait for the line", async () => {
  const db = fakeDb();
  let release!: () => void;
  const held = inTurn(db, () => new Promise<void>((r) => release = r));
  const queued = inTurn(db, () => Promise.resolve("queued"));
  const sample = await outOfTurn(() =>
    inTurn(db, () => Promise.resolve("sample"))
  );
  assert.equal(sample, "sample");
  assert.equal(readsInLine(db), 2);
  release();
  assert.equal(await queued, "queued");
  await held;
});

Deno.test("a failed read hands the line on", async () => {
  const db = fakeDb();
  const failed = inTurn(db, () => Promise.reject(new Error("no such table")));
  const next = inTurn(db, () => Promise.resolve("next"));
  await assert.rejects(failed, /no such table/);
  assert.equal(await next, "next");
  assert.equal(readsInLine(db), 0);
});

Deno.test("one caller reading in a loop lets a timer through once it has read for a slice", async () => {
  const db = fakeDb();
  const log: string[] = [];
  setTimeout(() => log.push("timer"), 0);
  for (const name of ["a", "b", "c"]) {
    await inTurn(db, () => {
      log.push(name);
      busy(READ_SLICE_MS + 5);
      return Promise.resolve();
    });
  }
  // Without the slice the three reads would run in one turn of the loop.
  assert.deepEqual(log.slice(0, 2), ["a", "timer"]);
});

Deno.test("a read inside a read's turn runs at once instead of waiting for itself", async () => {
  const db = fakeDb();
  const inner = await inTurn(
    db,
    () => inTurn(db, () => Promise.resolve("inner")),
  );
  assert.equal(inner, "inner");
  assert.equal(readsInLine(db), 0);
});
