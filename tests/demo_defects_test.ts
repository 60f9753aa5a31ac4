import assert from "node:assert/strict";
import type { Inventory } from "../lib/contract/protocol.ts";
import {
  DEFECT_INFO,
  DEFECTS,
  demoBehaviour,
  type DemoDefect,
  HEALTHY,
} from "../lib/demo/defects.ts";
import {
  ManualScheduler,
  MemoryPipeline,
  NO_MATCH_ANSWER,
} from "../lib/memory/mod.ts";
import { elapse, withPipeline } from "./_memory.ts";

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

/** The demo's pipeline with `defect` (50 ms delays) on a manual clock, closed afterwards. */
function withDemo(
  defect: DemoDefect | null,
  fn: (
    pipeline: MemoryPipeline,
    clock: ManualScheduler,
  ) => void | Promise<void>,
): Promise<void> {
  return withPipeline(demoBehaviour(defect, 50), fn, { startMs: 1_000 });
}

/** Ingests one test document and one control document, then warms both caches. */
async function seed(pipeline: MemoryPipeline): Promise<void> {
  await pipeline.ingest(
    TEST_NS,
    "trace-doc-1",
    `Synthetic note one ${MARKER}`,
  );
  await pipeline.ingest(
    CONTROL_NS,
    "trace-doc-c",
    `Synthetic control ${CONTROL_MARKER}`,
  );
  pipeline.query(TEST_NS, MARKER);
  pipeline.query(CONTROL_NS, CONTROL_MARKER);
}

