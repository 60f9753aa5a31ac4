import assert from "node:assert/strict";
import type { Inventory } from "../lib/contract/protocol.ts";
import { DEFECT_INFO, DEFECTS } from "../lib/demo/defects.ts";
import {
  MemoryService,
  type MemoryServiceOptions,
  NO_MATCH_ANSWER,
} from "../lib/demo/memory_service.ts";
import { ManualScheduler } from "../lib/memory/scheduler.ts";

const TEST_NS = "trace-test-a1";
const CONTROL_NS = "trace-control-b2";
const MARKER = "trace_canary_5f1e";
const CONTROL_MARKER = "trace_canary_c0c0";

function counts(inventory: Inventory): [number, number, number] {
  return [
    inventory.source_records,
    inventory.vector_records,
    inventory.cache_records,
  ];
}

/** A service on a manual clock, closed afterwards so no job outlives the test. */
async function withService(
  options: MemoryServiceOptions,
  fn: (service: MemoryService, clock: ManualScheduler) => void | Promise<void>,
): Promise<void> {
  const clock = new ManualScheduler(1_000);
  const service = new MemoryService({
    delayMs: 50,
    ...options,
    scheduler: clock,
  });
  try {
    await fn(service, clock);
  } finally {
    service.close();
  }
}

/** Runs due delayed jobs, then lets the worker drain them. */
async function elapse(
  service: MemoryService,
  clock: ManualScheduler,
  ms: number,
): Promise<void> {
  clock.advance(ms);
  await service.settled();
}

/** Ingests one test document and one control document, then warms both caches. */
async function seed(service: MemoryService): Promise<void> {
  await service.ingest(
    TEST_NS,
    "trace-doc-1",
    `Synthetic note one ${MARKER}`,
  );
  await service.ingest(
    CONTROL_NS,
    "trace-doc-c",
    `Synthetic control ${CONTROL_MARKER}`,
  );
  service.query(TEST_NS, MARKER);
  service.query(CONTROL_NS, CONTROL_MARKER);
}

