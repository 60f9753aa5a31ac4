import assert from "node:assert/strict";
import { captureIo, withDb, withTempDir } from "./_helpers.ts";
import { ConfigError, RefusedError } from "../lib/errors.ts";
import type { TraceDb } from "../lib/db.ts";
import { openDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs, OBS_MIGRATIONS } from "../lib/obs/mod.ts";
import {
  applyExpiry,
  backfill,
  type EnvelopeRecord,
  obsHealth,
  parity,
  planExpiry,
  retention,
  retentionPolicy,
} from "../lib/obs/maint/mod.ts";
import { loadCommand } from "../cli.ts";
import type { CliIo } from "../cli/_io.ts";

async function obs(args: string[], io: CliIo): Promise<number> {
  const loaded = await loadCommand(["obs", ...args]);
  return await loaded.command(loaded.args, io);
}

const DAY = 86_400_000;
const NOW = Date.parse("2026-09-30T00:00:00Z");
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString();

function event(id: string, extra: Record<string, unknown> = {}) {
  return {
    event_id: id,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: daysAgo(1),
    resources: [{ type: "doc", id: `doc-${id}` }],
    ...extra,
  };
}

async function count(db: TraceDb, table: string, where = "1"): Promise<number> {
  const result = await db.client.execute(
    `SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`,
  );
  return Number(result.rows[0]!.n);
}

async function withObs<T>(
  fn: (db: TraceDb, dir: string) => Promise<T>,
): Promise<T> {
  return await withDb(async (db, dir) => {
    await initializeObs(db);
    return await fn(db, dir);
  });
}

/** Ingests `n` events received `receivedDaysAgo` days before NOW. */
async function ingestMany(
  db: TraceDb,
  n: number,
  receivedDaysAgo = 1,
): Promise<void> {
  const events = Array.from({ length: n }, (_, i) => event(`e${i}`));
  await ingestEvents(db, events, { now: () => NOW - receivedDaysAgo * DAY });
}

/** `n` events received 100 days ago, and the expiry plan of those older than 30 days. */
async function oldEventsPlanned(db: TraceDb, n: number) {
  await ingestMany(db, n, 100);
  return await planExpiry(db, { olderThan: daysAgo(30), now: () => NOW });
}

// --- retention ---------------------------------------------------------------

Deno.test("retention() refuses a policy that breaks previews <= metadata <= outcomes", async () => {
  assert.throws(() => retentionPolicy({ previewsDays: 40 }), ConfigError);
  assert.throws(() => retentionPolicy({ metadataDays: 400 }), ConfigError);
  assert.throws(
    () => retentionPolicy({ previewsDays: -1, metadataDays: 0 }),
    ConfigError,
  );
  assert.deepEqual(retentionPolicy(), {
    previews: 7,
    metadata: 30,
    outcomes: 365,
  });
  await withObs(async (db) => {
    await assert.rejects(
      retention(db, { metadataDays: 3, previewsDays: 5 }),
      /previews \(5 days\)/,
    );
  });
});

async function seedRetention(db: TraceDb): Promise<void> {
  const text = "x".repeat(4_000);
  const old = Array.from(
    { length: 300 },
    (_, i) => event(`old${i}`, { started_at: daysAgo(40), preview: text }),
  );
  await ingestEvents(db, [
    ...old,
    event("old-verified", {
      started_at: daysAgo(40),
      outcome: { verified: true, status: "success" },
    }),
    event("old-unverified", {
      started_at: daysAgo(40),
      outcome: { verified: false, status: "success" },
    }),
    event("ancient-verified", {
      started_at: daysAgo(400),
      outcome: { verified: true, status: "failure" },
    }),
    event("mid", { started_at: daysAgo(10), preview: "middle-aged preview" }),
    event("fresh", { started_at: daysAgo(1), preview: "fresh preview" }),
  ], { now: () => NOW });
}

