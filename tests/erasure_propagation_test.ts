import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { listReceipts } from "../lib/ledger/erasure_receipts.ts";
import { counterSnapshot, type EventInput } from "../lib/obs/mod.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  propagatedErasure,
  propagationByDefault,
  setErasurePropagation,
} from "../lib/obs/maint/mod.ts";
import {
  type AppliedErasure,
  enableErasurePropagation,
} from "../lib/runs/mod.ts";
import { createApp } from "../routes/app.ts";
import {
  event,
  indexedIds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

/** mem-1 holds two events with previews; the deletion of mem-1 follows them. */
const MEMORY: EventInput[] = [
  event("w1", {
    agent_id: null,
    memory_id: "mem-1",
    user_id: "dora",
    kind: "memory_write",
    preview: "dora likes tea",
  }),
  event("w2", {
    agent_id: null,
    memory_id: "mem-1",
    user_id: "dora",
    kind: "memory_search",
    preview: "what does dora like",
  }),
];

const DELETE_MEMORY = event("d1", {
  agent_id: null,
  memory_id: "mem-1",
  user_id: "dora",
  kind: "memory_delete",
  status: "ok",
});

async function previewsOf(db: TraceDb, memory: string): Promise<string[]> {
  const result = await db.client.execute({
    sql:
      `SELECT e.event_id FROM obs_previews p JOIN obs_events e ON e.seq = p.seq
          WHERE e.memory_id = ? ORDER BY e.event_id`,
    args: [memory],
  });
  return result.rows.map((row) => String(row.event_id));
}

/** Runs `fn` with propagation registered for this process, stopped afterwards. */
async function withPropagation<T>(
  byDefault: boolean,
  fn: (erased: AppliedErasure[]) => Promise<T>,
): Promise<T> {
  const erased: AppliedErasure[] = [];
  const stop = enableErasurePropagation({
    key: TEST_KEY,
    byDefault,
    onErased: (e) => erased.push(e),
  });
  try {
    return await fn(erased);
  } finally {
    stop();
  }
}

Deno.test("without opt-in a memory deletion is only indexed", async () => {
  await withErasureDb(async (db) => {
    await withPropagation(false, async (erased) => {
      await seed(db, MEMORY);
      await seed(db, [DELETE_MEMORY]);
      assert.deepEqual(erased, []);
      assert.deepEqual(await previewsOf(db, "mem-1"), ["w1", "w2"]);
      assert.ok((await indexedIds(db)).includes("d1"));
    });
  });
});

Deno.test("with TRACE_OBS_ERASURE_PROPAGATION=true a memory deletion erases the memory's previews, with a receipt", async () => {
  await withErasureDb(async (db) => {
    assert.equal(propagationByDefault("true"), true);
    assert.equal(propagationByDefault(" TRUE "), true);
    assert.equal(propagationByDefault("false"), false);
    assert.equal(propagationByDefault(undefined), false);
    for (const refused of ["", "yes", "1", "on"]) {
      assert.throws(
        () => propagationByDefault(refused),
        /TRACE_OBS_ERASURE_PROPAGATION (is set but empty|must be true or false)/,
      );
    }
    await withPropagation(propagationByDefault("true"), async (erased) => {
      await seed(db, [
        ...MEMORY,
        event("b1", { user_id: "bob", preview: "bob stays" }),
      ]);
      // The deletion and a later write to the same memory, in one batch.
      await seed(db, [
        DELETE_MEMORY,
        event("w3", {
          agent_id: null,
          memory_id: "mem-1",
          kind: "memory_write",
          preview: "written after the deletion",
        }),
      ]);
      assert.equal(erased.length, 1);
      const { result, receipt } = erased[0]!;
      assert.equal(result.scope, "content");
      assert.equal(result.tables.obs_previews, 2);
      assert.equal(result.tables.obs_events, 0);
      assert.equal(receipt.receipt.trigger, "propagation");
      assert.equal(receipt.receipt.selector, "memory");
      assert.deepEqual(await previewsOf(db, "mem-1"), ["w3"]);
      // Metadata stays: the deletion event itself is indexed.
      assert.deepEqual(await indexedIds(db), ["b1", "d1", "w1", "w2", "w3"]);
      assert.equal((await listReceipts(db)).length, 1);
    });
  });
});

Deno.test("a per-application setting wins over the process default, both ways", async () => {
  await withErasureDb(async (db) => {
    await seed(db, MEMORY);
    await setErasurePropagation(db, "app", false);
    await withPropagation(true, async (erased) => {
      await seed(db, [DELETE_MEMORY]);
      assert.deepEqual(erased, []);
    });
    await setErasurePropagation(db, "app", true);
    await withPropagation(false, async (erased) => {
      await seed(db, [{ ...DELETE_MEMORY, event_id: "d2" }]);
      assert.equal(erased.length, 1);
      assert.deepEqual(await previewsOf(db, "mem-1"), []);
    });
  });
});

Deno.test("propagation names the user when no memory is named, and skips single records and failures", () => {
  const base = {
    seq: 9,
    application_id: "app",
    user_id: "dora",
    memory_id: null,
    kind: "memory_delete",
    status: "ok",
    success: true,
    resources: [],
    attributes: {},
  };
  assert.deepEqual(propagatedErasure(base), {
    subject: { application_id: "app", kind: "user", ids: ["dora"] },
    upToSeq: 9,
  });
  assert.equal(
    propagatedErasure({ ...base, memory_id: "m" })?.subject.kind,
    "memory",
  );
  assert.equal(
    propagatedErasure({ ...base, kind: "delete_memory_store", memory_id: "m" })
      ?.subject.kind,
    "memory",
  );
  // A store deletion (as OTLP maps delete_memory_store) refers to its store with role deleted.
  const storeRef = { type: "memory_store", id: "m", role: "deleted" as const };
  const storeDeletion = {
    ...base,
    kind: "memory_store_delete",
    resources: [storeRef],
  };
  assert.deepEqual(propagatedErasure({ ...storeDeletion, memory_id: "m" }), {
    subject: { application_id: "app", kind: "memory", ids: ["m"] },
    upToSeq: 9,
  });
  assert.deepEqual(
    propagatedErasure(storeDeletion)?.subject,
    { application_id: "app", kind: "memory", ids: ["m"] },
    "the store its ref deletes",
  );
  assert.equal(
    propagatedErasure({ ...storeDeletion, resources: [] }),
    null,
    "a store deletion naming no store never falls back to the user",
  );
  assert.equal(
    propagatedErasure({ ...storeDeletion, memory_id: "other" }),
    null,
    "a store deletion naming two stores is only indexed",
  );
  assert.equal(
    propagatedErasure({ ...base, resources: [storeRef] }),
    null,
    "a memory deletion that deletes a store ref deletes a record, not the user",
  );
  assert.equal(
    propagatedErasure({
      ...storeDeletion,
      memory_id: "m",
      resources: [storeRef, {
        type: "memory_record",
        id: "r",
        role: "deleted",
      }],
    }),
    null,
  );
  assert.equal(propagatedErasure({ ...base, kind: "memory_write" }), null);
  assert.equal(propagatedErasure({ ...base, status: "error" }), null);
  assert.equal(propagatedErasure({ ...base, success: false }), null);
  assert.equal(propagatedErasure({ ...base, user_id: null }), null);
  assert.equal(
    propagatedErasure({
      ...base,
      attributes: { "gen_ai.memory.record.id": "r-1" },
    }),
    null,
  );
  assert.equal(
    propagatedErasure({
      ...base,
      resources: [{ type: "memory_record", id: "r-1", role: "deleted" }],
    }),
    null,
  );
});

/** One GenAI span of tenant `app` (OTLP JSON), with string attributes. */
function genaiSpan(
  spanId: string,
  operation: string,
  attributes: Record<string, string>,
) {
  return {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId,
    name: `${operation} ${spanId}`,
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000000100000000",
    status: { code: 1 },
    attributes: Object.entries({
      "gen_ai.operation.name": operation,
      ...attributes,
    }).map(([key, value]) => ({ key, value: { stringValue: value } })),
  };
}

/** Posts `spans` of tenant `app` to the server's OTLP receiver. */
async function postSpans(
  db: TraceDb,
  spans: ReturnType<typeof genaiSpan>[],
): Promise<void> {
  const response = await createApp({ db }).request(
    "http://127.0.0.1/v1/traces",
    {
      method: "POST",
      headers: { "content-type": "application/json", host: "127.0.0.1" },
      body: JSON.stringify({
        resourceSpans: [{
          resource: {
            attributes: [{ key: "tenant.id", value: { stringValue: "app" } }],
          },
          scopeSpans: [{ spans }],
        }],
      }),
    },
  );
  assert.equal(response.status, 200, await response.clone().text());
}

Deno.test("an OTLP delete_memory span received by the server propagates", async () => {
  await withErasureDb(async (db) => {
    await seed(db, MEMORY);
    await setErasurePropagation(db, "app", true);
    await withPropagation(false, async (erased) => {
      await postSpans(db, [
        genaiSpan("00f067aa0ba902b7", "delete_memory", {
          "gen_ai.memory.store.id": "mem-1",
        }),
      ]);
      assert.equal(erased.length, 1);
      assert.deepEqual(await previewsOf(db, "mem-1"), []);
    });
  });
});

Deno.test("an OTLP delete_memory_store span erases what the store held, with a receipt", async () => {
  await withErasureDb(async (db) => {
    await setErasurePropagation(db, "app", true);
    await withPropagation(false, async (erased) => {
      const store = { "gen_ai.memory.store.id": "STORE-X", "user.id": "dora" };
      await postSpans(db, [
        genaiSpan("00f067aa0ba90201", "create_memory", {
          ...store,
          "gen_ai.memory.content": "dora is allergic to STORE_SECRET",
        }),
        genaiSpan("00f067aa0ba90202", "search_memory", {
          ...store,
          "gen_ai.memory.query.text": "what is dora allergic to",
        }),
      ]);
      assert.equal((await previewsOf(db, "STORE-X")).length, 2);
      await postSpans(db, [
        genaiSpan("00f067aa0ba90203", "delete_memory_store", store),
      ]);
      assert.equal(erased.length, 1);
      const { result, receipt } = erased[0]!;
      assert.equal(receipt.receipt.trigger, "propagation");
      assert.equal(receipt.receipt.selector, "memory");
      assert.equal(result.scope, "content");
      assert.equal(result.tables.obs_previews, 2);
      assert.deepEqual(await previewsOf(db, "STORE-X"), []);
      assert.equal((await listReceipts(db)).length, 1);
    });
  });
});

Deno.test("a failing propagation never fails the ingest: the deletion stays indexed and the failure is counted", async () => {
  await withErasureDb(async (db) => {
    await seed(db, MEMORY);
    const messages: string[] = [];
    const stop = enableErasurePropagation({
      key: () => Promise.reject(new Error("key file unreadable")),
      byDefault: true,
      onError: (m) => messages.push(m),
    });
    try {
      const before = counterSnapshot().counts.callback_failures;
      const result = await ingestEvents(db, [DELETE_MEMORY]);
      assert.equal(result.inserted, 1);
      assert.equal(counterSnapshot().counts.callback_failures, before + 1);
      assert.match(messages[0] ?? "", /Cannot propagate a memory deletion/);
      assert.deepEqual(await previewsOf(db, "mem-1"), ["w1", "w2"]);
    } finally {
      stop();
    }
  });
});
