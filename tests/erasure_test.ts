import assert from "node:assert/strict";
import type { Transaction } from "@libsql/client";
import { ConfigError, RefusedError } from "../lib/errors.ts";
// The refusal is caught by name through the public entry point.
import { ErasureUnmatchedError } from "../obs.ts";
import {
  applyErasure,
  eraseNow,
  type ErasureParticipant,
  erasureParticipants,
  erasureRemainder,
  parseErasureSubject,
  planErasure,
  registerErasureParticipant,
  subjectDigest,
} from "../lib/obs/maint/mod.ts";
import {
  event,
  indexedIds,
  seed,
  tableCounts,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

const key = TEST_KEY;

Deno.test("planErasure() counts per table and store for each selector and changes nothing", async (t) => {
  await withErasureDb(async (db) => {
    await seed(db);
    const before = await tableCounts(db);
    const cases = [
      {
        input: { application_id: "app", user_id: "alice" },
        events: 3,
        tables: {
          obs_envelopes: 3,
          obs_events: 3,
          obs_resources: 4,
          obs_previews: 2,
          preview_digests: 0,
        },
        stores: { trace: 1, conversation: 1, tool_log: 1 },
      },
      {
        input: { application_id: "app", anonymous: true as const },
        events: 2,
        tables: {
          obs_envelopes: 2,
          obs_events: 2,
          obs_resources: 0,
          obs_previews: 2,
          preview_digests: 0,
        },
        stores: { trace: 2, conversation: 0, tool_log: 0 },
      },
      {
        input: { application_id: "app", thread_id: "t1" },
        events: 2,
        tables: {
          obs_envelopes: 2,
          obs_events: 2,
          obs_resources: 1,
          obs_previews: 2,
          preview_digests: 0,
        },
        stores: { trace: 1, conversation: 1, tool_log: 0 },
      },
      {
        input: { application_id: "app", memory_id: "mem-1" },
        events: 1,
        tables: {
          obs_envelopes: 1,
          obs_events: 1,
          obs_resources: 0,
          obs_previews: 1,
          preview_digests: 0,
        },
        stores: { trace: 1, conversation: 0, tool_log: 0 },
      },
      {
        input: { application_id: "app", event_ids: ["b1", "n1", "nope"] },
        events: 2,
        tables: {
          obs_envelopes: 2,
          obs_events: 2,
          obs_resources: 0,
          obs_previews: 2,
          preview_digests: 0,
        },
        stores: { trace: 2, conversation: 0, tool_log: 0 },
      },
    ];
    for (const c of cases) {
      await t.step(Object.keys(c.input)[1]!, async () => {
        const plan = await planErasure(db, parseErasureSubject(c.input), {
          key,
        });
        assert.equal(plan.dry_run, true);
        assert.equal(plan.events, c.events);
        assert.deepEqual(plan.tables, c.tables);
        assert.deepEqual(plan.stores, c.stores);
        assert.match(
          plan.confirmation,
          /^erase \d+ events up to \d+ [0-9a-f]{16}$/,
        );
        assert.match(plan.subject_digest, /^hmac-sha256:[0-9a-f]{64}$/);
      });
    }
    assert.deepEqual(await tableCounts(db), before);
  });
});

Deno.test("applyErasure() removes each selector's events from every table and nothing else", async (t) => {
  const cases = [
    {
      input: { application_id: "app", user_id: "alice" },
      left: ["b1", "m1", "n1", "n2"],
    },
    {
      input: { application_id: "app", anonymous: true as const },
      left: ["a1", "a2", "a3", "b1", "m1"],
    },
    {
      input: { application_id: "app", thread_id: "t1" },
      left: ["a3", "b1", "m1", "n1", "n2"],
    },
    {
      input: { application_id: "app", memory_id: "mem-1" },
      left: ["a1", "a2", "a3", "b1", "n1", "n2"],
    },
    {
      input: { application_id: "app", event_ids: ["a2", "n2"] },
      left: ["a1", "a3", "b1", "m1", "n1"],
    },
  ];
  for (const c of cases) {
    await t.step(Object.keys(c.input)[1]!, async () => {
      await withErasureDb(async (db) => {
        await seed(db);
        const subject = parseErasureSubject(c.input);
        const plan = await planErasure(db, subject, { key });
        const result = await applyErasure(db, subject, plan.confirmation, {
          key,
        });
        assert.equal(result.dry_run, false);
        assert.deepEqual(result.tables, plan.tables);
        assert.equal(result.secure_delete, true);
        assert.equal(result.reached_file, true);
        assert.deepEqual(await indexedIds(db), c.left);
        // The other application's alice (same user and thread ids) is untouched.
        assert.deepEqual(await indexedIds(db, "other"), ["x1"]);
        const remainder = await erasureRemainder(db, subject, { key });
        assert.equal(remainder.clean, true);
        const counts = await tableCounts(db);
        assert.equal(counts.obs_envelopes, 8 - plan.events);
        assert.equal(
          counts.obs_expiry_grants,
          0,
          "grants go with the envelopes",
        );
        // No orphans: every preview and resource ref still has its index row.
        const orphans = await db.client.execute(
          `SELECT (SELECT COUNT(*) FROM obs_previews p WHERE NOT EXISTS (SELECT 1 FROM obs_events e WHERE e.seq = p.seq))
                + (SELECT COUNT(*) FROM obs_resources r WHERE NOT EXISTS (SELECT 1 FROM obs_events e WHERE e.seq = r.seq)) AS n`,
        );
        assert.equal(Number(orphans.rows[0]!.n), 0);
      });
    });
  }
});

Deno.test("applyErasure() erases what the dry run saw and counts the events written after it", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const subject = parseErasureSubject({
      application_id: "app",
      user_id: "alice",
    });
    const plan = await planErasure(db, subject, { key });
    assert.equal(plan.events, 3);
    assert.equal(plan.up_to_seq, 8, "the index's high-water mark");
    assert.equal(plan.confirmation.split(" ")[5], "8");
    // The user is still active: two more events arrive after the review.
    await seed(db, [
      event("a4", { user_id: "alice", preview: "LATE_ONE" }),
      event("a5", { user_id: "alice", preview: "LATE_TWO" }),
    ]);
    const result = await applyErasure(db, subject, plan.confirmation, {
      key,
    });
    assert.equal(result.events, 3);
    assert.equal(result.up_to_seq, 8);
    assert.deepEqual(result.tables, plan.tables);
    assert.equal(result.later_events, 2);
    assert.deepEqual(await indexedIds(db), [
      "a4",
      "a5",
      "b1",
      "m1",
      "n1",
      "n2",
    ]);
    // What the erasure covered is gone; what came after is counted apart.
    const covered = await erasureRemainder(db, subject, {
      key,
      upToSeq: result.up_to_seq,
    });
    assert.equal(covered.clean, true);
    assert.equal(covered.later_events, 2);
    const again = await planErasure(db, subject, { key });
    assert.equal(again.events, 2);
    const rest = await applyErasure(db, subject, again.confirmation, { key });
    assert.equal(rest.later_events, 0);
    assert.deepEqual(await indexedIds(db), ["b1", "m1", "n1", "n2"]);
  });
});

