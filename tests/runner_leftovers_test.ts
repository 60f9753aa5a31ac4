/**
 * Cleanup after the fact: the same sweep as a run's own cleanup (marker
 * queries included when the run kept its markers, inventories only when it
 * did not), through the whole window, and ended by an interrupt.
 */

import assert from "node:assert/strict";
import type { StagingTransport } from "../lib/contract/protocol.ts";
import { MAX_REPEAT_DELETES, settleTimeMs } from "../lib/runner/_cleanup.ts";
import {
  cleanUpLeftovers,
  type CleanupPoll,
  leftoversPastBoundMs,
} from "../lib/runner/leftovers.ts";
import type { Sample } from "../lib/runner/report.ts";
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

Deno.test("cleanUpLeftovers() without the run's markers deletes both namespaces and never queries a marker", async () => {
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

const MARKERS = {
  test: "trace_canary_0123456789abcdefghjkmnpqrs",
  control: "trace_canary_tvwxyz0123456789abcdefgh",
};

Deno.test("cleanUpLeftovers() with the run's markers reads both namespaces as a run's own cleanup does, and is clean when neither marker is retrievable", async () => {
  const { clock, target } = await leftTarget();
  const polls: CleanupPoll[] = [];
  const cleanup = await cleanUpLeftovers(target, stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    markers: MARKERS,
    clock,
    onPoll: (poll) => polls.push(poll),
  });
  assert.equal(cleanup.cleanup_complete, true, cleanup.problems.join("; "));
  assert.deepEqual(cleanup.marker_seen, { test: false, control: false });
  assert.deepEqual(polls[0]?.marker_seen, { test: false, control: false });
  // Inventory first, then the namespace's own marker, as readNamespace reads.
  assert.deepEqual(target.calls.slice(4), [
    { op: "inventory", body: { namespace: NAMESPACES.test } },
    { op: "query", body: { namespace: NAMESPACES.test, query: MARKERS.test } },
    { op: "inventory", body: { namespace: NAMESPACES.control } },
    {
      op: "query",
      body: { namespace: NAMESPACES.control, query: MARKERS.control },
    },
  ]);
});

/** A soft delete: every inventory reads 0, yet search still returns the deleted canary's text. */
function softDeleted(): StagingTransport {
  return {
    post(op, body) {
      if (op === "delete") return Promise.resolve({ acknowledged: true });
      if (op === "query") {
        return Promise.resolve({
          text: body.namespace === NAMESPACES.test
            ? `Deletion probe ${MARKERS.test}.`
            : "no match",
        });
      }
      return Promise.resolve({
        complete: true,
        source_records: 0,
        vector_records: 0,
        cache_records: 0,
      });
    },
  };
}

Deno.test("cleanUpLeftovers() with the run's markers is incomplete while a marker is retrievable, though every store reads 0", async () => {
  const polls: CleanupPoll[] = [];
  const cleanup = await cleanUpLeftovers(softDeleted(), stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    markers: MARKERS,
    clock: new VirtualClock(),
    onPoll: (poll) => polls.push(poll),
  });
  assert.equal(cleanup.cleanup_complete, false);
  // Polled through the window, as for records that stay.
  assert.equal(cleanup.polls, 5);
  assert.deepEqual(cleanup.marker_seen, { test: true, control: false });
  assert.deepEqual(polls.at(-1)?.marker_seen, { test: true, control: false });
  assert.deepEqual(cleanup.problems, [
    "the test marker is still retrievable through /query after cleanup: the application still serves the deleted text; fix it, then run trace external-cleanup again",
  ]);
  // Without the markers the same application reads clean: retrieval unchecked.
  const blind = await cleanUpLeftovers(softDeleted(), stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    clock: new VirtualClock(),
  });
  assert.equal(blind.cleanup_complete, true);
  assert.deepEqual(blind.marker_seen, { test: null, control: null });
});

