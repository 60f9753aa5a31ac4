/**
 * The self staging adapter keeps namespaces apart: the same id in two
 * namespaces is two records, each ingested, queried, inventoried and deleted
 * on its own; an identical retry stays a success and a changed text under an
 * id of the same namespace stays refused.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { ConflictError } from "../lib/errors.ts";
import { listReceipts } from "../lib/ledger/erasure_receipts.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  SELF_NO_MATCH,
  SELF_STAGING_AGENT,
  SELF_STAGING_APPLICATION,
  type SelfStagingAdapter,
  selfStagingEventId,
} from "../lib/obs/self_contract/mod.ts";
import { selfStagingWithReceipts } from "../lib/runs/mod.ts";
import { createApp } from "../routes/app.ts";
import { TEST_KEY, withErasureDb } from "./erasure_support.ts";

/** An adapter whose deletions leave receipts, as `trace serve --staging-adapter` builds it. */
async function withAdapter(
  fn: (adapter: SelfStagingAdapter, db: TraceDb) => Promise<void>,
): Promise<void> {
  await withErasureDb(async (db) => {
    const adapter = selfStagingWithReceipts(db, TEST_KEY);
    await fn(adapter, db);
  });
}

const ONE = {
  complete: true,
  source_records: 1,
  vector_records: 1,
  cache_records: 1,
};
const NONE = {
  complete: true,
  source_records: 0,
  vector_records: 0,
  cache_records: 0,
};

async function inventory(adapter: SelfStagingAdapter, namespace: string) {
  return (await adapter.handle("inventory", { namespace })).response;
}

async function query(
  adapter: SelfStagingAdapter,
  namespace: string,
  text: string,
): Promise<string> {
  return (await adapter.handle("query", { namespace, query: text })).response
    .text;
}

Deno.test("the same id in two namespaces is two records, ingested, queried, inventoried and deleted on its own", async () => {
  await withAdapter(async (adapter, db) => {
    for (
      const [namespace, text] of [["ns-a", "alpha MARK_A"], [
        "ns-b",
        "beta MARK_B",
      ]]
    ) {
      const { response } = await adapter.handle("ingest", {
        namespace,
        id: "doc1",
        text,
      });
      assert.deepEqual(response, { id: "doc1" });
    }
    assert.deepEqual(await inventory(adapter, "ns-a"), ONE);
    assert.deepEqual(await inventory(adapter, "ns-b"), ONE);
    assert.equal(await query(adapter, "ns-a", "MARK_A"), "alpha MARK_A");
    assert.equal(await query(adapter, "ns-a", "MARK_B"), SELF_NO_MATCH);
    assert.equal(await query(adapter, "ns-b", "MARK_B"), "beta MARK_B");
    assert.equal(await query(adapter, "ns-b", "MARK_A"), SELF_NO_MATCH);

    await adapter.handle("delete", { namespace: "ns-a", ids: ["doc1"] });
    assert.deepEqual(await inventory(adapter, "ns-a"), NONE);
    assert.deepEqual(await adapter.storedCounts("ns-a"), {
      source_records: 0,
      vector_records: 0,
      cache_records: 0,
    });
    assert.equal(await query(adapter, "ns-a", "MARK_A"), SELF_NO_MATCH);
    // The other namespace's doc1 is untouched.
    assert.deepEqual(await inventory(adapter, "ns-b"), ONE);
    assert.equal(await query(adapter, "ns-b", "MARK_B"), "beta MARK_B");

    // doc1 of ns-a can be written again, and ns-b's stays what it was.
    await adapter.handle("ingest", {
      namespace: "ns-a",
      id: "doc1",
      text: "again MARK_A",
    });
    assert.equal(await query(adapter, "ns-a", "MARK_A"), "again MARK_A");
    await adapter.handle("delete", { namespace: "ns-b", ids: ["doc1"] });
    assert.deepEqual(await inventory(adapter, "ns-b"), NONE);
    assert.deepEqual(await inventory(adapter, "ns-a"), ONE);

    // One receipt per deletion, each erasing exactly one event.
    const receipts = await listReceipts(db);
    assert.equal(receipts.length, 2);
    for (const { receipt } of receipts) {
      assert.equal(receipt.trigger, "staging_adapter");
      assert.equal(receipt.selector, "events");
      assert.equal(receipt.events, 1);
    }
  });
});