Deno.test("retention() dry run counts what would expire and changes nothing", async () => {
  await withObs(async (db) => {
    await seedRetention(db);
    const before = await count(db, "obs_events");
    const result = await retention(db, { now: () => NOW });
    assert.equal(result.dry_run, true);
    assert.equal(result.previews, 301);
    assert.equal(result.events, 301);
    assert.equal(result.outcome_events, 1);
    assert.equal(result.resources, 302);
    assert.equal(result.storage, null);
    assert.equal(await count(db, "obs_events"), before);
    assert.equal(await count(db, "obs_previews"), 302);
  });
});

Deno.test("retention() applied deletes the expired rows in batches and reports bytes reclaimed", async () => {
  await withObs(async (db) => {
    await seedRetention(db);
    const envelopes = await count(db, "obs_envelopes");
    const result = await retention(db, {
      dryRun: false,
      batchSize: 50,
      now: () => NOW,
    });
    assert.equal(result.events, 301);
    assert.equal(result.outcome_events, 1);
    assert.equal(result.previews, 301);
    assert.ok(
      result.batches > 6,
      `expected several batches, got ${result.batches}`,
    );
    const remaining = await db.client.execute(
      "SELECT event_id FROM obs_events ORDER BY event_id",
    );
    assert.deepEqual(remaining.rows.map((r) => r.event_id), [
      "fresh",
      "mid",
      "old-verified",
    ]);
    assert.equal(
      await count(db, "obs_previews"),
      1,
      "only the fresh preview is kept",
    );
    assert.equal(await count(db, "obs_resources"), 3);
    assert.equal(
      await count(db, "obs_envelopes"),
      envelopes,
      "envelopes are not retention's to delete",
    );
    const storage = result.storage!;
    assert.equal(storage.measured, "files");
    assert.equal(
      storage.method,
      "incremental_vacuum",
      "new databases reclaim in steps, without a full rewrite",
    );
    assert.equal(storage.auto_vacuum, "incremental");
    assert.ok(storage.bytes_reclaimed > 0);
    assert.ok(storage.bytes_after < storage.bytes_before);
    assert.equal(
      storage.bytes_reclaimed,
      storage.bytes_before - storage.bytes_after,
    );
  });
});

Deno.test("retention() applied stops between batches when interrupted, raises no mark, and a second run removes the rest", async () => {
  await withObs(async (db) => {
    await seedRetention(db);
    // Aborted from the third look on: two batches run, the third never starts.
    let looks = 0;
    const signal = {
      get aborted() {
        return ++looks > 2;
      },
    } as AbortSignal;
    const stopped = await retention(db, {
      dryRun: false,
      batchSize: 50,
      now: () => NOW,
      signal,
    });
    assert.equal(stopped.interrupted, true);
    assert.equal(stopped.batches, 2);
    assert.equal(stopped.previews, 100);
    assert.equal(stopped.events, 0);
    assert.equal(stopped.storage?.method, "none");
    assert.match(
      stopped.storage?.note ?? "",
      /^interrupted: nothing was reclaimed/,
    );
    assert.equal(await count(db, "obs_previews"), 202);
    assert.equal(
      await count(db, "obs_state", "key LIKE 'retention.%_before'"),
      0,
      "no cutoff is marked as applied",
    );
    const rest = await retention(db, {
      dryRun: false,
      batchSize: 50,
      now: () => NOW,
    });
    assert.equal(rest.interrupted, false);
    assert.equal(rest.previews, 201);
    assert.equal(rest.events, 301);
    assert.equal(await count(db, "obs_previews"), 1);
    assert.equal(
      await count(db, "obs_state", "key LIKE 'retention.%_before'"),
      3,
    );
  });
});

Deno.test("a parent retention removed, whose child keeps its outcome, is no missing parent link", async () => {
  await withObs(async (db) => {
    await ingestEvents(db, [
      event("turn", { kind: "intent", started_at: daysAgo(40) }),
      event("answer", {
        started_at: daysAgo(40),
        parent_event_id: "turn",
        outcome: { verified: true, status: "success" },
      }),
      event("orphan", { parent_event_id: "never-sent" }),
    ], { now: () => NOW });
    await retention(db, { dryRun: false, now: () => NOW });
    assert.deepEqual(
      (await db.client.execute("SELECT event_id FROM obs_events ORDER BY 1"))
        .rows.map((row) => row.event_id),
      ["answer", "orphan"],
    );
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(
      report.links!.missing_parent_links,
      1,
      "only the parent that was never sent is missing",
    );
  });
});

