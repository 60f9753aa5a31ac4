/**
 * What keeps health cheap at any size: row counts kept exact by their
 * writers and triggers,
 * link checks a `HealthMonitor` keeps with their age, one report shared by
 * concurrent callers, and summaries that read a bounded window. Timings are
 * measured by `deno task bench:obs`, never here.
 */

import assert from "node:assert/strict";
import { withDb, withTempDir } from "./_helpers.ts";
import { openDb, openMemoryDb, type TraceDb } from "../lib/db.ts";
import {
  IngestConflictError,
  ingestEvents,
  RowCounts,
} from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { backfill, HealthMonitor, obsHealth } from "../lib/obs/maint/mod.ts";
import { summarizeTraceEvents } from "../lib/obs/query/mod.ts";

function event(i: number, extra: Record<string, unknown> = {}) {
  return {
    event_id: `e${i}`,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: i % 2 === 0 ? "retrieval" : "llm_call",
    started_at: new Date(Date.UTC(2026, 8, 1, 0, 0, i)).toISOString(),
    resources: [{ type: "doc", id: `d${i}` }],
    ...extra,
  };
}

/** Counts every table row by row, as the kept counts must say. */
async function actualCounts(db: TraceDb) {
  const count = async (sql: string) =>
    Number((await db.client.execute(sql)).rows[0]!.n);
  return {
    envelopes: await count("SELECT COUNT(*) AS n FROM obs_envelopes"),
    events: await count("SELECT COUNT(*) AS n FROM obs_events"),
    resources: await count("SELECT COUNT(*) AS n FROM obs_resources"),
    previews: await count("SELECT COUNT(*) AS n FROM obs_previews"),
    truncated: await count(
      "SELECT COUNT(*) AS n FROM obs_previews WHERE truncated = 1",
    ),
    conversation: await count(
      "SELECT COUNT(*) AS n FROM obs_events WHERE store = 'conversation'",
    ),
  };
}

async function keptCounts(db: TraceDb) {
  const report = await obsHealth(db, { latencySamples: 1 });
  const counts = report.counts!;
  return {
    envelopes: counts.envelopes,
    events: counts.events,
    resources: counts.resources,
    previews: counts.previews,
    truncated: report.truncation!.truncated_previews,
    conversation: counts.by_store.conversation,
  };
}

Deno.test("obs_counts stays exact through inserts, cascades, store changes and guarded deletes", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [
      event(1, { preview: "x".repeat(20_000) }),
      event(2, { preview: "short", store: "conversation" }),
      event(3),
      event(4, { store: "conversation" }),
    ]);
    assert.deepEqual(await keptCounts(db), await actualCounts(db));
    // Deleting an event cascades to its resources and preview.
    await db.client.execute("DELETE FROM obs_events WHERE event_id = 'e1'");
    await db.client.execute(
      "UPDATE obs_events SET store = 'trace' WHERE event_id = 'e4'",
    );
    await db.client.execute("DELETE FROM obs_previews");
    // An envelope goes only through an expiry grant.
    await db.client.execute(
      `INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at)
       SELECT seq, fingerprint, 0 FROM obs_envelopes WHERE event_id = 'e3'`,
    );
    await db.client.execute("DELETE FROM obs_envelopes WHERE event_id = 'e3'");
    const kept = await keptCounts(db);
    assert.deepEqual(kept, await actualCounts(db));
    assert.deepEqual(kept, {
      envelopes: 3,
      events: 3,
      resources: 3,
      previews: 0,
      truncated: 0,
      conversation: 1,
    });
  });
});

/** Ingest, refused and retried groups, and a rebuild from envelopes, with the counts checked after each. */
async function countEveryWrite(db: TraceDb) {
  await initializeObs(db);
  const exact = async (step: string) =>
    assert.deepEqual(await keptCounts(db), await actualCounts(db), step);
  await ingestEvents(db, [
    event(1, { preview: "x".repeat(20_000) }),
    event(2, { preview: "short", store: "conversation" }),
  ]);
  await exact("after a batch");
  // Ids already stored: the optimistic insert rolls back and the group is planned again.
  await ingestEvents(db, [
    event(2, { preview: "short", store: "conversation" }),
    event(3),
  ]);
  await exact("after a batch that repeats a stored event");
  await assert.rejects(
    ingestEvents(db, [event(4), event(1, { kind: "changed" })]),
    IngestConflictError,
  );
  await exact("after a refused batch");
  await db.client.execute(
    "DELETE FROM obs_events WHERE event_id IN ('e1', 'e3')",
  );
  await db.client.execute(
    "UPDATE obs_events SET kind = 'tampered' WHERE event_id = 'e2'",
  );
  await exact("after deletes");
  const rebuilt = await backfill(db, { dryRun: false });
  assert.deepEqual([rebuilt.missing, rebuilt.changed], [2, 1]);
  await exact("after a rebuild from envelopes");
  assert.deepEqual(await keptCounts(db), {
    envelopes: 3,
    events: 3,
    resources: 3,
    previews: 1,
    truncated: 0,
    conversation: 1,
  });
}

Deno.test("inserts are counted by their writers on a local file, in memory and by a rebuild", async (t) => {
  await t.step("local file (engine connection)", () => withDb(countEveryWrite));
  await t.step("in memory (client)", async () => {
    const db = openMemoryDb();
    try {
      await countEveryWrite(db);
    } finally {
      db.close();
    }
  });
});

