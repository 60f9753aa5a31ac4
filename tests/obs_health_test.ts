import assert from "node:assert/strict";
import { captureIo, exists, withDb, withTempDir } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { openDb } from "../lib/db.ts";
import {
  expectedSchemaObjects,
  incrementCounter,
  initializeObs,
  OBS_SCHEMA_VERSION,
  resetCounters,
} from "../lib/obs/mod.ts";
import {
  HEALTH_ALERT_CODES,
  HEALTH_ALERT_MESSAGES,
  obsHealth,
  parity,
  parseErasureSubject,
  percentile,
} from "../lib/obs/maint/mod.ts";
import {
  eraseSubject,
  erasureKeyFor,
  planSubjectErasure,
} from "../lib/runs/mod.ts";
import { ERASURE_KEY_FILE } from "../lib/obs/maint/mod.ts";
import { join } from "node:path";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { loadCommand } from "../cli.ts";
import type { CliIo } from "../cli/_io.ts";

async function obs(args: string[], io: CliIo): Promise<number> {
  const loaded = await loadCommand(["obs", ...args]);
  return await loaded.command(loaded.args, io);
}

function event(id: string, extra: Record<string, unknown> = {}) {
  return {
    event_id: id,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: "2026-09-01T00:00:00Z",
    ...extra,
  };
}

async function seed(db: TraceDb): Promise<void> {
  await initializeObs(db);
  await ingestEvents(db, [
    event("root", {
      attributes: {
        "instrumentation.name": "sdk",
        "instrumentation.version": "1.2.0",
      },
    }),
    event("child", { parent_event_id: "root", store: "tool_log" }),
    event("orphan", { parent_event_id: "gone" }),
    event("long", { preview: "y".repeat(20_000) }),
    event("short", { preview: "fits", store: "conversation" }),
  ]);
}

/** A data directory whose database {@link seed} filled, closed again. */
async function withSeededDataDir(
  fn: (dataDir: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dataDir) => {
    const db = await openDb({ dataDir });
    try {
      await seed(db);
    } finally {
      db.close();
    }
    await fn(dataDir);
  });
}

const codes = (alerts: { code: string }[]) => alerts.map((a) => a.code);

Deno.test("obsHealth() reports an unprovisioned index without creating tables", async () => {
  await withDb(async (db) => {
    const report = await obsHealth(db);
    assert.equal(report.status, "failing");
    assert.equal(report.schema.provisioned, false);
    assert.equal(report.counts, null);
    assert.deepEqual(codes(report.alerts), [
      "process_counters_unknown",
      "schema_missing",
    ]);
    const tables = await db.client.execute(
      "SELECT name FROM sqlite_master WHERE name LIKE 'obs_%'",
    );
    assert.equal(tables.rows.length, 0);
  });
});

Deno.test("obsHealth() counts rows, broken links and truncation with sorted alerts", async () => {
  await withDb(async (db) => {
    await seed(db);
    const report = await obsHealth(db, { latencySamples: 2 });
    assert.equal(report.schema.version, OBS_SCHEMA_VERSION);
    assert.equal(report.counts!.envelopes, 5);
    assert.equal(report.counts!.events, 5);
    assert.equal(report.counts!.previews, 2);
    assert.deepEqual(report.counts!.by_store, {
      trace: 3,
      conversation: 1,
      tool_log: 1,
    });
    assert.equal(report.links!.missing_parent_links, 1);
    assert.deepEqual(report.truncation, { previews: 2, truncated_previews: 1 });
    assert.equal(report.indexes.ready, true);
    assert.ok(report.latency!.probes.some((p) => p.name === "query_page"));
    assert.ok(
      report.instrumentation.versions.some((v) =>
        v.version === "1.2.0" && v.events === 1
      ),
    );
    assert.deepEqual(codes(report.alerts), [
      "missing_parent_links",
      "parity_unknown",
      "process_counters_unknown",
      "truncated_previews",
    ]);
    assert.equal(report.status, "degraded");
    const again = await obsHealth(db, { latencySamples: 1 });
    assert.deepEqual(again.alerts, report.alerts, "alerts are deterministic");
  });
});

