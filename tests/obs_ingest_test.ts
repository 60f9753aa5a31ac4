import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import { StorageError } from "../lib/errors.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import {
  IngestBatchError,
  IngestConflictError,
  ingestEvents,
} from "../lib/obs/ingest/mod.ts";
import {
  describeEventIssue,
  EventInputSchema,
  initializeObs,
  isAllowedAttributeKey,
  listCoverageProfiles,
  normalizeEvent,
  OBS_MIGRATIONS,
  OBS_SCHEMA_VERSION,
  ObsNotInitializedError,
} from "../lib/obs/mod.ts";
import { migrate } from "../lib/db.ts";
import { queryTraceEvents } from "../lib/obs/query/mod.ts";
import * as v from "valibot";

function event(id: string, extra: Record<string, unknown> = {}) {
  return {
    event_id: id,
    application_id: "app-1",
    user_id: "user-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: "2026-09-01T00:00:00Z",
    ...extra,
  };
}

async function count(
  db: Parameters<typeof initializeObs>[0],
  table: string,
): Promise<number> {
  const result = await db.client.execute(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(result.rows[0]!.n);
}

Deno.test("initializeObs() provisions once and reads never create tables", async () => {
  await withDb(async (db) => {
    await assert.rejects(queryTraceEvents(db, {}), StorageError);
    const tables = await db.client.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'obs_%'",
    );
    assert.equal(tables.rows.length, 0);
    assert.deepEqual(
      await initializeObs(db),
      OBS_MIGRATIONS.map((m) => m.version),
    );
    assert.equal(OBS_MIGRATIONS.at(-1)!.version, OBS_SCHEMA_VERSION);
    assert.deepEqual(await initializeObs(db), []);
    assert.equal((await queryTraceEvents(db, {})).events.length, 0);
  });
});

Deno.test("ingestEvents() writes envelope, index, resources and preview in one batch", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const result = await ingestEvents(db, [
      event("e1", {
        resources: [{ type: "doc", id: "d1" }],
        preview: "secret text",
      }),
      event("e2"),
    ]);
    assert.equal(result.inserted, 2);
    assert.equal(await count(db, "obs_envelopes"), 2);
    assert.equal(await count(db, "obs_events"), 2);
    assert.equal(await count(db, "obs_resources"), 1);
    assert.equal(await count(db, "obs_previews"), 1);
  });
});

Deno.test("ingestEvents() keeps preview content out of envelopes and index rows", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1", { preview: "marker-content-xyz" })]);
    for (const table of ["obs_envelopes", "obs_events", "obs_resources"]) {
      const rows = await db.client.execute(`SELECT * FROM ${table}`);
      assert.ok(
        !JSON.stringify(rows.rows).includes("marker-content-xyz"),
        table,
      );
    }
    const page = await queryTraceEvents(db, {});
    assert.ok(!JSON.stringify(page).includes("marker-content-xyz"));
    assert.deepEqual(page.events[0]!.preview, { chars: 18, truncated: false });
  });
});

Deno.test("ingestEvents() truncates previews at 16,000 characters", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1", { preview: "x".repeat(20_000) })]);
    const row = await db.client.execute(
      "SELECT chars, truncated, length(content) AS n FROM obs_previews",
    );
    assert.deepEqual(
      [row.rows[0]!.chars, row.rows[0]!.truncated, row.rows[0]!.n].map(Number),
      [16_000, 1, 16_000],
    );
  });
});

Deno.test("ingestEvents() treats an identical retry as a no-op keeping the original time", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const input = event("e1", { started_at: undefined });
    delete (input as Record<string, unknown>).started_at;
    const first = await ingestEvents(db, [input], { now: () => 1_000 });
    const retry = await ingestEvents(db, [input], { now: () => 9_000 });
    assert.equal(first.inserted, 1);
    assert.equal(retry.inserted, 0);
    assert.equal(retry.duplicates, 1);
    assert.equal(retry.items[0]!.seq, first.items[0]!.seq);
    const page = await queryTraceEvents(db, {});
    assert.equal(page.events.length, 1);
    assert.equal(page.events[0]!.received_at, new Date(1_000).toISOString());
    assert.equal(page.events[0]!.ts, new Date(1_000).toISOString());
  });
});

Deno.test("ingestEvents() refuses a changed payload under an owned event_id", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1")]);
    const error = await ingestEvents(db, [
      event("e2"),
      event("e1", { status: "error" }),
    ])
      .catch((e) => e);
    assert.ok(error instanceof IngestConflictError);
    assert.equal(error.items[0]!.index, 1);
    assert.equal(
      await count(db, "obs_events"),
      1,
      "the whole batch was refused",
    );
  });
});

Deno.test("ingestEvents() scopes event ids per application", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1")]);
    const other = await ingestEvents(db, [
      event("e1", { application_id: "app-2", status: "ok" }),
    ]);
    assert.equal(other.inserted, 1);
  });
});

Deno.test("ingestEvents() refuses a batch with one invalid item and writes nothing", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const error = await ingestEvents(db, [
      event("e1"),
      event("e2", { started_at: "yesterday" }),
      event("e3", { agent_id: undefined }),
    ]).catch((e) => e);
    assert.ok(error instanceof IngestBatchError);
    assert.deepEqual(error.items.map((item) => item.index), [1, 2]);
    assert.equal(error.items[0]!.field, "started_at");
    assert.match(error.items[1]!.message, /agent_id or memory_id is required/);
    assert.equal(await count(db, "obs_events"), 0);
    assert.equal(await count(db, "obs_envelopes"), 0);
  });
});

