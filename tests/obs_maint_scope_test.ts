import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import { RefusedError } from "../lib/errors.ts";
import type { TraceDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import {
  applyExpiry,
  confirmationFor,
  type ExpiryPlan,
  HEALTH_ALERT_MESSAGES,
  obsHealth,
  parity,
  planExpiry,
  readRecordedParity,
  retention,
} from "../lib/obs/maint/mod.ts";
import { canonicalJson, sha256Hex } from "../lib/canonical_json.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-09-30T00:00:00Z");
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString();

function event(id: string, extra: Record<string, unknown> = {}) {
  return {
    event_id: id,
    application_id: "app1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: daysAgo(1),
    ...extra,
  };
}

async function withObs<T>(fn: (db: TraceDb) => Promise<T>): Promise<T> {
  return await withDb(async (db) => {
    await initializeObs(db);
    return await fn(db);
  });
}

const codes = (alerts: { code: string }[]) => alerts.map((a) => a.code);

async function twoTenants(db: TraceDb): Promise<void> {
  await ingestEvents(db, [
    event("a1"),
    event("a2"),
    event("b1", { application_id: "app2" }),
    event("b2", { application_id: "app2" }),
  ], { now: () => NOW });
}

async function corruptApp2(db: TraceDb): Promise<void> {
  await db.client.execute(
    "UPDATE obs_events SET status = 'error' WHERE application_id = 'app2'",
  );
}

// --- parity per scope ----------------------------------------------------------

Deno.test("parity() of one tenant never clears a whole-index mismatch in health", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    await corruptApp2(db);
    let clock = NOW;
    const now = () => clock++;
    const whole = await parity(db, { record: true, now });
    assert.equal(whole.status, "mismatch");
    assert.equal(whole.application_id, null);
    const app1 = await parity(db, {
      record: true,
      applicationId: "app1",
      now,
    });
    assert.equal(app1.status, "ok");
    assert.equal(app1.application_id, "app1");
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(report.parity.status, "mismatch");
    assert.ok(codes(report.alerts).includes("parity_failed"));
    assert.equal(report.status, "failing");
    assert.deepEqual(
      report.parity_by_tenant.map((p) => [p.application_id, p.status]),
      [["app1", "ok"]],
    );
  });
});

Deno.test("parity() of a tenant with no event in the index records nothing for health", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    const absent = await parity(db, { record: true, applicationId: "app9" });
    assert.equal(absent.status, "ok");
    assert.equal(absent.nothing_checked, true);
    const present = await parity(db, { record: true, applicationId: "app1" });
    assert.equal(present.nothing_checked, false);
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.deepEqual(
      report.parity_by_tenant.map((p) => p.application_id),
      ["app1"],
    );
  });
});

Deno.test("parity() of an empty index is still recorded as the whole-index check", async () => {
  await withObs(async (db) => {
    const whole = await parity(db, { record: true });
    assert.equal(whole.nothing_checked, true);
    const recorded = await readRecordedParity(db);
    assert.equal(recorded.unscoped?.status, "ok");
  });
});

Deno.test("obsHealth() reports parity unknown when only tenant checks ran", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    await parity(db, { record: true, applicationId: "app1" });
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.deepEqual(report.parity, { status: "unknown" });
    assert.ok(codes(report.alerts).includes("parity_unknown"));
    assert.equal(report.parity_by_tenant.length, 1);
    assert.equal(report.parity_by_tenant[0]!.status, "ok");
  });
});

Deno.test("obsHealth() warns about a tenant mismatch newer than the whole-index check", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    let clock = NOW;
    const now = () => clock += 1_000;
    await parity(db, { record: true, now });
    await corruptApp2(db);
    await parity(db, { record: true, applicationId: "app2", now });
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(report.parity.status, "ok", "set by the whole-index check");
    const alert = report.alerts.find((a) => a.code === "parity_tenant_failed");
    assert.deepEqual(alert, {
      code: "parity_tenant_failed",
      severity: "warning",
      count: 1,
      message: HEALTH_ALERT_MESSAGES.parity_tenant_failed,
    });
    // A newer whole-index check supersedes the tenant result.
    await parity(db, { record: true, now });
    const after = await obsHealth(db, { latencySamples: 1 });
    assert.ok(!codes(after.alerts).includes("parity_tenant_failed"));
    assert.ok(codes(after.alerts).includes("parity_failed"));
  });
});