// --- source expiry -------------------------------------------------------------

const acceptAll =
  (seen: EnvelopeRecord[][]) => (envelopes: readonly EnvelopeRecord[]) => {
    seen.push([...envelopes]);
    return true;
  };

Deno.test("applyExpiry() archives then compare-and-deletes exactly the planned envelopes", async () => {
  await withObs(async (db) => {
    await ingestMany(db, 5, 100);
    await ingestEvents(db, [event("recent")], { now: () => NOW });
    const plan = await planExpiry(db, {
      olderThan: daysAgo(30),
      now: () => NOW,
    });
    assert.equal(plan.entries.length, 5);
    assert.match(plan.entries[0]!.fingerprint, /^[0-9a-f]{64}$/);
    const seen: EnvelopeRecord[][] = [];
    const result = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      acceptAll(seen),
      { batchSize: 2 },
    );
    assert.equal(result.status, "applied");
    assert.equal(result.deleted, 5);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.length, 5);
    assert.equal(await count(db, "obs_envelopes"), 1);
    assert.equal(
      await count(db, "obs_events"),
      6,
      "index metadata outlives the source",
    );
    const check = await parity(db);
    assert.equal(check.status, "ok");
    assert.equal(check.source_expired, 5);
  });
});

Deno.test("applyExpiry() stops between batches when interrupted, and the same plan again deletes the rest", async () => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 5);
    // Aborted from the fourth look on: one look before the archive, then two
    // batches run and the third never starts.
    let looks = 0;
    const signal = {
      get aborted() {
        return ++looks > 3;
      },
    } as AbortSignal;
    const seen: EnvelopeRecord[][] = [];
    const stopped = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      acceptAll(seen),
      { batchSize: 2, signal },
    );
    assert.equal(stopped.interrupted, true);
    assert.equal(stopped.status, "partial");
    assert.equal(stopped.archived, 5);
    assert.equal(stopped.deleted, 4);
    assert.equal(stopped.not_attempted, 1);
    assert.deepEqual(stopped.refused, []);
    assert.equal(await count(db, "obs_envelopes"), 1);
    const rest = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      acceptAll(seen),
      { batchSize: 2 },
    );
    assert.equal(rest.interrupted, false);
    assert.equal(rest.deleted, 1);
    assert.equal(seen[1]!.length, 1, "only the rest is archived again");
    assert.equal(rest.already_deleted, 4);
    assert.deepEqual(rest.refused, []);
    assert.equal(rest.status, "applied");
    assert.equal(await count(db, "obs_envelopes"), 0);
  });
});

Deno.test("applyExpiry() sees a signal raised by the event loop between batches", async () => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 5);
    // A Ctrl-C arrives through the event loop, as a signal listener does.
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 0);
    const result = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      acceptAll([]),
      { batchSize: 1, signal: controller.signal },
    );
    assert.equal(result.interrupted, true);
    assert.ok(result.deleted < 5);
    assert.equal(result.deleted + result.not_attempted, result.archived);
  });
});

Deno.test("applyExpiry() interrupted before the archive archives and deletes nothing", async () => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 3);
    const seen: EnvelopeRecord[][] = [];
    const result = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      acceptAll(seen),
      { signal: AbortSignal.abort() },
    );
    assert.equal(result.interrupted, true);
    assert.equal(result.status, "nothing_deleted");
    assert.equal(result.archived, 0);
    assert.equal(seen.length, 0);
    assert.equal(await count(db, "obs_envelopes"), 3);
  });
});

Deno.test("applyExpiry() refuses a confirmation that does not match, deleting nothing", async () => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 3);
    let called = false;
    await assert.rejects(
      applyExpiry(db, plan, "expire everything", () => (called = true)),
      RefusedError,
    );
    assert.equal(called, false);
    assert.equal(await count(db, "obs_envelopes"), 3);
  });
});