Deno.test("EventInputSchema refuses more than 64 selection candidates", () => {
  const candidate = (i: number) => ({
    ref: { type: "doc", id: `d${i}` },
    rank: i,
    selected: i < 3,
    reason: i < 3 ? "mmr_rank" : "budget_exhausted",
  });
  const ok = event("e1", {
    selection: {
      candidates: Array.from({ length: 64 }, (_, i) => candidate(i)),
    },
  });
  const tooMany = event("e1", {
    selection: {
      candidates: Array.from({ length: 65 }, (_, i) => candidate(i)),
    },
  });
  assert.equal(v.safeParse(EventInputSchema, ok).success, true);
  const parsed = v.safeParse(EventInputSchema, tooMany);
  assert.equal(parsed.success, false);
  assert.match(parsed.issues?.[0]?.message ?? "", /at most 64 candidates/);
});

Deno.test("EventInputSchema refuses attributes outside the allowlist and unknown keys", () => {
  assert.equal(isAllowedAttributeKey("gen_ai.request.model"), true);
  assert.equal(isAllowedAttributeKey("app.tier"), true);
  assert.equal(isAllowedAttributeKey("gen_ai.input.messages"), false);
  const content = v.safeParse(
    EventInputSchema,
    event("e1", { attributes: { "gen_ai.input.messages": "hi" } }),
  );
  assert.equal(content.success, false);
  const unknown = v.safeParse(EventInputSchema, event("e1", { text: "hi" }));
  assert.equal(unknown.success, false);
});

Deno.test("envelope triggers refuse UPDATE and unreviewed DELETE", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1")]);
    await assert.rejects(
      db.client.execute("UPDATE obs_envelopes SET store = 'tool_log'"),
      /immutable/,
    );
    await assert.rejects(
      db.client.execute("DELETE FROM obs_envelopes"),
      /reviewed source expiry/,
    );
    assert.equal(await count(db, "obs_envelopes"), 1);
  });
});

Deno.test("normalizeEvent() envelope bodies are canonical JSON", () => {
  const result = normalizeEvent(
    event("e1", {
      attributes: { "app.z": 1, "app.a": "x" },
      resources: [{ role: "retrieved", id: "d1", type: "doc", version: "3" }],
      outcome: {
        status: "success",
        verified: true,
        artifact: { type: "doc", id: "a" },
      },
      selection: {
        strategy: "mmr",
        candidates: [{
          selected: true,
          reason: "mmr_rank",
          ref: { type: "doc", id: "d1" },
          score: 0.5,
        }],
      },
      preview: "text",
    }),
    0,
  );
  assert.ok("body" in result);
  assert.equal(result.body, canonicalJson(JSON.parse(result.body)));
  assert.ok(!result.body.includes('"text"'));
});

Deno.test("ingestEvents() names both items when one batch repeats an id with another payload", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const error = await ingestEvents(db, [
      event("e0"),
      event("e1"),
      event("e1", { status: "error" }),
    ]).catch((e) => e);
    assert.ok(error instanceof IngestConflictError);
    assert.match(
      error.message,
      /item 2: event_id: "e1" is repeated in this batch with a different payload \(items 1 and 2\)/,
    );
    assert.doesNotMatch(error.message, /already stored/);
    assert.equal(await count(db, "obs_events"), 0);
    const identical = await ingestEvents(db, [event("e1"), event("e1")]);
    assert.deepEqual([identical.inserted, identical.duplicates], [1, 1]);
  });
});

Deno.test("ingestEvents() reports source lines when given and refuses non-object items", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const error = await ingestEvents(
      db,
      [event("e1"), [event("e2")], event("e3", { kind: "Bad" })],
      { lines: [2, 5, 9] },
    ).catch((e) => e);
    assert.ok(error instanceof IngestBatchError);
    assert.deepEqual(error.items.map(describeEventIssue), [
      "line 5: must be a JSON object",
      "line 9: kind: must be a lower-case token (a-z, 0-9, _ . : -), at most 64 characters",
    ]);
    assert.match(error.message, /\(line 5: must be a JSON object\)/);
    const unnumbered = await ingestEvents(db, [null]).catch((e) => e);
    assert.match(unnumbered.message, /item 0: must be a JSON object/);
  });
});

Deno.test("ingestEvents() accepts an empty batch without writing", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    assert.deepEqual(await ingestEvents(db, []), {
      inserted: 0,
      duplicates: 0,
      items: [],
    });
  });
});

Deno.test("initializeObs() upgrades version 1 coverage profiles to apply to every application", async () => {
  await withDb(async (db) => {
    await migrate(db, OBS_MIGRATIONS.filter((m) => m.version === 1));
    await db.client.execute(
      `INSERT INTO obs_coverage_profiles (name, required, optional, digest, registered_at)
       VALUES ('doc_flow', '["intent"]', '[]', 'd', 0)`,
    );
    await assert.rejects(
      queryTraceEvents(db, {}),
      (error: Error) =>
        error instanceof ObsNotInitializedError &&
        /schema version 1, this build needs 3; run trace obs init/.test(
          error.message,
        ),
    );
    assert.deepEqual(await initializeObs(db), [2, 3]);
    const [profile] = await listCoverageProfiles(db);
    assert.equal(profile!.application_id, null);
    assert.equal(profile!.name, "doc_flow");
    assert.deepEqual(profile!.required, ["intent"]);
  });
});