Deno.test("namespaces and ids that would run together, or exceed an event id's length, stay apart", async () => {
  await withAdapter(async (adapter) => {
    const long = (c: string) => c.repeat(256);
    const pairs: [string, string][] = [
      ["a/b", "c"],
      ["a", "b/c"],
      ["1:a", "b"],
      [long("n"), long("i")],
      [long("m"), long("i")],
      [long("n"), long("j")],
    ];
    assert.equal(
      new Set(pairs.map(([ns, id]) => selfStagingEventId(ns, id))).size,
      pairs.length,
    );
    assert.match(
      selfStagingEventId(long("n"), long("i")),
      /^sha256:[0-9a-f]{64}$/,
    );
    assert.equal(selfStagingEventId("a/b", "c"), "3:a/b/c");
    for (const [namespace, id] of pairs) {
      await adapter.handle("ingest", {
        namespace,
        id,
        text: `text of ${namespace.slice(0, 3)} ${id.slice(0, 3)}`,
      });
    }
    for (const [namespace] of pairs.slice(0, 3)) {
      assert.deepEqual(await inventory(adapter, namespace), ONE);
    }
    assert.equal((await inventory(adapter, long("n"))).source_records, 2);
    await adapter.handle("delete", { namespace: "a", ids: ["b/c", "c"] });
    await adapter.handle("delete", { namespace: long("n"), ids: [long("i")] });
    assert.deepEqual(await inventory(adapter, "a"), NONE);
    assert.deepEqual(await inventory(adapter, "a/b"), ONE);
    assert.deepEqual(await inventory(adapter, long("n")), ONE);
    assert.equal(
      await query(adapter, long("n"), "text of"),
      "text of nnn jjj",
    );
    assert.deepEqual(await inventory(adapter, long("m")), ONE);
  });
});

Deno.test("an identical retry is a success and a changed text under an id of the namespace is refused, naming the supplied id", async () => {
  await withAdapter(async (adapter) => {
    const doc = { namespace: "ns-a", id: "doc1", text: "alpha" };
    for (let i = 0; i < 2; i++) {
      assert.deepEqual((await adapter.handle("ingest", doc)).response, {
        id: "doc1",
      });
    }
    assert.deepEqual(await inventory(adapter, "ns-a"), ONE);
    await assert.rejects(
      adapter.handle("ingest", { ...doc, text: "changed" }),
      (error: unknown) =>
        error instanceof ConflictError &&
        error.message.includes(
          '"doc1" is already stored with a different payload',
        ) &&
        !error.message.includes(selfStagingEventId("ns-a", "doc1")),
    );
    assert.equal(await query(adapter, "ns-a", "alpha"), "alpha");
    assert.deepEqual(await inventory(adapter, "ns-a"), ONE);
    // The same changed text is welcome in another namespace.
    await adapter.handle("ingest", {
      ...doc,
      namespace: "ns-b",
      text: "changed",
    });
    assert.deepEqual(await inventory(adapter, "ns-b"), ONE);
  });
});

Deno.test("over HTTP: the same id in another namespace is stored (200), a changed text in the same one is a 409", async () => {
  await withAdapter(async (adapter, db) => {
    const app = createApp({ db, stagingAdapter: adapter });
    const post = (op: string, body: unknown) =>
      app.request(`http://127.0.0.1/staging/${op}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const a = { namespace: "nsA", id: "doc1", text: "a" };
    for (const body of [a, a, { ...a, namespace: "nsB", text: "b" }]) {
      const response = await post("ingest", body);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { id: "doc1" });
    }
    const changed = await post("ingest", { ...a, text: "changed" });
    assert.equal(changed.status, 409);
    const { error } = await changed.json();
    assert.equal(error.code, "conflict");
    assert.deepEqual(error.items, [{
      index: 0,
      field: "event_id",
      message: '"doc1" is already stored with a different payload',
    }]);
    const deleted = await post("delete", { namespace: "nsB", ids: ["doc1"] });
    assert.deepEqual(await deleted.json(), { acknowledged: true });
    const nsA = await post("inventory", { namespace: "nsA" });
    assert.deepEqual(await nsA.json(), ONE);
    const nsB = await post("inventory", { namespace: "nsB" });
    assert.deepEqual(await nsB.json(), NONE);
  });
});

/** A document as an earlier version stored it: the bare id as event id. */
async function legacyIngest(
  db: TraceDb,
  namespace: string,
  id: string,
  text: string,
): Promise<void> {
  await ingestEvents(db, [{
    event_id: id,
    application_id: SELF_STAGING_APPLICATION,
    agent_id: SELF_STAGING_AGENT,
    thread_id: namespace,
    kind: "memory_write",
    status: "ok",
    success: true,
    store: "conversation",
    resources: [{ type: "document", id, role: "written" }],
    preview: text,
  }], { source: "api" });
}

Deno.test("documents an earlier version stored under the bare id are counted and deleted in their namespace only", async () => {
  await withAdapter(async (adapter, db) => {
    await legacyIngest(db, "ns-old", "doc1", "old MARK");
    // A bare id that reads like the new event id of doc1 in ns-a.
    const lookalike = selfStagingEventId("ns-a", "doc1");
    await legacyIngest(db, "ns-a", lookalike, "lookalike MARK");
    assert.deepEqual(await inventory(adapter, "ns-old"), ONE);
    assert.equal(await query(adapter, "ns-old", "MARK"), "old MARK");

    // Deleting doc1 of ns-a reaches neither ns-old's doc1 nor the lookalike.
    await adapter.handle("delete", { namespace: "ns-a", ids: ["doc1"] });
    assert.deepEqual(await inventory(adapter, "ns-old"), ONE);
    assert.deepEqual(await inventory(adapter, "ns-a"), ONE);

    await adapter.handle("delete", { namespace: "ns-old", ids: ["doc1"] });
    assert.deepEqual(await inventory(adapter, "ns-old"), NONE);
    await adapter.handle("delete", { namespace: "ns-a", ids: [lookalike] });
    assert.deepEqual(await inventory(adapter, "ns-a"), NONE);
  });
});