Deno.test("applyExpiry() aborts with nothing deleted unless the archive returns exactly true", async (t) => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 3);
    const answers: [string, unknown][] = [
      ['"true"', "true"],
      ["1", 1],
      ["a truthy object", { ok: true }],
      ["undefined", undefined],
      ["false", false],
      ['a promise of "yes"', Promise.resolve("yes")],
    ];
    for (const [label, answer] of answers) {
      await t.step(`archive returns ${label}`, async () => {
        await assert.rejects(
          applyExpiry(db, plan, plan.confirmation, () => answer),
          RefusedError,
        );
        assert.equal(await count(db, "obs_envelopes"), 3);
      });
    }
    await t.step("archive throws", async () => {
      await assert.rejects(
        applyExpiry(db, plan, plan.confirmation, () => {
          throw new Error("disk full");
        }),
        RefusedError,
      );
      assert.equal(await count(db, "obs_envelopes"), 3);
    });
    const ok = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      () => Promise.resolve(true),
    );
    assert.equal(ok.deleted, 3);
  });
});

/** Rewrites one envelope behind the immutability trigger, as a damaged file would. */
async function tamperEnvelope(db: TraceDb, seq: number): Promise<void> {
  const trigger = OBS_MIGRATIONS[0]!.statements.find((s) =>
    s.startsWith("CREATE TRIGGER obs_envelopes_no_update")
  )!;
  await db.client.execute("DROP TRIGGER obs_envelopes_no_update");
  await db.client.execute({
    sql:
      "UPDATE obs_envelopes SET body = body || ' ', fingerprint = ? WHERE seq = ?",
    args: ["f".repeat(64), seq],
  });
  await db.client.execute(trigger);
}

Deno.test("applyExpiry() refuses an envelope whose fingerprint changed since the plan", async () => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 4);
    const changed = plan.entries[1]!.seq;
    await tamperEnvelope(db, changed);
    const seen: EnvelopeRecord[][] = [];
    const result = await applyExpiry(
      db,
      plan,
      plan.confirmation,
      acceptAll(seen),
    );
    assert.equal(result.status, "partial");
    assert.equal(result.deleted, 3);
    assert.deepEqual(result.refused, [{
      seq: changed,
      code: "fingerprint_changed",
    }]);
    assert.ok(
      !seen[0]!.some((e) => e.seq === changed),
      "a changed envelope is not archived",
    );
    assert.equal(await count(db, "obs_envelopes", `seq = ${changed}`), 1);
  });
});

Deno.test("applyExpiry() refuses a plan altered after review", async () => {
  await withObs(async (db) => {
    const plan = await oldEventsPlanned(db, 2);
    const altered = { ...plan, entries: plan.entries.slice(0, 1) };
    await assert.rejects(
      applyExpiry(db, altered, plan.confirmation, () => true),
      /altered/,
    );
    await assert.rejects(
      applyExpiry(db, { nope: 1 }, "x", () => true),
      ConfigError,
    );
    assert.equal(await count(db, "obs_envelopes"), 2);
  });
});

// --- parity ------------------------------------------------------------------

Deno.test("parity() passes when every envelope matches its index rows", async () => {
  await withObs(async (db) => {
    await ingestMany(db, 7);
    const result = await parity(db, { pageSize: 3 });
    assert.equal(result.status, "ok");
    assert.equal(result.passed, true);
    assert.equal(result.matched, 7);
    assert.equal(result.pages, 3);
  });
});

Deno.test("parity() reports content-free mismatches for differing and missing rows", async () => {
  await withObs(async (db) => {
    await ingestMany(db, 5);
    await db.client.execute(
      "UPDATE obs_events SET status = 'error' WHERE seq = 2",
    );
    await db.client.execute("DELETE FROM obs_resources WHERE seq = 3");
    await db.client.execute("DELETE FROM obs_events WHERE seq = 4");
    const result = await parity(db, { pageSize: 2 });
    assert.equal(result.status, "mismatch");
    assert.equal(result.passed, false);
    assert.deepEqual(result.mismatches, [
      { seq: 2, code: "index_differs", fields: ["status"] },
      { seq: 3, code: "resources_differ" },
      { seq: 4, code: "index_missing" },
    ]);
  });
});