Deno.test("MemoryService runs the healthy lifecycle: ingest, query, inventory, delete", async () => {
  await withService({}, async (service, clock) => {
    assert.deepEqual(
      await service.ingest(TEST_NS, "trace-doc-1", `Synthetic ${MARKER}`),
      { id: "trace-doc-1" },
    );
    const first = service.query(TEST_NS, MARKER);
    assert.ok(first.text.includes(MARKER));
    assert.equal(first.cached, false);
    assert.deepEqual(first.docIds, ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [1, 1, 1]);
    assert.equal(service.inventory(TEST_NS).complete, true);

    const summary = await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(summary.namespaces, [TEST_NS]);
    assert.deepEqual(summary.cacheEntries, [first.cacheEntryId]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
    assert.equal(service.query(TEST_NS, MARKER).text, NO_MATCH_ANSWER);

    // The post-delete re-index pass re-reads the source, so nothing comes back.
    await elapse(service, clock, 1_000);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("MemoryService.query() serves a repeated query from the cache entry it names", async () => {
  await withService({}, async (service) => {
    await service.ingest(TEST_NS, "trace-doc-1", `Synthetic ${MARKER}`);
    const first = service.query(TEST_NS, MARKER);
    const again = service.query(TEST_NS, `  ${MARKER.toUpperCase()} `);
    assert.equal(again.cached, true);
    assert.equal(again.cacheEntryId, first.cacheEntryId);
    assert.equal(again.text, first.text);
  });
});

Deno.test("MemoryService.ingest() drops cached answers of its namespace", async () => {
  await withService({}, async (service) => {
    await service.ingest(TEST_NS, "trace-doc-1", `First ${MARKER}`);
    service.query(TEST_NS, MARKER);
    await service.ingest(TEST_NS, "trace-doc-2", `Second ${MARKER}`);
    assert.equal(service.inventory(TEST_NS).cache_records, 0);
    const answer = service.query(TEST_NS, MARKER);
    assert.equal(answer.cached, false);
    assert.deepEqual(answer.docIds.toSorted(), ["trace-doc-1", "trace-doc-2"]);
  });
});

Deno.test("MemoryService.query() caches nothing when no document matches", async () => {
  await withService({}, (service) => {
    const answer = service.query(TEST_NS, MARKER);
    assert.equal(answer.text, NO_MATCH_ANSWER);
    assert.equal(answer.cacheEntryId, null);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("MemoryService keeps namespaces isolated, even under the same id", async () => {
  await withService({}, async (service) => {
    await service.ingest(TEST_NS, "trace-doc-1", `Test ${MARKER}`);
    await service.ingest(
      CONTROL_NS,
      "trace-doc-1",
      `Control ${CONTROL_MARKER}`,
    );
    assert.ok(!service.query(CONTROL_NS, MARKER).text.includes(MARKER));
    assert.ok(
      !service.query(TEST_NS, CONTROL_MARKER).text.includes(CONTROL_MARKER),
    );
    await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(CONTROL_NS)), [1, 1, 0]);
    assert.ok(
      service.query(CONTROL_NS, CONTROL_MARKER).text.includes(CONTROL_MARKER),
    );
  });
});

Deno.test("MemoryService.delete() removes only the supplied ids", async () => {
  await withService({}, async (service) => {
    await service.ingest(TEST_NS, "trace-doc-1", `One ${MARKER}`);
    await service.ingest(TEST_NS, "trace-doc-2", "Two trace_canary_0002");
    service.query(TEST_NS, MARKER);
    service.query(TEST_NS, "trace_canary_0002");
    await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [1, 1, 1]);
    const kept = service.query(TEST_NS, "trace_canary_0002");
    assert.equal(kept.cached, true);
    assert.deepEqual(kept.docIds, ["trace-doc-2"]);
  });
});

Deno.test("MemoryService.delete() treats unknown ids as a no-op", async () => {
  await withService({}, async (service, clock) => {
    await seed(service);
    const summary = await service.delete(TEST_NS, ["trace-doc-unknown"]);
    assert.equal(summary.acknowledged, true);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [1, 1, 1]);
    assert.equal(clock.pending, 0, "no re-index job for untouched ids");
    await service.delete("trace-test-empty", ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [1, 1, 1]);
  });
});

Deno.test("MemoryService with stale-cache keeps answering from the cache after repeated deletes", async () => {
  await withService({ defect: "stale-cache" }, async (service, clock) => {
    await seed(service);
    await service.delete(TEST_NS, ["trace-doc-1"]);
    await service.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(service, clock, 1_000);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 1]);
    const answer = service.query(TEST_NS, MARKER);
    assert.equal(answer.cached, true);
    assert.ok(answer.text.includes(MARKER));
  });
});

Deno.test("MemoryService with vector-resurrect re-adds the vector after the delay, and a later delete removes it", async () => {
  await withService({ defect: "vector-resurrect" }, async (service, clock) => {
    await seed(service);
    await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
    await elapse(service, clock, 49);
    assert.equal(service.inventory(TEST_NS).vector_records, 0);
    await elapse(service, clock, 1);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 1, 0]);
    await elapse(service, clock, 1_000);
    assert.equal(
      service.inventory(TEST_NS).vector_records,
      1,
      "nothing removes it again",
    );

    await service.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(service, clock, 1_000);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
    assert.deepEqual(counts(service.inventory(CONTROL_NS)), [1, 1, 1]);
  });
});

Deno.test("MemoryService with slow-vector removes the vector only after the delay", async () => {
  await withService({ defect: "slow-vector" }, async (service, clock) => {
    await seed(service);
    await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 1, 0]);
    // The lingering vector has no source left, so the answer cannot quote it.
    assert.ok(!service.query(TEST_NS, MARKER).text.includes(MARKER));
    await elapse(service, clock, 50);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("MemoryService with soft-delete reports zero records yet still retrieves the marker", async () => {
  await withService({ defect: "soft-delete" }, async (service, clock) => {
    await seed(service);
    await service.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(service, clock, 1_000);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
    const answer = service.query(TEST_NS, MARKER);
    assert.equal(answer.cached, false);
    assert.ok(answer.text.includes(MARKER));
  });
});

Deno.test("MemoryService with lost-control wipes every namespace of the tenant", async () => {
  await withService({ defect: "lost-control" }, async (service) => {
    await seed(service);
    await service.ingest("other-tenant", "doc-x", "Unrelated tenant text");
    const summary = await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(summary.namespaces.toSorted(), [CONTROL_NS, TEST_NS]);
    assert.deepEqual(counts(service.inventory(CONTROL_NS)), [0, 0, 0]);
    assert.ok(
      !service.query(CONTROL_NS, CONTROL_MARKER).text.includes(CONTROL_MARKER),
    );
    assert.deepEqual(counts(service.inventory("other-tenant")), [1, 1, 0]);
  });
});

Deno.test("MemoryService with partial-inventory answers complete: false", async () => {
  await withService({ defect: "partial-inventory" }, async (service) => {
    await seed(service);
    assert.equal(service.inventory(TEST_NS).complete, false);
    await service.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(service.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("MemoryService.close() cancels delayed jobs and refuses later writes", async () => {
  const clock = new ManualScheduler();
  const service = new MemoryService({
    defect: "vector-resurrect",
    scheduler: clock,
  });
  await seed(service);
  await service.delete(TEST_NS, ["trace-doc-1"]);
  assert.ok(clock.pending > 0);
  service.close();
  assert.equal(clock.pending, 0);
  await assert.rejects(
    service.ingest(TEST_NS, "trace-doc-2", "x"),
    /worker is closed/,
  );
});

Deno.test("MemoryService refuses a negative or fractional delay", () => {
  assert.throws(() => new MemoryService({ delayMs: -1 }), RangeError);
  assert.throws(() => new MemoryService({ delayMs: 1.5 }), RangeError);
});

Deno.test("DEFECT_INFO describes every defect with a verdict", () => {
  for (const defect of DEFECTS) {
    assert.ok(DEFECT_INFO[defect].description.length > 0, defect);
    assert.ok(
      ["PASS", "FAIL", "INCONCLUSIVE"].includes(DEFECT_INFO[defect].verdict),
    );
  }
  assert.equal(DEFECT_INFO["slow-vector"].verdict, "PASS");
  assert.equal(DEFECT_INFO["lost-control"].verdict, "INCONCLUSIVE");
});
