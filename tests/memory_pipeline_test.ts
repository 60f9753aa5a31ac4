import assert from "node:assert/strict";
import { StagingRequestError } from "../lib/contract/protocol.ts";
import {
  handleStagingRequest,
  ManualScheduler,
  type MemoryActivity,
  type MemoryBehaviour,
  MemoryPipeline,
  NO_MATCH_ANSWER,
} from "../lib/memory/mod.ts";
import { elapse, withPipeline } from "./_memory.ts";

const NS = "trace-test-m1";
const MARKER = "trace_canary_9d0c";

function counts(pipeline: MemoryPipeline, namespace = NS): number[] {
  const inventory = pipeline.inventory(namespace);
  return [
    inventory.source_records,
    inventory.vector_records,
    inventory.cache_records,
  ];
}

Deno.test("MemoryPipeline refuses unusable delays and page sizes", async (t) => {
  const cases: [MemoryBehaviour, RegExp][] = [
    [{ vectorDelayMs: -1 }, /vectorDelayMs must be an integer of at least 0/],
    [{ compactAfterMs: 1.5 }, /compactAfterMs/],
    [
      { repairReindex: { afterMs: -5, texts: "live" } },
      /repairReindex\.afterMs/,
    ],
    [{ deletionFirstPageOnly: 0 }, /deletionFirstPageOnly .* at least 1/],
    [{ inventoryFirstPageOnly: 0 }, /inventoryFirstPageOnly .* at least 1/],
  ];
  for (const [behaviour, message] of cases) {
    await t.step(JSON.stringify(behaviour), () => {
      assert.throws(() => new MemoryPipeline(behaviour), RangeError);
      assert.throws(() => new MemoryPipeline(behaviour), message);
    });
  }
});

Deno.test("MemoryPipeline with the correct behaviour erases every store at once", async () => {
  await withPipeline({}, async (pipeline, clock) => {
    await pipeline.ingest(NS, "doc-1", `Note ${MARKER}`);
    pipeline.query(NS, MARKER);
    assert.deepEqual(counts(pipeline), [1, 1, 1]);
    const summary = await pipeline.delete(NS, ["doc-1"]);
    assert.deepEqual(summary.namespaces, [NS]);
    assert.equal(summary.cacheEntries.length, 1);
    assert.deepEqual(counts(pipeline), [0, 0, 0]);
    assert.equal(pipeline.query(NS, MARKER).text, NO_MATCH_ANSWER);
    assert.equal(clock.pending, 0, "no background work without a behaviour");
  });
});

Deno.test("MemoryPipeline that moves on deletion re-files records under the tenant's newest other namespace", async () => {
  const older = "trace-older-m1";
  const newest = "trace-control-m1";
  await withPipeline({ deletion: "move" }, async (pipeline) => {
    await pipeline.ingest(older, "old-1", "An older note");
    await pipeline.ingest(NS, "doc-1", `Note ${MARKER}`);
    await pipeline.ingest(newest, "ctl-1", "The control note");
    await pipeline.ingest("other-m1", "x-1", "Another tenant's note");
    await pipeline.delete(NS, ["doc-1"]);
    assert.deepEqual(counts(pipeline), [0, 0, 0]);
    assert.deepEqual(counts(pipeline, newest), [2, 2, 0]);
    assert.deepEqual(counts(pipeline, older), [1, 1, 0]);
    assert.deepEqual(counts(pipeline, "other-m1"), [1, 1, 0]);
    assert.match(pipeline.query(newest, MARKER).text, /trace_canary_9d0c/);
    await pipeline.delete(older, ["old-1"]);
    assert.deepEqual(counts(pipeline, older), [0, 0, 0]);
    assert.deepEqual(
      counts(pipeline, newest),
      [3, 3, 1],
      "beside the answer the query above cached",
    );
    // Every other namespace of the tenant is empty: nowhere left to move to.
    await pipeline.delete(newest, ["ctl-1", "doc-1", "old-1"]);
    assert.deepEqual(counts(pipeline, newest), [0, 0, 0]);
  });
});