Deno.test("parity() fails closed when the window exceeds the page bound", async () => {
  await withObs(async (db) => {
    await ingestMany(db, 5);
    const result = await parity(db, { pageSize: 2, pageBound: 2 });
    assert.equal(result.status, "incomplete");
    assert.equal(result.passed, false);
    assert.equal(result.stopped_after_seq, 4);
    const exact = await parity(db, { pageSize: 5, pageBound: 1 });
    assert.equal(
      exact.status,
      "ok",
      "a window that fits the bound exactly is complete",
    );
  });
});

// --- backfill ----------------------------------------------------------------

Deno.test("backfill() dry run reports changes without writing; apply rebuilds from envelopes", async () => {
  await withObs(async (db) => {
    await ingestMany(db, 6);
    const envelopes = await db.client.execute(
      "SELECT seq, body FROM obs_envelopes ORDER BY seq",
    );
    await db.client.execute("DELETE FROM obs_events WHERE seq IN (1, 5)");
    await db.client.execute(
      "UPDATE obs_events SET kind = 'tampered' WHERE seq = 3",
    );
    const dry = await backfill(db, { pageSize: 4 });
    assert.equal(dry.dry_run, true);
    assert.deepEqual([
      dry.scanned,
      dry.missing,
      dry.changed,
      dry.unchanged,
      dry.written,
    ], [4, 1, 1, 2, 0]);
    assert.ok(dry.next_cursor);
    assert.equal(await count(db, "obs_events"), 4);
    assert.equal(await count(db, "obs_events", "kind = 'tampered'"), 1);
    let cursor: string | null = null;
    let written = 0;
    do {
      const page = await backfill(db, { dryRun: false, pageSize: 4, cursor });
      written += page.written;
      cursor = page.next_cursor;
    } while (cursor);
    assert.equal(written, 3);
    assert.equal((await parity(db)).status, "ok");
    const after = await db.client.execute(
      "SELECT seq, body FROM obs_envelopes ORDER BY seq",
    );
    assert.deepEqual(
      after.rows,
      envelopes.rows,
      "envelopes are never rewritten",
    );
    await assert.rejects(backfill(db, { cursor: "not-a-cursor" }), ConfigError);
  });
});

Deno.test("backfill() does not bring back rows that retention removed", async () => {
  await withObs(async (db) => {
    await ingestEvents(db, [
      event("old", { started_at: daysAgo(60) }),
      event("new"),
    ], {
      now: () => NOW,
    });
    await retention(db, { dryRun: false, now: () => NOW, reclaim: false });
    assert.equal(await count(db, "obs_events"), 1);
    const result = await backfill(db, { dryRun: false });
    assert.equal(result.skipped_retained, 1);
    assert.equal(result.written, 0);
    assert.equal(await count(db, "obs_events"), 1);
    const check = await parity(db);
    assert.equal(check.status, "ok");
    assert.equal(check.retained_out, 1);
  });
});