Deno.test("RowCounts counts events by store and truncated previews, and refuses a table it does not count", () => {
  const counts = new RowCounts();
  counts.add([
    {
      table: "obs_events",
      columns: ["seq", "store"],
      rows: [[1, "trace"], [2, "tool_log"], [3, "trace"]],
    },
    { table: "obs_previews", columns: ["truncated"], rows: [[1], [0]] },
    { table: "obs_resources", columns: [], rows: [] },
  ]);
  assert.deepEqual(counts.statement()?.args, [
    "events.trace",
    2,
    "events.tool_log",
    1,
    "previews",
    2,
    "previews.truncated",
    1,
  ]);
  assert.equal(
    new RowCounts().statement(),
    null,
    "nothing inserted, no statement",
  );
  assert.throws(
    () => counts.add([{ table: "obs_state", columns: [], rows: [[1]] }]),
    /does not count rows of obs_state/,
  );
});

Deno.test("upgrading to obs_counts counts the rows already stored", async () => {
  await withTempDir(async (dataDir) => {
    // A version 2 index with rows: written by this build, then taken back
    // to version 2 (the counts table and its triggers removed, and the
    // table version 7 adds; versions 4 to 6 replace indexes and triggers
    // or create what is missing, so they apply again as they are).
    const old = await openDb({ dataDir });
    try {
      await initializeObs(old);
      await ingestEvents(old, [event(1, { preview: "p" }), event(2)]);
      const triggers = await old.client.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'obs_counts_%'",
      );
      for (const row of triggers.rows) {
        await old.client.execute(`DROP TRIGGER ${String(row.name)}`);
      }
      await old.client.execute("DROP TABLE obs_counts");
      await old.client.execute("DROP TABLE obs_archived_envelopes");
      await old.client.execute(
        "DELETE FROM schema_migrations WHERE component = 'obs' AND version >= 3",
      );
    } finally {
      old.close();
    }
    const db = await openDb({ dataDir });
    try {
      assert.deepEqual(await initializeObs(db), [3, 4, 5, 6, 7]);
      assert.deepEqual(await keptCounts(db), await actualCounts(db));
      assert.equal((await keptCounts(db)).events, 2);
    } finally {
      db.close();
    }
  });
});

Deno.test("HealthMonitor keeps link checks, says how old they are and refreshes them in the background", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event(1), event(2)]);
    let now = Date.parse("2026-09-02T00:00:00Z");
    const monitor = new HealthMonitor(db, {
      latencySamples: 1,
      freshBelowEvents: 0,
      maxAgeMs: 60_000,
      now: () => now,
    });
    const first = await monitor.report();
    assert.deepEqual(
      [first.links!.missing_parent_links, first.links!.age_seconds],
      [0, 0],
    );
    await ingestEvents(db, [event(3, { parent_event_id: "gone" })]);
    now += 30_000;
    const kept = await monitor.report();
    assert.equal(kept.links!.missing_parent_links, 0, "kept, not recomputed");
    assert.equal(kept.links!.age_seconds, 30);
    assert.equal(kept.links!.checked_at, first.links!.checked_at);
    assert.equal(kept.counts!.events, 3, "counts are always current");
    now += 31_000;
    const stale = await monitor.report();
    assert.equal(stale.links!.missing_parent_links, 0);
    assert.equal(stale.links!.age_seconds, 61, "a stale figure says its age");
    await monitor.idle();
    const refreshed = await monitor.report();
    assert.equal(refreshed.links!.missing_parent_links, 1);
    assert.equal(refreshed.links!.age_seconds, 0);
  });
});

Deno.test("HealthMonitor checks small indexes afresh on every report", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const monitor = new HealthMonitor(db, { latencySamples: 1 });
    assert.equal((await monitor.report()).links!.missing_parent_links, 0);
    await ingestEvents(db, [event(1, { parent_event_id: "gone" })]);
    assert.equal((await monitor.report()).links!.missing_parent_links, 1);
  });
});

Deno.test("HealthMonitor gives concurrent callers one shared report", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const monitor = new HealthMonitor(db, { latencySamples: 1 });
    const reports = await Promise.all(
      Array.from({ length: 5 }, () => monitor.report()),
    );
    for (const report of reports) assert.equal(report, reports[0]);
    assert.notEqual(await monitor.report(), reports[0], "then a new one");
  });
});

Deno.test("summarizeTraceEvents() reads a bounded window and says when it left events out", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, Array.from({ length: 6 }, (_, i) => event(i + 1)));
    const scoped = await summarizeTraceEvents(db, {
      application_id: "app-1",
    }, { maxEvents: 4 });
    assert.deepEqual(scoped.window, {
      limit: 4,
      basis: "selected",
      truncated: true,
    });
    assert.equal(scoped.events, 4);
    assert.equal(scoped.first_ts, "2026-09-01T00:00:03.000Z", "the newest 4");
    assert.equal(scoped.read_completeness, "partial");
    // Without a scope the window is the newest events of the index.
    const unscoped = await summarizeTraceEvents(db, {
      kinds: ["retrieval"],
    }, { maxEvents: 4 });
    assert.deepEqual(unscoped.window, {
      limit: 4,
      basis: "index",
      truncated: true,
    });
    assert.equal(unscoped.events, 2, "e4 and e6 among e3..e6");
    const whole = await summarizeTraceEvents(db, { application_id: "app-1" });
    assert.deepEqual(
      [whole.window.truncated, whole.events, whole.read_completeness],
      [false, 6, "complete"],
    );
  });
});