Deno.test("MemoryPipeline with tombstones counts them until compaction purges them", async () => {
  await withPipeline(
    { deletion: "tombstone", compactAfterMs: 2_000 },
    async (pipeline, clock) => {
      await pipeline.ingest(NS, "doc-1", `Note ${MARKER}`);
      await pipeline.delete(NS, ["doc-1"]);
      assert.deepEqual(counts(pipeline), [1, 1, 0], "honest inventory");
      assert.equal(
        pipeline.query(NS, MARKER).text,
        NO_MATCH_ANSWER,
        "search skips tombstones",
      );
      await elapse(pipeline, clock, 1_999);
      assert.deepEqual(counts(pipeline), [1, 1, 0]);
      await elapse(pipeline, clock, 1);
      assert.deepEqual(counts(pipeline), [0, 0, 0]);
    },
  );
});

Deno.test("MemoryPipeline with a first-page deletion scan misses records past page one", async () => {
  await withPipeline(
    { deletionFirstPageOnly: 2 },
    async (pipeline) => {
      await pipeline.ingest("other-a", "seed-1", "Background one");
      await pipeline.ingest("other-a", "seed-2", "Background two");
      await pipeline.ingest(NS, "doc-1", `Note ${MARKER}`);
      assert.equal(pipeline.listingPosition(NS, "doc-1"), 2);
      assert.equal(pipeline.listingPosition(NS, "doc-missing"), -1);
      await pipeline.delete(NS, ["doc-1"]);
      assert.deepEqual(counts(pipeline), [1, 1, 0]);
      await pipeline.delete("other-a", ["seed-1"]);
      assert.deepEqual(counts(pipeline, "other-a"), [1, 1, 0]);
    },
  );
});

Deno.test("MemoryPipeline with a first-page inventory under-reports what it archived", async () => {
  await withPipeline(
    { deletion: "tombstone", inventoryFirstPageOnly: 2 },
    async (pipeline) => {
      for (const id of ["doc-1", "doc-2", "doc-3"]) {
        await pipeline.ingest(NS, id, `Note ${id}`);
      }
      assert.deepEqual(counts(pipeline), [2, 2, 0], "one page of live records");
      await pipeline.delete(NS, ["doc-1", "doc-2", "doc-3"]);
      assert.deepEqual(counts(pipeline), [0, 0, 0]);
      assert.equal(pipeline.inventory(NS).complete, true);
      assert.deepEqual(pipeline.storedCounts(NS), {
        source_records: 3,
        vector_records: 3,
        cache_records: 0,
      });
    },
  );
});

Deno.test("MemoryPipeline with a stalled worker writes deleted vectors back only on release", async () => {
  await withPipeline({ stalledReembedding: true }, async (pipeline, clock) => {
    await pipeline.ingest(NS, "doc-1", `Note ${MARKER}`);
    await pipeline.delete(NS, ["doc-1"]);
    await elapse(pipeline, clock, 60_000);
    assert.deepEqual(
      counts(pipeline),
      [0, 0, 0],
      "time alone releases nothing",
    );
    pipeline.releaseBacklog();
    await pipeline.settled();
    assert.deepEqual(counts(pipeline), [0, 1, 0]);
  });
});

Deno.test("MemoryPipeline reports content-free activity, and a failing observer changes nothing", async () => {
  const seen: MemoryActivity[] = [];
  const clock = new ManualScheduler(5);
  const pipeline = new MemoryPipeline({}, {
    scheduler: clock,
    onActivity: (activity) => {
      seen.push(activity);
      throw new Error("observer failed");
    },
  });
  try {
    await pipeline.ingest(NS, "doc-1", `Note ${MARKER}`);
    const first = pipeline.query(NS, MARKER);
    const again = pipeline.query(NS, MARKER);
    assert.ok(again.text.includes(MARKER));
    await pipeline.delete(NS, ["doc-1"]);
    assert.deepEqual(seen.map((a) => a.type), [
      "ingest",
      "query",
      "query",
      "delete",
    ]);
    const [, miss, hit, deletion] = seen;
    assert.equal(miss?.type === "query" && miss.cached, false);
    assert.equal(
      hit?.type === "query" && hit.cacheEntryId,
      first.cacheEntryId,
    );
    assert.deepEqual(
      deletion?.type === "delete" && deletion.cacheEntries,
      [first.cacheEntryId],
    );
    assert.ok(!JSON.stringify(seen).includes(MARKER), "no text in activity");
  } finally {
    pipeline.close();
  }
});

