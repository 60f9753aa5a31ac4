import assert from "node:assert/strict";
import { AnswerCache, normalizeQuery } from "../lib/memory/answer_cache.ts";
import {
  cosineSimilarity,
  HashEmbedder,
  tokenize,
} from "../lib/memory/embedding.ts";
import {
  type AppliedJob,
  IndexingWorker,
} from "../lib/memory/indexing_worker.ts";
import { ManualScheduler } from "../lib/memory/scheduler.ts";
import { SourceStore } from "../lib/memory/source_store.ts";
import { VectorIndex } from "../lib/memory/vector_index.ts";

Deno.test("tokenize() keeps underscore markers whole and lower-cases", () => {
  assert.deepEqual(tokenize("Note: trace_canary_AB12, done."), [
    "note",
    "trace_canary_ab12",
    "done",
  ]);
});

Deno.test("HashEmbedder.embed() is deterministic and unit length", () => {
  const embedder = new HashEmbedder();
  const a = embedder.embed("alpha beta gamma");
  assert.deepEqual(a, embedder.embed("alpha beta gamma"));
  assert.equal(a.length, 256);
  assert.ok(Math.abs(cosineSimilarity(a, a) - 1) < 1e-6);
  assert.equal(
    cosineSimilarity(embedder.embed(""), a),
    0,
    "empty text is the zero vector",
  );
});

Deno.test("cosineSimilarity() ranks a shared marker above unrelated text", () => {
  const embedder = new HashEmbedder();
  const query = embedder.embed("trace_canary_1");
  const match = cosineSimilarity(
    query,
    embedder.embed("Synthetic note trace_canary_1"),
  );
  const other = cosineSimilarity(
    query,
    embedder.embed("Synthetic note trace_canary_2"),
  );
  assert.ok(match > 0.5 && match > other);
  assert.throws(
    () => cosineSimilarity(new Float32Array(2), new Float32Array(3)),
    RangeError,
  );
});

Deno.test("SourceStore.tombstone() hides records from live reads until compaction purges them", () => {
  const clock = new ManualScheduler(100);
  const store = new SourceStore({ clock });
  store.put("ns", "a", "text a");
  store.put("ns", "b", "text b");
  assert.deepEqual(store.tombstone("ns", ["a", "missing"]), ["a"]);
  assert.equal(store.get("ns", "a"), undefined);
  assert.equal(store.get("ns", "a", { includeTombstoned: true }), "text a");
  assert.equal(store.count("ns"), 1);
  assert.equal(store.count("ns", { includeTombstoned: true }), 2);
  clock.advance(10);
  assert.equal(store.compact(clock.now()), 1);
  assert.equal(store.count("ns", { includeTombstoned: true }), 1);
  assert.deepEqual(store.remove("other", ["b"]), []);
  assert.deepEqual(store.remove("ns", ["b"]), ["b"]);
  assert.deepEqual(store.namespaces(), []);
});

Deno.test("VectorIndex.search() returns the top k of one namespace, best first", () => {
  const embedder = new HashEmbedder();
  const index = new VectorIndex();
  index.upsert("ns", "exact", embedder.embed("trace_canary_9"));
  index.upsert(
    "ns",
    "diluted",
    embedder.embed("trace_canary_9 plus other words"),
  );
  index.upsert("ns", "unrelated", embedder.embed("nothing in common"));
  index.upsert("elsewhere", "exact", embedder.embed("trace_canary_9"));
  const hits = index.search("ns", embedder.embed("trace_canary_9"), { k: 2 });
  assert.deepEqual(hits.map((hit) => hit.id), ["exact", "diluted"]);
  index.tombstone("ns", ["exact"]);
  assert.deepEqual(
    index.search("ns", embedder.embed("trace_canary_9"), { k: 1 }).map((hit) =>
      hit.id
    ),
    ["diluted"],
  );
  assert.deepEqual(
    index.search("ns", embedder.embed("trace_canary_9"), {
      k: 1,
      includeTombstoned: true,
    }).map((hit) => hit.id),
    ["exact"],
  );
});