Deno.test("readRecordedParity() reads an older tenant result under the whole-index key as that tenant's", async () => {
  await withObs(async (db) => {
    // The row an earlier build left: a tenant's check under the whole-index key.
    const stored = {
      status: "ok",
      checked_at: daysAgo(2),
      application_id: "app1",
      envelopes: 2,
      mismatched: 0,
    };
    await db.client.execute({
      sql: "INSERT INTO obs_state (key, value, updated_at) VALUES (?, ?, ?)",
      args: ["parity.last", JSON.stringify(stored), NOW],
    });
    const recorded = await readRecordedParity(db);
    assert.equal(recorded.unscoped, null);
    assert.deepEqual(recorded.scoped.map((p) => p.application_id), ["app1"]);
  });
});

// --- unindexed envelopes after retention ---------------------------------------

Deno.test("obsHealth() raises no unindexed_envelopes for events retention removed by event time", async () => {
  await withObs(async (db) => {
    // Received now, but the event happened 40 days ago: retention removes it.
    await ingestEvents(db, [
      event("late", { started_at: daysAgo(40) }),
      event("fresh"),
    ], { now: () => NOW });
    await retention(db, { dryRun: false, reclaim: false, now: () => NOW });
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(report.links!.unindexed_envelopes, 0);
    assert.ok(!codes(report.alerts).includes("unindexed_envelopes"));
    const check = await parity(db);
    assert.equal(check.status, "ok");
    assert.equal(check.retained_out, 1);
  });
});

Deno.test("obsHealth() still counts an envelope received long ago whose recent event lost its index row", async () => {
  await withObs(async (db) => {
    await ingestEvents(db, [event("old-receipt", { started_at: daysAgo(1) })], {
      now: () => NOW - 60 * DAY,
    });
    await ingestEvents(db, [event("other")], { now: () => NOW });
    await retention(db, { dryRun: false, reclaim: false, now: () => NOW });
    await db.client.execute(
      "DELETE FROM obs_events WHERE event_id = 'old-receipt'",
    );
    const report = await obsHealth(db, { latencySamples: 1 });
    assert.equal(report.links!.unindexed_envelopes, 1);
    assert.ok(codes(report.alerts).includes("unindexed_envelopes"));
    const check = await parity(db);
    assert.deepEqual(check.mismatches.map((m) => m.code), ["index_missing"]);
  });
});

// Health counts unindexed envelopes in SQL, parity and backfill decide in
// JavaScript: both must call "retained out" exactly what retention removed.
Deno.test("obsHealth() and parity() agree with retention on which envelopes it removed", async () => {
  await withObs(async (db) => {
    await ingestEvents(db, [
      event("started-old", { started_at: daysAgo(40) }),
      event("started-new", { started_at: daysAgo(1) }),
      event("no-start", { started_at: null }),
      event("verified-old", {
        started_at: daysAgo(40),
        outcome: { verified: true, status: "success" },
      }),
      event("verified-ancient", {
        started_at: daysAgo(400),
        outcome: { verified: true, status: "success" },
      }),
      event("unverified-old", {
        started_at: daysAgo(40),
        outcome: { verified: false, status: "success" },
      }),
    ], {
      now: () => NOW - 35 * DAY,
    });
    await retention(db, { dryRun: false, reclaim: false, now: () => NOW });
    const kept = await db.client.execute(
      "SELECT event_id FROM obs_events ORDER BY event_id",
    );
    assert.deepEqual(
      kept.rows.map((row) => row.event_id),
      ["started-new", "verified-old"],
    );
    // Every envelope retention removed is retained out, in SQL and in JS.
    const before = await obsHealth(db, { latencySamples: 1 });
    assert.equal(before.links!.unindexed_envelopes, 0);
    const removed = await parity(db);
    assert.equal(removed.retained_out, 4);
    assert.equal(removed.status, "ok");
    // Every envelope retention kept is not: losing its row makes it missing.
    await db.client.execute("DELETE FROM obs_resources");
    await db.client.execute("DELETE FROM obs_events");
    const after = await obsHealth(db, { latencySamples: 1 });
    assert.equal(after.links!.unindexed_envelopes, 2);
    const lost = await parity(db);
    assert.equal(lost.retained_out, 4);
    assert.deepEqual(
      lost.mismatches.map((m) => m.code),
      ["index_missing", "index_missing"],
    );
  });
});