Deno.test("MemoryPipeline refuses every operation once closed", async () => {
  const pipeline = new MemoryPipeline();
  await pipeline.ingest(NS, "doc-1", "Note");
  pipeline.close();
  assert.equal(pipeline.closed, true);
  await assert.rejects(pipeline.ingest(NS, "doc-2", "x"), /closed/);
  await assert.rejects(pipeline.delete(NS, ["doc-1"]), /closed/);
  assert.throws(() => pipeline.query(NS, "x"), /closed/);
  assert.throws(() => pipeline.inventory(NS), /closed/);
});

Deno.test("handleStagingRequest() answers the four operations with the parsed request", async () => {
  await withPipeline({}, async (pipeline) => {
    const ingest = await handleStagingRequest(pipeline, "ingest", {
      namespace: NS,
      id: "doc-1",
      text: `Note ${MARKER}`,
    });
    assert.deepEqual(ingest.response, { id: "doc-1" });
    const query = await handleStagingRequest(pipeline, "query", {
      namespace: NS,
      query: MARKER,
    });
    assert.deepEqual(Object.keys(query.response), ["text"]);
    assert.ok(query.response.text.includes(MARKER));
    const removal = await handleStagingRequest(pipeline, "delete", {
      namespace: NS,
      ids: ["doc-1"],
    });
    assert.deepEqual(removal.request.ids, ["doc-1"]);
    assert.deepEqual(removal.response, { acknowledged: true });
    const inventory = await handleStagingRequest(pipeline, "inventory", {
      namespace: NS,
    });
    assert.deepEqual(inventory.response, {
      complete: true,
      source_records: 0,
      vector_records: 0,
      cache_records: 0,
    });
  });
});

Deno.test("handleStagingRequest() refuses bodies the contract refuses, naming the field", async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ["ingest", { namespace: NS, id: "doc-1" }, /^text: is required$/],
    ["query", { namespace: NS, query: 7 }, /^query: must be a string$/],
    ["inventory", [NS], /^body: must be a JSON object$/],
    ["inventory", undefined, /^body: must be a JSON object$/],
    ["delete", { namespace: NS, ids: [""] }, /^ids\.0: must not be empty$/],
    [
      "delete",
      { namespace: NS, ids: Array.from({ length: 1001 }, (_, i) => `d${i}`) },
      /^ids: must hold at most 1000 ids$/,
    ],
    ["inventory", { namespace: NS, extra: 1 }, /^extra: unknown key/],
  ];
  await withPipeline({}, async (pipeline) => {
    for (const [op, body, message] of cases) {
      await t.step(`${op} ${JSON.stringify(body)?.slice(0, 60)}`, async () => {
        const error = await handleStagingRequest(
          pipeline,
          op as "ingest",
          body,
        ).then(() => null, (e: unknown) => e);
        assert.ok(error instanceof StagingRequestError, String(error));
        assert.equal(error.code, "config_invalid");
        assert.match(error.message, message);
      });
    }
  });
});

Deno.test("handleStagingRequest() names an operation the contract does not have", async () => {
  await withPipeline({}, async (pipeline) => {
    const error = await handleStagingRequest(
      pipeline,
      "upsert" as "ingest",
      { namespace: NS },
    ).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof RangeError, String(error));
    assert.match(
      error.message,
      /^Unknown staging operation "upsert": expected one of ingest, query, inventory, delete$/,
    );
  });
});

Deno.test("handleStagingRequest() applies background work that fell due before answering", async () => {
  await withPipeline({ vectorDelayMs: 100 }, async (pipeline, clock) => {
    await pipeline.ingest(NS, "doc-1", "Note");
    await pipeline.delete(NS, ["doc-1"]);
    clock.advance(100);
    // The due removal is queued on the worker but not yet applied.
    assert.equal(pipeline.inventory(NS).vector_records, 1);
    const { response } = await handleStagingRequest(pipeline, "inventory", {
      namespace: NS,
    });
    assert.equal(response.vector_records, 0);
  });
});