Deno.test("obsHealth() calls a fresh empty index ok with only notes", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(report.status, "ok");
    assert.deepEqual(
      report.alerts.map((a) => [a.code, a.severity]),
      [["parity_unknown", "info"], ["process_counters_unknown", "info"]],
    );
    assert.match(report.alerts[0]!.message, /run trace obs parity$/);
    await ingestEvents(db, [event("first")]);
    const after = await obsHealth(db, { latencySamples: 1 });
    assert.equal(
      after.status,
      "unknown",
      "a check that never ran makes health unknown, not degraded",
    );
    const unchecked = after.alerts.find((a) => a.code === "parity_unknown");
    assert.deepEqual([unchecked?.severity, unchecked?.count], ["info", 1]);
  });
});

Deno.test("HEALTH_ALERT_MESSAGES gives every alert one sentence with what to do", () => {
  for (const code of HEALTH_ALERT_CODES) {
    const message = HEALTH_ALERT_MESSAGES[code];
    assert.match(message, /^[A-Z][^\n]*[^.]$/, code);
    assert.ok(message.includes(";"), `${code} says what to do`);
  }
});

Deno.test("obsHealth() reports counters of another process as unknown, not zero", async () => {
  await withDb(async (db) => {
    await seed(db);
    resetCounters();
    const reader = await obsHealth(db, { latencySamples: 1 });
    assert.equal(reader.counters.state, "unknown");
    assert.equal(reader.counters.values.write_failures, null);
    assert.equal(reader.counters.values.callback_failures, null);
    const writer = await obsHealth(db, {
      latencySamples: 1,
      processCounters: true,
    });
    assert.equal(writer.counters.state, "recorded");
    assert.equal(writer.counters.values.write_failures, 0);
    assert.ok(!codes(writer.alerts).includes("process_counters_unknown"));
    incrementCounter("write_failures");
    incrementCounter("callback_failures", 2);
    const failing = await obsHealth(db, {
      latencySamples: 1,
      processCounters: true,
    });
    assert.equal(failing.status, "failing");
    const write = failing.alerts.find((a) => a.code === "write_failures");
    assert.deepEqual(write, {
      code: "write_failures",
      severity: "critical",
      count: 1,
      message: HEALTH_ALERT_MESSAGES.write_failures,
    });
    assert.equal(
      failing.alerts.find((a) => a.code === "callback_failures")?.count,
      2,
    );
    resetCounters();
  });
});

Deno.test("obsHealth() raises index_not_ready when a declared index is missing", async () => {
  await withDb(async (db) => {
    await seed(db);
    assert.ok(expectedSchemaObjects().includes("obs_events_agent"));
    await db.client.execute("DROP INDEX obs_events_agent");
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.deepEqual(report.indexes.missing, ["obs_events_agent"]);
    assert.ok(codes(report.alerts).includes("index_not_ready"));
    assert.equal(report.status, "failing");
  });
});

Deno.test("obsHealth() follows the last recorded parity check", async () => {
  await withDb(async (db) => {
    await seed(db);
    await parity(db, { record: true });
    const ok = await obsHealth(db, { latencySamples: 1 });
    assert.equal(ok.parity.status, "ok");
    assert.ok(!codes(ok.alerts).some((c) => c.startsWith("parity_")));
    await db.client.execute(
      "UPDATE obs_events SET kind = 'x' WHERE event_id = 'root'",
    );
    await parity(db, { record: true });
    const failed = await obsHealth(db, { latencySamples: 1 });
    assert.ok(codes(failed.alerts).includes("parity_failed"));
    assert.equal(failed.status, "failing");
  });
});

Deno.test("percentile() uses the nearest rank", () => {
  assert.equal(percentile([], 50), 0);
  assert.equal(percentile([5, 1, 3, 2, 4], 50), 3);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95), 10);
});