Deno.test("demo pipeline runs the healthy lifecycle: ingest, query, inventory, delete", async () => {
  await withDemo(null, async (pipeline, clock) => {
    assert.deepEqual(
      await pipeline.ingest(TEST_NS, "trace-doc-1", `Synthetic ${MARKER}`),
      { id: "trace-doc-1" },
    );
    const first = pipeline.query(TEST_NS, MARKER);
    assert.ok(first.text.includes(MARKER));
    assert.equal(first.cached, false);
    assert.deepEqual(first.docIds, ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [1, 1, 1]);
    assert.equal(pipeline.inventory(TEST_NS).complete, true);

    const summary = await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(summary.namespaces, [TEST_NS]);
    assert.deepEqual(summary.cacheEntries, [first.cacheEntryId]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
    assert.equal(pipeline.query(TEST_NS, MARKER).text, NO_MATCH_ANSWER);

    // The post-delete re-index pass re-reads the source, so nothing comes back.
    await elapse(pipeline, clock, 1_000);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("demo pipeline query() serves a repeated query from the cache entry it names", async () => {
  await withDemo(null, async (pipeline) => {
    await pipeline.ingest(TEST_NS, "trace-doc-1", `Synthetic ${MARKER}`);
    const first = pipeline.query(TEST_NS, MARKER);
    const again = pipeline.query(TEST_NS, `  ${MARKER.toUpperCase()} `);
    assert.equal(again.cached, true);
    assert.equal(again.cacheEntryId, first.cacheEntryId);
    assert.equal(again.text, first.text);
  });
});

Deno.test("demo pipeline ingest() drops cached answers of its namespace", async () => {
  await withDemo(null, async (pipeline) => {
    await pipeline.ingest(TEST_NS, "trace-doc-1", `First ${MARKER}`);
    pipeline.query(TEST_NS, MARKER);
    await pipeline.ingest(TEST_NS, "trace-doc-2", `Second ${MARKER}`);
    assert.equal(pipeline.inventory(TEST_NS).cache_records, 0);
    const answer = pipeline.query(TEST_NS, MARKER);
    assert.equal(answer.cached, false);
    assert.deepEqual(answer.docIds.toSorted(), ["trace-doc-1", "trace-doc-2"]);
  });
});

Deno.test("demo pipeline query() caches nothing when no document matches", async () => {
  await withDemo(null, (pipeline) => {
    const answer = pipeline.query(TEST_NS, MARKER);
    assert.equal(answer.text, NO_MATCH_ANSWER);
    assert.equal(answer.cacheEntryId, null);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("demo pipeline keeps namespaces isolated, even under the same id", async () => {
  await withDemo(null, async (pipeline) => {
    await pipeline.ingest(TEST_NS, "trace-doc-1", `Test ${MARKER}`);
    await pipeline.ingest(
      CONTROL_NS,
      "trace-doc-1",
      `Control ${CONTROL_MARKER}`,
    );
    assert.ok(!pipeline.query(CONTROL_NS, MARKER).text.includes(MARKER));
    assert.ok(
      !pipeline.query(TEST_NS, CONTROL_MARKER).text.includes(CONTROL_MARKER),
    );
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(CONTROL_NS)), [1, 1, 0]);
    assert.ok(
      pipeline.query(CONTROL_NS, CONTROL_MARKER).text.includes(CONTROL_MARKER),
    );
  });
});

Deno.test("demo pipeline delete() removes only the supplied ids", async () => {
  await withDemo(null, async (pipeline) => {
    await pipeline.ingest(TEST_NS, "trace-doc-1", `One ${MARKER}`);
    await pipeline.ingest(TEST_NS, "trace-doc-2", "Two trace_canary_0002");
    pipeline.query(TEST_NS, MARKER);
    pipeline.query(TEST_NS, "trace_canary_0002");
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [1, 1, 1]);
    const kept = pipeline.query(TEST_NS, "trace_canary_0002");
    assert.equal(kept.cached, true);
    assert.deepEqual(kept.docIds, ["trace-doc-2"]);
  });
});

Deno.test("demo pipeline delete() treats unknown ids as a no-op", async () => {
  await withDemo(null, async (pipeline, clock) => {
    await seed(pipeline);
    const summary = await pipeline.delete(TEST_NS, ["trace-doc-unknown"]);
    assert.equal(summary.acknowledged, true);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [1, 1, 1]);
    assert.equal(clock.pending, 0, "no re-index job for untouched ids");
    await pipeline.delete("trace-test-empty", ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [1, 1, 1]);
  });
});

Deno.test("demo pipeline with stale-cache keeps answering from the cache after repeated deletes", async () => {
  await withDemo("stale-cache", async (pipeline, clock) => {
    await seed(pipeline);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(pipeline, clock, 1_000);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 1]);
    const answer = pipeline.query(TEST_NS, MARKER);
    assert.equal(answer.cached, true);
    assert.ok(answer.text.includes(MARKER));
  });
});

Deno.test("demo pipeline with vector-resurrect re-adds the vector after the delay, and a later delete removes it", async () => {
  await withDemo("vector-resurrect", async (pipeline, clock) => {
    await seed(pipeline);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
    await elapse(pipeline, clock, 49);
    assert.equal(pipeline.inventory(TEST_NS).vector_records, 0);
    await elapse(pipeline, clock, 1);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 1, 0]);
    await elapse(pipeline, clock, 1_000);
    assert.equal(
      pipeline.inventory(TEST_NS).vector_records,
      1,
      "nothing removes it again",
    );

    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(pipeline, clock, 1_000);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
    assert.deepEqual(counts(pipeline.inventory(CONTROL_NS)), [1, 1, 1]);
  });
});

Deno.test("demo pipeline with slow-vector removes the vector only after the delay", async () => {
  await withDemo("slow-vector", async (pipeline, clock) => {
    await seed(pipeline);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 1, 0]);
    // The lingering vector has no source left, so the answer cannot quote it.
    assert.ok(!pipeline.query(TEST_NS, MARKER).text.includes(MARKER));
    await elapse(pipeline, clock, 50);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("demo pipeline with soft-delete reports zero records yet still retrieves the marker", async () => {
  await withDemo("soft-delete", async (pipeline, clock) => {
    await seed(pipeline);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(pipeline, clock, 1_000);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
    const answer = pipeline.query(TEST_NS, MARKER);
    assert.equal(answer.cached, false);
    assert.ok(answer.text.includes(MARKER));
  });
});

Deno.test("demo pipeline with lost-control wipes every namespace of the tenant", async () => {
  await withDemo("lost-control", async (pipeline) => {
    await seed(pipeline);
    await pipeline.ingest("other-tenant", "doc-x", "Unrelated tenant text");
    const summary = await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(summary.namespaces.toSorted(), [CONTROL_NS, TEST_NS]);
    assert.deepEqual(counts(pipeline.inventory(CONTROL_NS)), [0, 0, 0]);
    assert.ok(
      !pipeline.query(CONTROL_NS, CONTROL_MARKER).text.includes(CONTROL_MARKER),
    );
    assert.deepEqual(counts(pipeline.inventory("other-tenant")), [1, 1, 0]);
  });
});

Deno.test("demo pipeline with move-to-control re-files deleted records under the control namespace", async () => {
  await withDemo("move-to-control", async (pipeline, clock) => {
    await seed(pipeline);
    assert.deepEqual(counts(pipeline.inventory(CONTROL_NS)), [1, 1, 1]);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    await elapse(pipeline, clock, 1_000);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
    assert.deepEqual(counts(pipeline.inventory(CONTROL_NS)), [2, 2, 1]);
    // The control's cached answer keeps the moved text out of its query.
    assert.ok(
      !pipeline.query(CONTROL_NS, CONTROL_MARKER).text.includes(MARKER),
    );
  });
});

Deno.test("demo pipeline with partial-inventory answers complete: false", async () => {
  await withDemo("partial-inventory", async (pipeline) => {
    await seed(pipeline);
    assert.equal(pipeline.inventory(TEST_NS).complete, false);
    await pipeline.delete(TEST_NS, ["trace-doc-1"]);
    assert.deepEqual(counts(pipeline.inventory(TEST_NS)), [0, 0, 0]);
  });
});

Deno.test("demo pipeline close() cancels delayed jobs and refuses later writes", async () => {
  const clock = new ManualScheduler();
  const pipeline = new MemoryPipeline(demoBehaviour("vector-resurrect"), {
    scheduler: clock,
  });
  await seed(pipeline);
  await pipeline.delete(TEST_NS, ["trace-doc-1"]);
  assert.ok(clock.pending > 0);
  pipeline.close();
  assert.equal(clock.pending, 0);
  await assert.rejects(
    pipeline.ingest(TEST_NS, "trace-doc-2", "x"),
    /memory pipeline is closed/,
  );
});

Deno.test("demoBehaviour() refuses a defect it does not know, naming the presets", () => {
  assert.throws(
    () => demoBehaviour("stale-cach" as DemoDefect),
    (e: unknown) =>
      e instanceof RangeError &&
      e.message.startsWith(
        'Cannot build the demo behaviour: unknown defect "stale-cach"; expected one of stale-cache, ',
      ),
  );
});

Deno.test("demoBehaviour() refuses a negative or fractional delay", () => {
  assert.throws(() => demoBehaviour(null, -1), RangeError);
  assert.throws(() => demoBehaviour("slow-vector", 1.5), RangeError);
  assert.deepEqual(demoBehaviour("slow-vector", 0).vectorDelayMs, 0);
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

/** Rows of README's `--defect` table: [defect or null, verdict cell, cleanup cell]. */
async function readmeDemoTable(): Promise<[string | null, string, string][]> {
  const readme = await Deno.readTextFile(
    new URL("../README.md", import.meta.url),
  );
  const section = readme.split("\n## Try the demo by hand\n")[1]?.split(
    "\n## ",
  )[0] ?? "";
  const rows = section.split("\n").filter((line) =>
    /^\| (\(none\)|`[a-z][a-z-]*`) /.test(line)
  );
  return rows.map((line) => {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    const name = cells[0] === "(none)" ? null : cells[0]!.replaceAll("`", "");
    return [name, cells[2] ?? "", cells[3] ?? ""];
  });
}

Deno.test("README's demo table states every defect's verdict and cleanup as DEFECT_INFO does", async () => {
  const table = await readmeDemoTable();
  assert.deepEqual(table.map(([name]) => name), [null, ...DEFECTS]);
  for (const [name, verdict, cleanup] of table) {
    const info = name === null ? HEALTHY : DEFECT_INFO[name as DemoDefect];
    assert.equal(verdict.split(/[ ,]/)[0], info.verdict, `${name} verdict`);
    assert.equal(
      cleanup.split(/[ ,]/)[0],
      info.cleanupComplete ? "complete" : "incomplete",
      `${name} cleanup`,
    );
  }
});