Deno.test("an interrupted cleanup that queries the markers may run a second longer per query past its bound", () => {
  assert.equal(leftoversPastBoundMs(true) - leftoversPastBoundMs(false), 2000);
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

/**
 * An application whose delayed re-index writes a namespace's vector back
 * one poll after each of its first `comebacks` deletions.
 */
function resurrecting(comebacks: number): StagingTransport {
  const deletes = new Map<string, number>();
  const sinceDelete = new Map<string, number>();
  return {
    post(op, body) {
      const namespace = String(body.namespace);
      if (op === "delete") {
        deletes.set(namespace, (deletes.get(namespace) ?? 0) + 1);
        sinceDelete.set(namespace, 0);
        return Promise.resolve({ acknowledged: true });
      }
      const polls = sinceDelete.get(namespace) ?? 0;
      sinceDelete.set(namespace, polls + 1);
      const back = polls >= 1 && (deletes.get(namespace) ?? 0) <= comebacks;
      return Promise.resolve({
        complete: true,
        source_records: 0,
        vector_records: back ? 1 : 0,
        cache_records: 0,
      });
    },
  };
}

/** A window whose vector read 0, then came back 1 s after the deletion. */
const CAME_BACK: Sample[] = [0, 0.5, 1, 1.5].map((at, index) => ({
  index,
  started_at_seconds: at,
  ended_at_seconds: at + 0.01,
  inventory: {
    complete: true,
    source_records: 0,
    vector_records: at >= 1 ? 1 : 0,
    cache_records: 0,
  },
  marker_seen: false,
  marker_form: null,
  marker_rendering: [],
  control_present: true,
  control_seen: true,
  control_form: null,
  errors: [],
}));

Deno.test("settleTimeMs() is when the window last saw a reading change", () => {
  assert.equal(settleTimeMs(CAME_BACK), 1000);
  assert.equal(settleTimeMs(CAME_BACK.slice(0, 2)), 0);
  assert.equal(settleTimeMs([]), 0);
});

Deno.test("a clean poll is trusted only after the window's settle time, and records that come back are deleted again", async () => {
  const clock = new VirtualClock();
  const polls: CleanupPoll[] = [];
  const cleanup = await cleanUpLeftovers(resurrecting(1), stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    samples: CAME_BACK,
    clock,
    onPoll: (poll) => polls.push(poll),
  });
  assert.equal(cleanup.cleanup_complete, true, cleanup.problems.join("; "));
  assert.deepEqual(
    cleanup.deletes.map((d) => d.namespace),
    ["test", "control", "test", "control"],
    "each namespace deleted again once its vector came back",
  );
  // 0 s clean but too soon, 0.5 s back (deleted again), 1 s clean but too
  // soon, 1.5 s clean 1 s after the last deletion: settled.
  assert.deepEqual(polls.map((p) => p.started_at_seconds), [0, 0.5, 1, 1.5]);
  assert.deepEqual(cleanup.remaining.control, {
    complete: true,
    source_records: 0,
    vector_records: 0,
    cache_records: 0,
  });
});

Deno.test("records that keep coming back are deleted again at most three times in each namespace, then reported as left", async () => {
  const clock = new VirtualClock();
  const cleanup = await cleanUpLeftovers(
    resurrecting(100),
    stagingConfig({ deletion_window_seconds: 10 }),
    { namespaces: NAMESPACES, issued: ISSUED, samples: CAME_BACK, clock },
  );
  assert.equal(cleanup.cleanup_complete, false);
  for (const role of ["test", "control"]) {
    assert.equal(
      cleanup.deletes.filter((d) => d.namespace === role).length,
      1 + MAX_REPEAT_DELETES,
      `${role}: one deletion, then at most ${MAX_REPEAT_DELETES} more`,
    );
    assert.match(
      cleanup.problems.join("; "),
      new RegExp(
        `vector_records 1 left in the ${role} namespace after polling`,
      ),
    );
  }
});

Deno.test("a last poll clean too soon after deleting records that came back does not complete the cleanup", async () => {
  const clock = new VirtualClock();
  // Window 2 s: deleted again at 0.5 s and 1.5 s, clean at 2 s, 0.5 s later.
  const cleanup = await cleanUpLeftovers(resurrecting(100), stagingConfig(), {
    namespaces: NAMESPACES,
    issued: ISSUED,
    samples: CAME_BACK,
    clock,
  });
  assert.equal(cleanup.cleanup_complete, false);
  assert.deepEqual(cleanup.problems, [
    "records came back after a clean poll (deleted again 4 time(s)), and the last poll, clean 0.5 s after the last deletion, came before the 1 s the window saw the counts change: they may come back again",
  ]);
});

Deno.test("a namespace that issued no id is never said to be deleted again", async () => {
  const clock = new VirtualClock();
  const polls: CleanupPoll[] = [];
  const cleanup = await cleanUpLeftovers(resurrecting(1), stagingConfig(), {
    namespaces: NAMESPACES,
    issued: { test: ["trace-doc-1"], control: [] },
    samples: CAME_BACK,
    clock,
    onPoll: (poll) => polls.push(poll),
  });
  assert.deepEqual(cleanup.deletes.map((d) => d.namespace), ["test", "test"]);
});

Deno.test("an interrupt calls off a deletion the adapter leaves hanging once its bound has passed: not acknowledged, cleanup incomplete", async () => {
  const { clock, target } = await leftTarget();
  const controller = new AbortController();
  const bounds: number[] = [];
  // Answers the test deletion only after 4 s, unless it is called off first.
  const hanging: StagingTransport = {
    post(op, body, options) {
      if (op !== "delete" || body.namespace !== NAMESPACES.test) {
        return target.post(op, body);
      }
      controller.abort();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => target.post(op, body).then(resolve, reject),
          4_000,
        );
        options.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(new Error("called off"));
        }, { once: true });
      });
    },
  };
  const cleanup = await cleanUpLeftovers(
    hanging,
    stagingConfig({
      deletion_window_seconds: 1,
      timeout_seconds: { ingest: 300, query: 300, inventory: 300, delete: 300 },
    }),
    {
      namespaces: NAMESPACES,
      issued: ISSUED,
      clock,
      signal: controller.signal,
      onInterrupt: (seconds) => bounds.push(seconds),
    },
  );
  // The 1 s bound, and a second for each request that may go out past it.
  assert.deepEqual(bounds, [1 + leftoversPastBoundMs(false) / 1000]);
  assert.deepEqual(
    cleanup.deletes.map((d) => [d.namespace, d.acknowledged]),
    [["test", false], ["control", true]],
    "the deletion not sent yet still goes out",
  );
  assert.equal(
    cleanup.deletes[0]!.error?.message,
    "Request /delete failed: no answer within the 1 s left after the interrupt, so the request was called off",
  );
  assert.equal(cleanup.polls, 1);
  assert.equal(cleanup.interrupted, true);
  assert.equal(cleanup.cleanup_complete, false);
  assert.match(
    cleanup.problems.join("; "),
    /the test deletion was not acknowledged: no answer within the 1 s left after the interrupt, so the request was called off/,
  );
});