// --- expiry plans checked against their own cutoff and tenant -------------------

function reseal(plan: ExpiryPlan, entries: ExpiryPlan["entries"]): ExpiryPlan {
  const { fingerprint: _f, confirmation: _c, ...rest } = plan;
  const unsealed = { ...rest, entries };
  const fingerprint = sha256Hex(canonicalJson(unsealed));
  return {
    ...unsealed,
    fingerprint,
    confirmation: confirmationFor(entries.length, fingerprint),
  };
}

async function expectRefused(
  db: TraceDb,
  plan: ExpiryPlan,
  pattern: RegExp,
): Promise<void> {
  let archived = false;
  await assert.rejects(
    applyExpiry(db, plan, plan.confirmation, () => (archived = true)),
    (error: unknown) =>
      error instanceof RefusedError && pattern.test(error.message),
  );
  assert.equal(archived, false, "nothing is archived");
  const left = await db.client.execute(
    "SELECT COUNT(*) AS n FROM obs_envelopes",
  );
  assert.equal(Number(left.rows[0]!.n), 4, "nothing is deleted");
}

Deno.test("applyExpiry() refuses a resealed plan listing an entry at or after its cutoff", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    await ingestEvents(db, [event("old")], { now: () => NOW - 100 * DAY });
    const plan = await planExpiry(db, {
      olderThan: daysAgo(30),
      now: () => NOW,
    });
    assert.equal(plan.entries.length, 1);
    const recent = await planExpiry(db, {
      olderThan: new Date(NOW + 1).toISOString(),
      now: () => NOW + 1,
    });
    const fresh = recent.entries.find((e) => e.event_id === "a1")!;
    const forged = reseal(plan, [...plan.entries, fresh]);
    await expectRefusedAll(
      db,
      forged,
      new RegExp(`entry seq ${fresh.seq} was received at .* not before`),
    );
  });
});

/** Like expectRefused, for the five-envelope fixture of the cutoff test. */
async function expectRefusedAll(
  db: TraceDb,
  plan: ExpiryPlan,
  pattern: RegExp,
): Promise<void> {
  await assert.rejects(
    applyExpiry(db, plan, plan.confirmation, () => true),
    (error: unknown) =>
      error instanceof RefusedError && pattern.test(error.message),
  );
  const left = await db.client.execute(
    "SELECT COUNT(*) AS n FROM obs_envelopes",
  );
  assert.equal(Number(left.rows[0]!.n), 5, "nothing is deleted");
}

Deno.test("applyExpiry() refuses a resealed tenant plan listing another tenant's envelope", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    const later = {
      olderThan: new Date(NOW + 1).toISOString(),
      now: () => NOW + 1,
    };
    const app1 = await planExpiry(db, { ...later, applicationId: "app1" });
    const all = await planExpiry(db, later);
    const foreign = all.entries.find((e) => e.application_id === "app2")!;
    await expectRefused(
      db,
      reseal(app1, [...app1.entries, foreign]),
      new RegExp(`entry seq ${foreign.seq} belongs to another tenant`),
    );
    await expectRefused(
      db,
      reseal(app1, [app1.entries[0]!, app1.entries[0]!]),
      /is listed more than once/,
    );
  });
});

Deno.test("applyExpiry() refuses an entry whose receipt time differs from the stored envelope", async () => {
  await withObs(async (db) => {
    await twoTenants(db);
    const plan = await planExpiry(db, {
      olderThan: new Date(NOW + 1).toISOString(),
      now: () => NOW + 1,
    });
    // Claims an old receipt so a short cutoff would seem to cover it.
    const backdated = plan.entries.map((e, i) =>
      i === 0 ? { ...e, received_at: daysAgo(100) } : e
    );
    await expectRefused(
      db,
      reseal({ ...plan, older_than: daysAgo(30) }, backdated.slice(0, 1)),
      new RegExp(`entry seq ${plan.entries[0]!.seq} does not describe`),
    );
  });
});