Deno.test("obs() health prints JSON and exits 1 only when failing", async () => {
  await withSeededDataDir(async (dataDir) => {
    const io = captureIo();
    assert.equal(
      await obs(
        ["health", "--json", "--samples", "1", "--data-dir", dataDir],
        io,
      ),
      0,
    );
    const report = JSON.parse(io.stdout());
    assert.equal(report.counters.state, "unknown");
    assert.equal(report.status, "degraded");
    const text = captureIo();
    await obs(["health", "--samples", "1", "--data-dir", dataDir], text);
    assert.match(
      text.stdout(),
      /\n {2}info parity_unknown \(5\): No whole-index parity check has run yet; run trace obs parity\n/,
    );
    const empty = await Deno.makeTempDir({ dir: dataDir });
    const missing = captureIo();
    await assert.rejects(
      () => obs(["health", "--data-dir", empty], missing),
      /No Trace data at .* yet/,
    );
  });
});

Deno.test("expectedSchemaObjects() replays drops, table rebuilds and renames in version order", () => {
  const step = (version: number, statements: string[]) => ({
    component: "obs",
    version,
    name: `v${version}`,
    statements,
  });
  const objects = expectedSchemaObjects([
    step(2, [
      "CREATE TABLE obs_p_v2 (a, b, PRIMARY KEY (a, b))",
      "DROP TABLE obs_p",
      "ALTER TABLE obs_p_v2 RENAME TO obs_p",
      "CREATE INDEX obs_p_b ON obs_p (b)",
      "DROP INDEX obs_t_a",
      "CREATE INDEX IF NOT EXISTS obs_t_c ON obs_t (c)",
    ]),
    step(1, [
      "CREATE TABLE obs_t (a, c)",
      "CREATE INDEX obs_t_a ON obs_t (a)",
      "CREATE TABLE obs_p (name)",
      "CREATE UNIQUE INDEX obs_p_name ON obs_p (name)",
      `CREATE TRIGGER obs_t_guard BEFORE UPDATE ON obs_t
BEGIN
  SELECT RAISE(ABORT, 'no');
END`,
    ]),
  ]);
  assert.deepEqual(objects, ["obs_p_b", "obs_t_c", "obs_t_guard"]);
});

Deno.test("obsHealth() counts a profile registered for another tenant as unregistered", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [
      event("mine", { coverage_profile: "rag" }),
      event("theirs", { application_id: "app-2", coverage_profile: "rag" }),
      event("shared", { application_id: "app-3", coverage_profile: "all" }),
    ]);
    const insert = (application: string, name: string) =>
      db.client.execute({
        sql: `INSERT INTO obs_coverage_profiles
              (application_id, name, required, optional, digest, registered_at)
              VALUES (?, ?, '[]', '[]', 'd', 0)`,
        args: [application, name],
      });
    await insert("app-1", "rag");
    await insert("", "all");
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(report.links!.unregistered_coverage_profiles, 1);
  });
});

