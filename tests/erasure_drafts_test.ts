/** Replay drafts take part in every erasure: a draft drawn from erased events, or naming the erased user, goes with them. */

import assert from "node:assert/strict";
import {
  createDraft,
  freezePlan,
  readReplaySelection,
  type ReplayDraft,
  type ReplaySelection,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import {
  type ErasureSubjectInput,
  parseErasureSubject,
} from "../lib/obs/maint/mod.ts";
import {
  eraseSubject,
  eraseSubjectNow,
  planSubjectErasure,
  verifyErasure,
} from "../lib/runs/mod.ts";
import {
  event,
  fileHolds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

const key = TEST_KEY;

/** Alice: two events in turn t1 and one in turn t2 of root r1; bob: one in root r2. */
const EVENTS = [
  event("a1", {
    user_id: "alice",
    root_trace_id: "r1",
    turn_id: "t1",
    preview: "alice ALICE_TEXT",
  }),
  event("a2", { user_id: "alice", root_trace_id: "r1", turn_id: "t1" }),
  event("a3", { user_id: "alice", root_trace_id: "r1", turn_id: "t2" }),
  event("b1", { user_id: "bob", root_trace_id: "r2", turn_id: "t9" }),
];

/** Stores a draft of `selection` (application `app`, agent `bot`) with `reason`. */
async function stored(
  db: TraceDb,
  selection: Omit<ReplaySelection, "agent_id" | "application_id">,
  reason: string,
): Promise<ReplayDraft> {
  const full = { ...selection, agent_id: "bot", application_id: "app" };
  const plan = freezePlan(full, await readReplaySelection(db, full));
  const created = await createDraft(db, plan, {
    actor: { name: "admin-1", role: "admin", via: "bearer" },
    reason,
    audit: { action: "replay.draft", scope: {} },
  });
  return created.draft;
}

/** The id of a draft {@link stored} makes. */
async function draft(
  db: TraceDb,
  selection: Omit<ReplaySelection, "agent_id" | "application_id">,
  reason: string,
): Promise<string> {
  return (await stored(db, selection, reason)).draft_id;
}

async function draftIds(db: TraceDb): Promise<string[]> {
  const rows = await db.client.execute(
    "SELECT draft_id FROM auth_replay_drafts ORDER BY draft_id",
  );
  return rows.rows.map((row) => String(row.draft_id));
}

async function erase(db: TraceDb, input: ErasureSubjectInput) {
  const subject = parseErasureSubject(input);
  const plan = await planSubjectErasure(db, subject, { key });
  const applied = await eraseSubject(db, subject, plan.confirmation, { key });
  return { subject, plan, applied };
}

Deno.test("an erasure removes the replay drafts drawn from its events, counted in the dry run, the receipt and verification", async () => {
  await withErasureDb(async (db) => {
    await seed(db, EVENTS);
    const turn1Draft = await stored(
      db,
      { root_trace_id: "r1", turn_id: "t1" },
      "turn one",
    );
    const turn1 = turn1Draft.draft_id;
    const root = await draft(db, { root_trace_id: "r1" }, "whole root");
    const bob = await draft(db, { root_trace_id: "r2" }, "bob's root");

    // Event a3 is in the whole root's selection, not in turn t1's.
    const one = await erase(db, { application_id: "app", event_ids: ["a3"] });
    assert.equal(one.plan.participants.replay_drafts, 1);
    assert.equal(one.applied.result.participants.replay_drafts, 1);
    assert.equal(one.applied.receipt.receipt.participants.replay_drafts, 1);
    assert.deepEqual(await draftIds(db), [bob, turn1].sort());
    assert.ok(!(await draftIds(db)).includes(root));

    const alice = await erase(db, { application_id: "app", user_id: "alice" });
    assert.equal(alice.plan.participants.replay_drafts, 1);
    assert.equal(alice.applied.receipt.receipt.participants.replay_drafts, 1);
    assert.deepEqual(await draftIds(db), [bob]);
    // The draft is gone from the file too, not only from the table (its
    // creation stays in the audit trail, which never names content).
    assert.equal(
      await fileHolds(db.path!, turn1Draft.evidence_fingerprint),
      false,
    );

    const verified = await verifyErasure(
      db,
      alice.applied.receipt.receipt.receipt_id,
      alice.subject,
      { key },
    );
    assert.equal(verified.remaining.participants.replay_drafts, 0);
    assert.equal(verified.clean, true);
  });
});

Deno.test("an erasure of a user removes the drafts naming that user whose events went earlier; a content erasure keeps drafts", async () => {
  await withErasureDb(async (db) => {
    await seed(db, EVENTS);
    const bob = await draft(db, { root_trace_id: "r2" }, "bob's root");
    const alice = await draft(db, { root_trace_id: "r1" }, "alice's root");

    // Content only (a propagated memory deletion): metadata stays, so do drafts.
    const content = await eraseSubjectNow(
      db,
      parseErasureSubject({ application_id: "app", user_id: "alice" }),
      { key, scope: "content" },
    );
    assert.equal(content.result.participants.replay_drafts, 0);
    assert.deepEqual(await draftIds(db), [alice, bob].sort());

    // Retention removed bob's event, rows and envelope alike.
    await db.client.batch([
      "DELETE FROM obs_resources WHERE seq IN (SELECT seq FROM obs_events WHERE event_id = 'b1')",
      "DELETE FROM obs_previews WHERE seq IN (SELECT seq FROM obs_events WHERE event_id = 'b1')",
      "DELETE FROM obs_events WHERE event_id = 'b1'",
      `INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at)
         SELECT seq, fingerprint, 0 FROM obs_envelopes WHERE event_id = 'b1'`,
      "DELETE FROM obs_envelopes WHERE event_id = 'b1'",
    ], "write");
    const gone = await erase(db, { application_id: "app", user_id: "bob" });
    assert.equal(gone.plan.events, 0);
    assert.equal(gone.plan.participants.replay_drafts, 1);
    assert.deepEqual(await draftIds(db), [alice]);

    // Another application's erasure of the same user never reaches app's drafts.
    await seed(db, [
      event("x1", { application_id: "other", user_id: "alice" }),
    ]);
    const other = await erase(db, {
      application_id: "other",
      user_id: "alice",
    });
    assert.equal(other.plan.participants.replay_drafts, 0);
    assert.deepEqual(await draftIds(db), [alice]);
  });
});

Deno.test("an erasure applied while the user keeps writing keeps the drafts drawn only from events after its dry run", async () => {
  await withErasureDb(async (db) => {
    await seed(db, [EVENTS[0]!]);
    const early = await draft(db, { root_trace_id: "r1" }, "early");
    const subject = parseErasureSubject({
      application_id: "app",
      user_id: "alice",
    });
    const plan = await planSubjectErasure(db, subject, { key });
    assert.equal(plan.participants.replay_drafts, 1);
    // Alice keeps writing, and a draft is drawn from what she wrote since.
    await seed(db, [
      event("a9", { user_id: "alice", root_trace_id: "r9", turn_id: "t9" }),
    ]);
    const later = await draft(db, { root_trace_id: "r9" }, "later");
    const applied = await eraseSubject(db, subject, plan.confirmation, {
      key,
    });
    assert.equal(applied.result.later_events, 1);
    assert.equal(applied.result.participants.replay_drafts, 1);
    assert.deepEqual(await draftIds(db), [later], `${early} went, not later`);
    // Erasing what arrived since takes that draft too.
    const rest = await erase(db, { application_id: "app", user_id: "alice" });
    assert.equal(rest.plan.participants.replay_drafts, 1);
    assert.deepEqual(await draftIds(db), []);
  });
});