Deno.test("applyErasure() refuses when an event the dry run counted changed or went, or the value was edited", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const subject = parseErasureSubject({
      application_id: "app",
      user_id: "alice",
    });
    const plan = await planErasure(db, subject, { key });
    const refused = (error: unknown) =>
      error instanceof RefusedError &&
      /an event the dry run counted changed or is gone.*run the dry run again/
        .test(error.message);
    const [verb, n, unit, up, to, bound, seal] = plan.confirmation.split(" ");
    const edits = [
      // A larger bound would reach events the review never saw.
      [verb, n, unit, up, to, String(Number(bound) + 1), seal].join(" "),
      // The form of older builds names no bound.
      `erase 3 events ${seal}`,
      `erase 3 events up to ${bound} 0000000000000000`,
    ];
    for (const edited of edits) {
      await assert.rejects(
        applyErasure(db, subject, edited, { key }),
        refused,
        edited,
      );
    }
    // One of the reviewed events goes meanwhile (erased on its own).
    const one = parseErasureSubject({
      application_id: "app",
      event_ids: ["a2"],
    });
    const single = await planErasure(db, one, { key });
    await applyErasure(db, one, single.confirmation, { key });
    await assert.rejects(
      applyErasure(db, subject, plan.confirmation, { key }),
      refused,
    );
    assert.deepEqual(
      (await indexedIds(db)).filter((id) => id.startsWith("a")),
      ["a1", "a3"],
    );
    const again = await planErasure(db, subject, { key });
    assert.equal(again.events, 2);
    await applyErasure(db, subject, again.confirmation, { key });
    assert.deepEqual(await indexedIds(db), ["b1", "m1", "n1", "n2"]);
  });
});