Deno.test("obsHealth() does not report a parent an erasure removed as missing, and keeps nothing of it", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [
      event("p-ada", {
        user_id: "ada-7f3e",
        thread_id: "t-ada",
        root_trace_id: "task-1",
      }),
      event("c-bob", {
        user_id: "bob",
        parent_event_id: "p-ada",
        root_trace_id: "task-1",
      }),
      event("c-ada", {
        user_id: "ada-7f3e",
        parent_event_id: "p-ada",
        root_trace_id: "task-1",
      }),
      event("orphan", { user_id: "bob", parent_event_id: "never-sent" }),
    ]);
    const before = await obsHealth(db, { latencySamples: 1 });
    assert.equal(before.links!.missing_parent_links, 1, "the orphan only");

    const subject = parseErasureSubject({
      application_id: "app-1",
      user_id: "ada-7f3e",
    });
    const key = new Uint8Array(32).fill(3);
    const plan = await planSubjectErasure(db, subject, { key });
    assert.equal(plan.events, 2);
    await eraseSubject(db, subject, plan.confirmation, { key });
    const after = await obsHealth(db, { latencySamples: 1 });
    assert.equal(
      after.links!.missing_parent_links,
      1,
      "bob's event lost its parent to the erasure; the orphan still counts",
    );
    const state = await db.client.execute(
      "SELECT key || ' ' || value AS row FROM obs_state",
    );
    const rows = state.rows.map((r) => String(r.row)).join("\n");
    assert.doesNotMatch(
      rows,
      /ada|p-ada|t-ada/,
      "nothing of the erased parent",
    );

    // Erasing bob's events too drops the mark with the event it was about.
    const bob = parseErasureSubject({
      application_id: "app-1",
      user_id: "bob",
    });
    const bobPlan = await planSubjectErasure(db, bob, { key });
    await eraseSubject(db, bob, bobPlan.confirmation, { key });
    const marks = await db.client.execute(
      "SELECT COUNT(*) AS n FROM obs_state WHERE key LIKE 'erasure.parent_erased:%'",
    );
    assert.equal(Number(marks.rows[0]!.n), 0);
    const last = await obsHealth(db, { latencySamples: 1 });
    assert.equal(last.links!.missing_parent_links, 0);
  });
});

Deno.test("obs health says whether erasure can run: the key absent, present, lost while receipts need it, or unusable", async () => {
  await withSeededDataDir(async (dataDir) => {
    const health = async () => {
      const io = captureIo();
      const args = [
        "health",
        "--json",
        "--samples",
        "1",
        "--data-dir",
        dataDir,
      ];
      await obs(args, io);
      const report = JSON.parse(io.stdout());
      return {
        state: report.erasure_key,
        alerts: codes(report.alerts),
        report,
      };
    };
    assert.equal(
      (await health()).state,
      "absent",
      "the first erasure makes it",
    );
    const key = join(dataDir, ERASURE_KEY_FILE);
    const writer = await openDb({ dataDir });
    try {
      const made = await erasureKeyFor(writer, dataDir);
      assert.equal((await health()).state, "present");
      await ingestEvents(writer, [event("ada", { user_id: "ada" })]);
      const subject = parseErasureSubject({
        application_id: "app-1",
        user_id: "ada",
      });
      const plan = await planSubjectErasure(writer, subject, { key: made });
      await eraseSubject(writer, subject, plan.confirmation, { key: made });
    } finally {
      writer.close();
    }
    await Deno.remove(key);
    const lost = await health();
    assert.equal(lost.state, "lost");
    assert.deepEqual(
      lost.report.alerts.find((a: { code: string }) =>
        a.code === "erasure_key_lost"
      )?.severity,
      "warning",
    );
    assert.equal(lost.report.status, "degraded");
    assert.equal(await exists(key), false, "health makes no key");
    const text = captureIo();
    await obs(["health", "--samples", "1", "--data-dir", dataDir], text);
    assert.match(
      text.stdout(),
      /\n {2}warning erasure_key_lost: The data directory's erasure\.key is missing while the ledger holds erasure receipts made with it, so erasure is off \(everything else works\); restore erasure\.key from a backup/,
    );
    await Deno.writeTextFile(key, "not a key\n", { mode: 0o600 });
    const unusable = await health();
    assert.equal(unusable.state, "unusable");
    assert.ok(unusable.alerts.includes("erasure_key_unusable"));
  });
});

Deno.test("obsHealth() leaves the erasure key unchecked unless told, and a lost one degrades it", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const plain = await obsHealth(db, { latencySamples: 1 });
    assert.equal(plain.erasure_key, "unchecked");
    assert.ok(!codes(plain.alerts).some((c) => c.startsWith("erasure_key")));
    const lost = await obsHealth(db, { latencySamples: 1, erasureKey: "lost" });
    assert.equal(lost.status, "degraded");
    assert.ok(codes(lost.alerts).includes("erasure_key_lost"));
  });
});