Deno.test("a backfill page the database refuses says why, in the result and on the terminal", async () => {
  await withObs(async (db, dir) => {
    await ingestMany(db, 3);
    await db.client.execute("DELETE FROM obs_events WHERE seq = 2");
    await db.client.execute(
      `CREATE TRIGGER refuse_backfill BEFORE INSERT ON obs_events
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    );
    const page = await backfill(db, { dryRun: false });
    assert.equal(page.written, 0);
    assert.deepEqual(page.failed, [{ seq: 2, code: "write_failed" }]);
    assert.match(page.write_error ?? "", /refused by the test/);
    const io = captureIo();
    assert.equal(await obs(["backfill", "--apply", "--data-dir", dir], io), 1);
    assert.match(io.stdout(), /, 1 failed\n/);
    assert.match(
      io.stdout(),
      /^Writing a page failed: .*refused by the test$/m,
    );
    const dry = await backfill(db);
    assert.equal(dry.write_error, null);
  });
});

Deno.test("backfill() writes a page another backfill wrote meanwhile as unchanged, not failed", async () => {
  await withObs(async (db) => {
    await ingestMany(db, 4);
    await db.client.execute("DELETE FROM obs_events WHERE seq IN (2, 3)");
    // The other backfill commits between this one's read of the page and
    // its write, as two `trace obs backfill --apply` running at once do.
    let other: Promise<unknown> | null = null;
    const batch = db.client.batch.bind(db.client);
    db.client.batch = (async (statements, mode) => {
      if (mode === "write" && other === null) {
        other = backfill(db, { dryRun: false });
        await other;
      }
      return await batch(statements, mode);
    }) as typeof db.client.batch;
    let page;
    try {
      page = await backfill(db, { dryRun: false });
    } finally {
      db.client.batch = batch;
    }
    assert.ok(other, "the other backfill ran");
    assert.deepEqual(page.failed, []);
    assert.equal(page.write_error, null);
    assert.equal(page.written + page.unchanged, 4);
    assert.equal((await parity(db)).status, "ok");
  });
});

// --- CLI ---------------------------------------------------------------------

Deno.test("obs() plans and applies a source expiry through a synced NDJSON archive", async () => {
  await withTempDir(async (dir) => {
    const dataDir = `${dir}/data`;
    const io = captureIo();
    assert.equal(await obs(["init", "--data-dir", dataDir], io), 0);
    const db = await openDb({ dataDir });
    try {
      await ingestMany(db, 3, 100);
    } finally {
      db.close();
    }
    const planPath = `${dir}/plan.json`;
    const planIo = captureIo();
    const planArgs = [
      "expiry-plan",
      "--older-than",
      daysAgo(30),
      "--out",
      planPath,
    ];
    assert.equal(await obs([...planArgs, "--data-dir", dataDir], planIo), 0);
    const plan = JSON.parse(await Deno.readTextFile(planPath));
    const wrong = captureIo();
    const applyArgs = [
      "expiry-apply",
      "--plan",
      planPath,
      "--archive-dir",
      `${dir}/archive`,
    ];
    await assert.rejects(
      obs([...applyArgs, "--confirm", "nope", "--data-dir", dataDir], wrong),
      RefusedError,
    );
    const applyIo = captureIo();
    const code = await obs(
      [
        ...applyArgs,
        "--confirm",
        plan.confirmation,
        "--json",
        "--data-dir",
        dataDir,
      ],
      applyIo,
    );
    assert.equal(code, 0, applyIo.stderr());
    assert.equal(JSON.parse(applyIo.stdout()).deleted, 3);
    assert.match(
      applyIo.stderr(),
      /removed by trace obs retention, not by source expiry/,
      "says the index still holds the expired events",
    );
    const help = captureIo();
    await obs(["expiry-apply", "--help"], help);
    assert.match(help.stdout(), /removed by trace obs retention/);
    const files = [...Deno.readDirSync(`${dir}/archive`)];
    assert.equal(files.length, 1);
    const lines = (await Deno.readTextFile(`${dir}/archive/${files[0]!.name}`))
      .trim().split("\n");
    assert.equal(lines.length, 3);
    assert.equal(JSON.parse(lines[0]!).seq, 1);
  });
});

Deno.test("obs() parity and retention exit codes follow their results", async () => {
  await withTempDir(async (dataDir) => {
    assert.equal(await obs(["init", "--data-dir", dataDir], captureIo()), 0);
    const db = await openDb({ dataDir });
    try {
      await ingestMany(db, 3);
      await db.client.execute("DELETE FROM obs_events WHERE seq = 2");
    } finally {
      db.close();
    }
    assert.equal(await obs(["parity", "--data-dir", dataDir], captureIo()), 1);
    assert.equal(
      await obs([
        "parity",
        "--page-size",
        "1",
        "--page-bound",
        "1",
        "--data-dir",
        dataDir,
      ], captureIo()),
      2,
    );
    const io = captureIo();
    assert.equal(
      await obs(["retention", "--json", "--data-dir", dataDir], io),
      0,
    );
    assert.equal(JSON.parse(io.stdout()).dry_run, true);
    await assert.rejects(
      obs(
        ["retention", "--previews-days", "90", "--data-dir", dataDir],
        captureIo(),
      ),
      ConfigError,
    );
  });
});