Deno.test("applyErasure() also finds envelopes whose index rows retention removed, and rows whose envelope expired", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    // Retention's own statements: the rows go, the envelope stays.
    await db.client.batch([
      "DELETE FROM obs_previews WHERE seq = (SELECT seq FROM obs_events WHERE event_id = 'a1')",
      "DELETE FROM obs_resources WHERE seq = (SELECT seq FROM obs_events WHERE event_id = 'a1')",
      "DELETE FROM obs_events WHERE event_id = 'a1'",
      // Source expiry's compare-and-delete: the envelope goes, the rows stay.
      `INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at)
         SELECT seq, fingerprint, 0 FROM obs_envelopes WHERE event_id = 'a2'`,
      "DELETE FROM obs_envelopes WHERE event_id = 'a2'",
    ], "write");
    const subject = parseErasureSubject({
      application_id: "app",
      user_id: "alice",
    });
    const plan = await planErasure(db, subject, { key });
    assert.equal(plan.events, 3);
    assert.equal(plan.tables.obs_envelopes, 2);
    assert.equal(plan.tables.obs_events, 2);
    // a2's envelope went to an expiry archive: the answer says so.
    assert.equal(plan.expired_envelopes, 1);
    const result = await applyErasure(db, subject, plan.confirmation, { key });
    assert.equal(result.expired_envelopes, 1);
    const left = await db.client.execute(
      `SELECT (SELECT COUNT(*) FROM obs_envelopes WHERE application_id = 'app' AND event_id LIKE 'a%')
            + (SELECT COUNT(*) FROM obs_events WHERE application_id = 'app' AND event_id LIKE 'a%') AS n`,
    );
    assert.equal(Number(left.rows[0]!.n), 0);
  });
});

Deno.test("applyErasure() refuses event ids none of which matches before writing anything, and names those that did not match when some did", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const events = (...ids: string[]) =>
      parseErasureSubject({ application_id: "app", event_ids: ids });
    const typo = events("A1", "a9");
    const plan = await planErasure(db, typo, { key });
    assert.equal(plan.events, 0);
    const before = await tableCounts(db);
    await assert.rejects(
      applyErasure(db, typo, plan.confirmation, { key }),
      (error: unknown) => {
        assert.ok(error instanceof ErasureUnmatchedError);
        assert.equal(error.code, "erasure_unmatched");
        assert.equal(error.receiptId, null);
        assert.equal(
          error.message,
          'Cannot erase: none of the 2 event id(s) matches an event of application "app" in scope all ("A1", "a9"); nothing was changed; ids are compared exactly (case and spaces count): check them with a dry run',
        );
        return true;
      },
    );
    assert.deepEqual(await tableCounts(db), before);

    // Some matched: the apply goes ahead and names the others.
    const some = events("a1", "a9");
    const partial = await planErasure(db, some, { key });
    const result = await applyErasure(db, some, partial.confirmation, { key });
    assert.equal(result.events, 1);
    assert.deepEqual(result.unmatched_event_ids, ["a9"]);

    // A whole subject that matched nothing proves nothing was held.
    const nobody = parseErasureSubject({
      application_id: "app",
      user_id: "nobody",
    });
    const empty = await planErasure(db, nobody, { key });
    const none = await applyErasure(db, nobody, empty.confirmation, { key });
    assert.equal(none.events, 0);
    assert.equal("unmatched_event_ids" in none, false);
    // The staging adapter's deletions (unreviewed) stay idempotent.
    assert.equal((await eraseNow(db, typo, { key })).events, 0);
  });
});

Deno.test("eraseNow() with scope content removes previews only, up to a seq", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await seed(db, [
      event("m2", {
        agent_id: null,
        memory_id: "mem-1",
        kind: "memory_write",
        preview: "written after the deletion",
      }),
    ]);
    const upTo = Number(
      (await db.client.execute(
        "SELECT seq FROM obs_events WHERE event_id = 'm1'",
      )).rows[0]!.seq,
    );
    const subject = parseErasureSubject({
      application_id: "app",
      memory_id: "mem-1",
    });
    const result = await eraseNow(db, subject, {
      key,
      scope: "content",
      upToSeq: upTo,
    });
    assert.deepEqual(result.tables, {
      obs_previews: 1,
      obs_resources: 0,
      obs_events: 0,
      obs_envelopes: 0,
      preview_digests: 1,
    });
    const previews = await db.client.execute(
      `SELECT e.event_id FROM obs_previews p JOIN obs_events e ON e.seq = p.seq
       WHERE e.memory_id = 'mem-1'`,
    );
    assert.deepEqual(previews.rows.map((r) => r.event_id), ["m2"]);
    assert.deepEqual(await indexedIds(db), [
      "a1",
      "a2",
      "a3",
      "b1",
      "m1",
      "m2",
      "n1",
      "n2",
    ]);
    const remainder = await erasureRemainder(db, subject, {
      key,
      scope: "content",
      upToSeq: upTo,
    });
    assert.equal(remainder.clean, true);
  });
});

