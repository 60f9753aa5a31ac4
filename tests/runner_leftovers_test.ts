/**
 * Cleanup after the fact: the same sweep as a run's own cleanup, but over
 * inventories only, through the whole window, and ended by an interrupt.
 */

import assert from "node:assert/strict";
import { cleanUpLeftovers, type CleanupPoll } from "../lib/runner/leftovers.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const NAMESPACES = { test: "trace-test-x", control: "trace-control-x" };
const ISSUED = { test: ["trace-doc-1"], control: ["trace-doc-2"] };

async function leftTarget(options: { staleCache?: boolean } = {}) {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock, options);
  await target.post("ingest", {
    namespace: NAMESPACES.test,
    id: "trace-doc-1",
    text: "synthetic",
  });
  await target.post("ingest", {
    namespace: NAMESPACES.control,
    id: "trace-doc-2",
    text: "synthetic",
  });
  if (options.staleCache) {
    // The answer cache keeps this entry through every deletion.
    await target.post("query", {
      namespace: NAMESPACES.test,
      query: "synthetic",
    });
  }
  return { clock, target };
}

Deno.test("cleanUpLeftovers() deletes both namespaces and never queries a marker", async () => {
  const { clock, target } = await leftTarget();
  const polls: CleanupPoll[] = [];
  const cleanup = await cleanUpLeftovers(target, stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    clock,
    onPoll: (poll) => polls.push(poll),
  });
  assert.equal(cleanup.cleanup_complete, true);
  assert.deepEqual(cleanup.marker_seen, { test: null, control: null });
  assert.equal(cleanup.polls, 1);
  assert.deepEqual(polls.map((p) => p.index), [0]);
  assert.equal(polls[0]?.window_seconds, 2);
  const after = target.calls.slice(2).map((c) => c.op);
  assert.deepEqual(after, ["delete", "delete", "inventory", "inventory"]);
});

Deno.test("cleanUpLeftovers() polls through the window while records stay, and says what stays", async () => {
  const { clock, target } = await leftTarget({ staleCache: true });
  const cleanup = await cleanUpLeftovers(target, stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    clock,
  });
  assert.equal(cleanup.cleanup_complete, false);
  // Window 2 s, interval 0.5 s: polls at 0, 0.5, 1, 1.5 and 2 s.
  assert.equal(cleanup.polls, 5);
  assert.equal(cleanup.limit_seconds, 2);
  assert.equal(cleanup.interrupted, false);
  assert.deepEqual(cleanup.problems, [
    "cache_records 1 left in the test namespace after polling",
  ]);
});

Deno.test("cleanUpLeftovers() stops after one poll when interrupted, unlike a run's bounded polling", async () => {
  const { clock, target } = await leftTarget({ staleCache: true });
  const controller = new AbortController();
  controller.abort();
  const cleanup = await cleanUpLeftovers(target, stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    clock,
    signal: controller.signal,
  });
  assert.equal(cleanup.polls, 1);
  assert.equal(cleanup.interrupted, true);
  assert.equal(cleanup.limit_seconds, 2);
  assert.equal(cleanup.cleanup_complete, false);
});