Deno.test("AnswerCache.invalidateDocs() drops only entries built from those ids", () => {
  const cache = new AnswerCache();
  const one = cache.set("ns", "Query One", "answer", ["a", "b"]);
  cache.set("ns", "query two", "answer", ["c"]);
  cache.set("other", "query one", "answer", ["a"]);
  assert.equal(cache.get("ns", "  query   ONE ")?.id, one.id);
  assert.deepEqual(cache.invalidateDocs("ns", ["b"]), [one.id]);
  assert.equal(cache.count("ns"), 1);
  assert.equal(cache.count("other"), 1);
  assert.equal(cache.invalidateNamespace("ns"), 1);
  assert.equal(normalizeQuery(" A\tB "), "a b");
});

Deno.test("AnswerCache drops its oldest entries past its bounds, in any namespace", () => {
  const cache = new AnswerCache({ bounds: { entries: 3, textBytes: 40 } });
  const first = cache.set("a", "q1", "one", ["d1"]);
  cache.set("b", "q2", "two", ["d2"]);
  cache.set("a", "q3", "three", ["d3"]);
  cache.set("a", "q1", "one again", ["d1"]); // a replacement counts from now
  cache.set("b", "q4", "four", ["d4"]);
  assert.equal(cache.get("b", "q2"), undefined, "the oldest entry went first");
  assert.notEqual(cache.get("a", "q1")?.id, first.id);
  assert.deepEqual(cache.namespaces().sort(), ["a", "b"]);
  assert.equal(cache.count("a") + cache.count("b"), 3);

  // 20 characters are 40 bytes: one long answer pushes out everything older.
  cache.set("c", "q5", "x".repeat(20), ["d5"]);
  assert.deepEqual(cache.namespaces(), ["c"]);
  // Entries invalidated or cleared free their room.
  cache.invalidateNamespace("c");
  cache.set("a", "q6", "six", ["d6"]);
  cache.set("a", "q7", "seven", ["d7"]);
  cache.set("a", "q8", "eight", ["d8"]);
  assert.equal(cache.count("a"), 3);
});

Deno.test("IndexingWorker applies jobs asynchronously and delays submitAfter() jobs", async () => {
  const clock = new ManualScheduler();
  const index = new VectorIndex({ clock });
  const applied: AppliedJob[] = [];
  const worker = new IndexingWorker(index, {
    embedder: new HashEmbedder(),
    scheduler: clock,
    onApplied: (job) => applied.push(job),
  });
  try {
    const done = worker.submit({
      kind: "upsert",
      namespace: "ns",
      id: "a",
      text: "alpha",
    });
    assert.equal(index.count("ns"), 0, "not applied inline");
    await done;
    assert.equal(index.count("ns"), 1);

    worker.submitAfter(30, {
      kind: "remove",
      namespace: "ns",
      ids: ["a"],
      mode: "hard",
    });
    assert.equal(worker.delayed, 1);
    clock.advance(29);
    await worker.idle();
    assert.equal(index.count("ns"), 1);
    clock.advance(1);
    await worker.idle();
    assert.equal(index.count("ns"), 0);
    assert.deepEqual(applied.map((job) => [job.kind, job.ids, job.at]), [
      ["upsert", ["a"], 0],
      ["remove", ["a"], 30],
    ]);
  } finally {
    worker.close();
  }
});

Deno.test("IndexingWorker reindex jobs skip ids their resolver no longer knows", async () => {
  const clock = new ManualScheduler();
  const index = new VectorIndex({ clock });
  const worker = new IndexingWorker(index, {
    embedder: new HashEmbedder(),
    scheduler: clock,
  });
  try {
    const texts = new Map([["a", "alpha"]]);
    await worker.submit({
      kind: "reindex",
      namespace: "ns",
      ids: ["a", "b"],
      resolve: (id) => texts.get(id),
    });
    assert.deepEqual(index.ids("ns"), ["a"]);
  } finally {
    worker.close();
  }
});

Deno.test("ManualScheduler.advance() runs due callbacks in time order, including ones they schedule", () => {
  const clock = new ManualScheduler();
  const seen: string[] = [];
  clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
  clock.setTimeout(() => {
    seen.push(`a@${clock.now()}`);
    clock.setTimeout(() => seen.push(`c@${clock.now()}`), 5);
  }, 10);
  const cancelled = clock.setTimeout(() => seen.push("never"), 1);
  clock.clearTimeout(cancelled);
  clock.advance(30);
  assert.deepEqual(seen, ["a@10", "c@15", "b@20"]);
  assert.equal(clock.now(), 30);
  assert.equal(clock.pending, 0);
});