Deno.test("parseErasureSubject() takes exactly one selector and sorts event ids", () => {
  assert.throws(
    () => parseErasureSubject({ application_id: "app" }),
    (e: unknown) =>
      e instanceof ConfigError && /exactly one of/.test(e.message),
  );
  assert.throws(
    () =>
      parseErasureSubject({
        application_id: "app",
        user_id: "u",
        thread_id: "t",
      }),
    ConfigError,
  );
  assert.throws(
    () => parseErasureSubject({ application_id: "app", user: "u" }),
    (e: unknown) => e instanceof ConfigError && /unknown key/.test(e.message),
  );
  assert.throws(
    () => parseErasureSubject({ application_id: "app", anonymous: false }),
    ConfigError,
  );
  const a = parseErasureSubject({
    application_id: "app",
    event_ids: ["b", "a", "b"],
  });
  assert.deepEqual(a.ids, ["a", "b"]);
  const b = parseErasureSubject({
    application_id: "app",
    event_ids: ["a", "b"],
  });
  assert.equal(subjectDigest(a, key), subjectDigest(b, key));
  const other = new Uint8Array(32).fill(8);
  assert.notEqual(subjectDigest(a, key), subjectDigest(a, other));
  assert.notEqual(
    subjectDigest(
      parseErasureSubject({ application_id: "app", user_id: "x" }),
      key,
    ),
    subjectDigest(
      parseErasureSubject({ application_id: "app", thread_id: "x" }),
      key,
    ),
  );
});

Deno.test("registered erasure participants are counted, erased in the transaction, and roll it back when they fail", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await db.client.execute(
      "CREATE TABLE drafts (id INTEGER PRIMARY KEY, event_id TEXT, subject TEXT)",
    );
    await db.client.execute(
      "INSERT INTO drafts (event_id, subject) VALUES ('a1', NULL), ('a3', NULL), ('b1', NULL)",
    );
    let fail = true;
    const drafts: ErasureParticipant = {
      name: "answer_cache",
      count: async (executor, target) =>
        Number(
          (await executor.execute({
            sql:
              "SELECT COUNT(*) AS n FROM drafts WHERE event_id IN (SELECT value FROM json_each(?))",
            args: [JSON.stringify(target.events.map((e) => e.event_id))],
          })).rows[0]!.n,
        ),
      erase: async (tx: Transaction, target) => {
        // De-identify: keep the draft, replace its event reference by the subject digest.
        const result = await tx.execute({
          sql:
            "UPDATE drafts SET event_id = NULL, subject = ? WHERE event_id IN (SELECT value FROM json_each(?))",
          args: [
            target.subject_digest,
            JSON.stringify(target.events.map((e) => e.event_id)),
          ],
        });
        if (fail) throw new Error("draft store unavailable");
        return result.rowsAffected;
      },
    };
    const unregister = registerErasureParticipant(drafts);
    try {
      assert.ok(erasureParticipants().includes(drafts));
      assert.throws(() => registerErasureParticipant(drafts), ConfigError);
      // Trace adds its own replay drafts to every erasure with a receipt.
      assert.throws(
        () => registerErasureParticipant({ ...drafts, name: "replay_drafts" }),
        (e: unknown) =>
          e instanceof ConfigError && /Trace's own participant/.test(e.message),
      );
      const subject = parseErasureSubject({
        application_id: "app",
        user_id: "alice",
      });
      const plan = await planErasure(db, subject, { key });
      assert.deepEqual(plan.participants, { answer_cache: 2 });
      await assert.rejects(
        applyErasure(db, subject, plan.confirmation, { key }),
        /draft store unavailable/,
      );
      assert.equal((await indexedIds(db)).length, 7, "nothing was erased");
      fail = false;
      const result = await applyErasure(db, subject, plan.confirmation, {
        key,
      });
      assert.deepEqual(result.participants, { answer_cache: 2 });
      const rows = await db.client.execute(
        "SELECT event_id, subject FROM drafts ORDER BY id",
      );
      assert.deepEqual(rows.rows.map((r) => [r.event_id, r.subject]), [
        [null, result.subject_digest],
        [null, result.subject_digest],
        ["b1", null],
      ]);
    } finally {
      unregister();
    }
    assert.ok(!erasureParticipants().includes(drafts));
  });
});
