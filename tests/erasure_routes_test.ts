import assert from "node:assert/strict";
import { join } from "node:path";
import type { Hono } from "hono";
import { main } from "../cli.ts";
import { openDb } from "../lib/db.ts";
import {
  ERASURE_KEY_FILE,
  erasureKey,
  erasureTruncation,
  MAX_SUBJECT_EVENT_IDS,
  unreachedErasures,
} from "../lib/obs/maint/mod.ts";
import {
  noteCommit,
  startBackgroundCheckpoints,
} from "../lib/obs/ingest/mod.ts";
import { captureIo, statementsDuring } from "./_helpers.ts";
import { listAudit } from "../lib/auth/mod.ts";
import { listReceipts } from "../lib/ledger/erasure_receipts.ts";
import { createApp } from "../routes/app.ts";
import {
  ERASURE_MAX_BODY_BYTES,
  type ErasureAuditEntry,
} from "../routes/erasure.ts";
import { LIMITS } from "../lib/obs/mod.ts";
import {
  event,
  fileHolds,
  indexedIds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

const ADMIN = "admin-token-0123456789";
const INGEST = "ingest-token-0123456789";
const SUBJECT = { application_id: "app", user_id: "alice" };

function post(app: Hono, body: unknown, token?: string): Promise<Response> {
  return Promise.resolve(app.request("http://127.0.0.1/api/erasures", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  }));
}

/** Applies the erasure of SUBJECT as the admin, with `confirmation`. */
function applyAsAdmin(app: Hono, confirmation: string): Promise<Response> {
  return post(app, { subject: SUBJECT, apply: true, confirmation }, ADMIN);
}

/** The `next` of a dry run that can be applied with `confirmation`. */
function applyStep(confirmation: string): string {
  return `to erase what this dry run counted, send the same subject again with "apply": true and "confirmation": ${
    JSON.stringify(confirmation)
  }`;
}

Deno.test("POST /api/erasures: a dry run, then apply with its confirmation, for the admin token only", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const audited: ErasureAuditEntry[] = [];
    const app = createApp({
      db,
      ingestToken: INGEST,
      uiAuthToken: ADMIN,
      erasureKey: TEST_KEY,
      erasureAudit: (entry) => {
        audited.push(entry);
        return Promise.resolve();
      },
    });
    assert.equal((await post(app, { subject: SUBJECT })).status, 401);
    assert.equal(
      (await post(app, { subject: SUBJECT }, INGEST)).status,
      401,
      "the ingest token is not an administrator",
    );
    const dry = await post(app, { subject: SUBJECT }, ADMIN);
    assert.equal(dry.status, 200);
    const plan = await dry.json();
    assert.equal(plan.dry_run, true);
    assert.equal(plan.events, 3);
    assert.equal(plan.next, applyStep(plan.confirmation));
    assert.equal((await indexedIds(db)).length, 7);

    const missing = await post(app, { subject: SUBJECT, apply: true }, ADMIN);
    assert.equal(missing.status, 400);
    const stale = await applyAsAdmin(app, "erase 3 events 0000000000000000");
    assert.equal(stale.status, 400);
    assert.match(
      (await stale.json()).error.message,
      /confirmation does not match/,
    );

    // The user is still active: an event arrives after the dry run. The
    // apply erases what the dry run counted and says what came after.
    await seed(db, [event("a4", { user_id: "alice", preview: "late" })]);
    const applied = await applyAsAdmin(app, plan.confirmation);
    assert.equal(applied.status, 200);
    const { result, receipt } = await applied.json();
    assert.equal(result.events, 3);
    assert.equal(result.later_events, 1);
    assert.equal(receipt.receipt.trigger, "operator");
    assert.equal(receipt.receipt.up_to_seq, plan.up_to_seq);
    assert.deepEqual(await indexedIds(db), ["a4", "b1", "m1", "n1", "n2"]);

    // Every request was audited first, by digest, then with how it ended;
    // only the apply that wrote a receipt names it.
    const id = receipt.receipt.receipt_id;
    assert.deepEqual(
      audited.map((a) => [a.action, a.outcome, a.detail, a.receipt_id]),
      [
        ["obs.erasure.plan", "attempted", null, null],
        ["obs.erasure.plan", "succeeded", null, null],
        ["obs.erasure.apply", "refused", "confirmation_missing", null],
        ["obs.erasure.apply", "attempted", null, null],
        ["obs.erasure.apply", "refused", null, null],
        ["obs.erasure.apply", "attempted", null, null],
        ["obs.erasure.apply", "succeeded", null, id],
      ],
    );
    const paired = audited.filter((a) => a.detail !== "confirmation_missing");
    for (let i = 0; i < paired.length; i += 2) {
      assert.equal(paired[i]!.request_id, paired[i + 1]!.request_id);
    }
    assert.notEqual(audited[0]!.request_id, audited[2]!.request_id);
    assert.equal(audited.at(-1)!.subject_digest, plan.subject_digest);
    assert.ok(!JSON.stringify(audited).includes("alice"));
  });
});

Deno.test("POST /api/erasures refuses bad bodies, other methods, a failing audit hook and a server without a key", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKey: TEST_KEY,
      erasureAudit: () => Promise.reject(new Error("audit disk full")),
    });
    const refused = await post(app, { subject: SUBJECT }, ADMIN);
    assert.equal(refused.status, 503);
    assert.match((await refused.json()).error.message, /audit trail refused/);
    assert.equal((await listReceipts(db).catch(() => [])).length, 0);

    const plain = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const bad = await post(
      plain,
      { subject: { application_id: "app" } },
      ADMIN,
    );
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /exactly one of/);
    const extra = await post(plain, { subject: SUBJECT, force: true }, ADMIN);
    assert.equal(extra.status, 400);
    assert.match((await extra.json()).error.message, /force: unknown key/);
    // A key that is not a field name may be a value pasted in the wrong place: never repeated.
    for (
      const body of [
        { subject: SUBJECT, "sk-live-SECRET1234": 1 },
        { subject: { ...SUBJECT, "jane.doe@example.com": 1 } },
      ]
    ) {
      const answer = await post(plain, body, ADMIN);
      assert.equal(answer.status, 400);
      const { message } = (await answer.json()).error;
      assert.match(message, /a key that is not a field name; remove it/);
      assert.ok(!/SECRET|jane/.test(message), message);
    }
    // A subject field given twice is refused, not read as its last value.
    for (
      const [text, message] of [
        [
          '{"subject":{"application_id":"app","user_id":"bob","user_id":"alice"}}',
          /gives a field twice \(line 1, column \d+\)/,
        ],
        ['{"subject":', /not valid JSON \(line 1, column \d+/],
      ] as const
    ) {
      const answer = await plain.request("http://127.0.0.1/api/erasures", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${ADMIN}`,
        },
        body: text,
      });
      assert.equal(answer.status, 400, text);
      assert.match((await answer.json()).error.message, message);
    }
    assert.equal((await indexedIds(db)).length, 7, "nothing was erased");
    const get = await plain.request("http://127.0.0.1/api/erasures", {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(get.status, 405);

    const keyless = createApp({ db, uiAuthToken: ADMIN });
    const unkeyed = await post(keyless, { subject: SUBJECT }, ADMIN);
    assert.equal(unkeyed.status, 501);
    assert.equal((await unkeyed.json()).error.code, "erasure_key_missing");
    // A server whose key file was lost says why, and what to do.
    const lost = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKeyProblem:
        "The erasure key ./d/erasure.key is missing; restore it",
    });
    const lostKey = await post(lost, { subject: SUBJECT }, ADMIN);
    assert.equal(lostKey.status, 501);
    assert.deepEqual((await lostKey.json()).error, {
      code: "erasure_key_missing",
      message:
        "Erasure is off on this server: The erasure key ./d/erasure.key is missing; restore it, then restart trace serve",
    });
    assert.equal((await indexedIds(db)).length, 7);
  });
});

Deno.test("POST /api/erasures refuses an apply whose event ids match nothing (404 erasure_unmatched), and says when a receipt already erased them", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const audited: ErasureAuditEntry[] = [];
    const app = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKey: TEST_KEY,
      erasureAudit: (entry) => {
        audited.push(entry);
        return Promise.resolve();
      },
    });
    const erase = async (ids: string[]) => {
      const subject = { application_id: "app", event_ids: ids };
      const plan = await (await post(app, { subject }, ADMIN)).json();
      const { confirmation } = plan;
      return await post(app, { subject, apply: true, confirmation }, ADMIN);
    };
    const typo = await erase(["A1"]);
    assert.equal(typo.status, 404);
    const { error } = await typo.json();
    assert.equal(error.code, "erasure_unmatched");
    assert.equal(error.receipt_id, null, "no receipt erased these ids");
    assert.match(
      error.message,
      /^Cannot erase: none of the 1 event id\(s\) matches an event of application "app" in scope all \("A1"\); .*check them with a dry run$/,
    );
    assert.equal((await listReceipts(db).catch(() => [])).length, 0);
    assert.deepEqual(
      audited.slice(-1).map((a) => [a.outcome, a.detail, a.receipt_id]),
      [["refused", "erasure_unmatched", null]],
    );

    const some = await erase(["a1", "a9"]);
    assert.equal(some.status, 200);
    const { result, receipt } = await some.json();
    assert.deepEqual(result.unmatched_event_ids, ["a9"]);
    const again = await erase(["a1", "a9"]);
    assert.equal(again.status, 404);
    const id = receipt.receipt.receipt_id;
    const refusal = (await again.json()).error;
    assert.equal(refusal.receipt_id, id, "a script can verify it");
    assert.equal(
      refusal.message,
      `Cannot erase: none of the 2 event id(s) matches an event of application "app" any more, and receipt ${id} erased this same subject already; nothing was changed; check it with trace obs erase --verify ${id} and the same subject`,
    );
    assert.equal((await listReceipts(db)).length, 1);
  });
});

Deno.test("POST /api/erasures: a dry run of event ids that match nothing offers no apply and says what to check", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const dryRun = async (ids: string[]) => {
      const subject = { application_id: "app", event_ids: ids };
      const answer = await post(app, { subject }, ADMIN);
      assert.equal(answer.status, 200);
      return await answer.json();
    };
    const none = await dryRun(["A1", "a9"]);
    assert.equal(none.events, 0);
    assert.deepEqual(none.unmatched_event_ids, ["A1", "a9"]);
    assert.equal(none.earlier_receipt_id, null, "no receipt erased these ids");
    assert.equal(
      none.next,
      "no event has these ids, so there is nothing to apply: check the ids (they are compared exactly: case and spaces count); if they were erased already, check that erasure with trace obs erase --verify RECEIPT_ID and the same subject (trace obs erase --receipts lists the receipts)",
    );
    const some = await dryRun(["a1", "a9"]);
    assert.equal(some.events, 1);
    assert.equal(some.next, applyStep(some.confirmation));
    assert.equal(some.earlier_receipt_id, null);
    // A user that matched nothing still applies: its receipt proves nothing was held.
    const nobody = await post(app, {
      subject: { application_id: "app", user_id: "nobody" },
    }, ADMIN);
    assert.match((await nobody.json()).next, /"apply": true/);
    assert.equal((await indexedIds(db)).length, 7, "nothing was erased");
  });
});

Deno.test("POST /api/erasures: a dry run of event ids an applied erasure took already names its receipt", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const subject = { application_id: "app", event_ids: ["a1", "a9"] };
    const dryRun = async () =>
      await (await post(app, { subject }, ADMIN)).json();
    const { confirmation } = await dryRun();
    const applied = await post(
      app,
      { subject, apply: true, confirmation },
      ADMIN,
    );
    assert.equal(applied.status, 200);
    const id = (await applied.json()).receipt.receipt.receipt_id;

    const after = await dryRun();
    assert.equal(after.events, 0);
    assert.equal(after.earlier_receipt_id, id, "a script can verify it");
    assert.equal(
      after.next,
      `no event has these ids any more, so there is nothing to apply: receipt ${id} erased this same subject already; check it with trace obs erase --verify ${id} and the same subject`,
    );
    // Another list is another subject: no receipt of it.
    const other = await (await post(app, {
      subject: { application_id: "app", event_ids: ["a1"] },
    }, ADMIN)).json();
    assert.equal(other.earlier_receipt_id, null);
  });
});

Deno.test("POST /api/erasures with the subject's fields at the top level says to put them inside subject", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const flat = await post(app, { user_id: "u1", application_id: "a" }, ADMIN);
    assert.equal(flat.status, 400);
    assert.equal(
      (await flat.json()).error.message,
      'Invalid erasure request: put user_id, application_id inside subject: {"subject": {"user_id": …, "application_id": …}}',
    );
    const applied = await post(
      app,
      { ...SUBJECT, apply: true, confirmation: "x" },
      ADMIN,
    );
    assert.match(
      (await applied.json()).error.message,
      /^Invalid erasure request: put application_id, user_id inside subject: /,
    );
    // Another unknown key: the schema's own answer.
    const other = await post(app, { ...SUBJECT, force: true }, ADMIN);
    assert.match((await other.json()).error.message, /subject: is required/);
    assert.equal((await indexedIds(db)).length, 7, "nothing was erased");
  });
});

Deno.test("POST /api/erasures with the default audit: a refused apply is never recorded as succeeded", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const stale = await applyAsAdmin(app, "erase 3 events 0000000000000000");
    assert.equal(stale.status, 400);
    assert.equal((await indexedIds(db)).length, 7, "nothing was erased");
    const entries = await listAudit(db);
    assert.deepEqual(entries.map((e) => [e.action, e.outcome]), [
      ["subject.erase", "refused"],
      ["subject.erase", "attempted"],
    ]);
    for (const entry of entries) {
      const detail = String(entry.payload.detail);
      assert.doesNotMatch(detail, /alice/);
      assert.doesNotMatch(detail, /receipt/, "no receipt was written");
      assert.doesNotMatch(detail, /^refused/, "the outcome is not repeated");
    }

    const plan = await (await post(app, { subject: SUBJECT }, ADMIN)).json();
    const applied = await applyAsAdmin(app, plan.confirmation);
    assert.equal(applied.status, 200);
    const { receipt } = await applied.json();
    const [done, attempt] = await listAudit(db, { limit: 2 });
    assert.equal(attempt!.outcome, "attempted");
    assert.equal(done!.outcome, "succeeded");
    const id = receipt.receipt.receipt_id;
    assert.match(String(done!.payload.detail), new RegExp(`receipt ${id}$`));
    const request = /request (\S+)/.exec(String(attempt!.payload.detail))![1]!;
    assert.ok(String(done!.payload.detail).includes(`request ${request}`));
  });
});

Deno.test("trace audit list --subject finds a user's erasure requests by the erasure key's digest", async () => {
  await withErasureDb(async (db, dir) => {
    await seed(db);
    const key = await erasureKey(dir);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: key });
    const plan = await (await post(app, { subject: SUBJECT }, ADMIN)).json();
    assert.equal(
      (await applyAsAdmin(app, plan.confirmation)).status,
      200,
    );
    const list = async (...args: string[]) => {
      const io = captureIo();
      const code = await main(
        ["audit", "list", "--json", "--data-dir", dir, ...args],
        io,
      );
      return {
        code,
        err: io.stderr(),
        entries: JSON.parse(io.stdout()).entries as Record<string, unknown>[],
      };
    };
    const alice = await list("--subject", "user_id=alice");
    assert.equal(alice.code, 0, alice.err);
    assert.equal(alice.err, "");
    assert.deepEqual(
      alice.entries.map((e) => [e.action, e.outcome]),
      [
        ["subject.erase", "succeeded"],
        ["subject.erase", "attempted"],
        ["subject.erase", "succeeded"],
        ["subject.erase", "attempted"],
      ],
    );
    assert.ok(!JSON.stringify(alice.entries).includes("alice"));
    assert.deepEqual((await list("--subject", "user_id=bob")).entries, []);
    assert.deepEqual((await list("--subject", "thread_id=alice")).entries, []);

    // Without the key those entries cannot be matched, and the answer says so.
    await Deno.remove(join(dir, ERASURE_KEY_FILE));
    const keyless = await list("--subject", "user_id=alice");
    assert.equal(keyless.code, 0);
    assert.deepEqual(keyless.entries, []);
    assert.match(
      keyless.err,
      /^warning: erasure requests \(action subject\.erase\) name their subject under erasure\.key, so none of them is matched: No erasure key at /,
    );
  });
});

Deno.test("POST /api/erasures: an outcome the audit cannot record withholds a dry run, and flags an applied erasure", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const outcomes: string[] = [];
    const app = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKey: TEST_KEY,
      erasureAudit: (entry) => {
        outcomes.push(entry.outcome);
        return entry.outcome === "attempted"
          ? Promise.resolve()
          : Promise.reject(new Error("audit disk full"));
      },
    });
    const dry = await post(app, { subject: SUBJECT }, ADMIN);
    assert.equal(dry.status, 503);
    const withheld = await dry.text();
    assert.match(withheld, /could not record the dry run's outcome/);
    assert.doesNotMatch(withheld, /confirmation/);

    const plain = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const plan = await (await post(plain, { subject: SUBJECT }, ADMIN)).json();
    const applied = await applyAsAdmin(app, plan.confirmation);
    assert.equal(applied.status, 200);
    const body = await applied.json();
    assert.equal(body.result.events, 3);
    assert.match(
      body.audit_warning,
      /outcome is not in the audit trail: the audit trail could not be written; the trail holds the attempt, request \S+$/,
    );
    assert.deepEqual(outcomes, [
      "attempted",
      "succeeded",
      "attempted",
      "succeeded",
    ]);
  });
});

Deno.test("POST /api/erasures takes 10,000 event ids of the longest length, even with every character escaped, and refuses more with the body-limit message", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    // Ids of the documented length, sent as JSON writers that escape
    // non-ASCII text do (Python's json.dumps): six bytes a character.
    const ids = Array.from(
      { length: MAX_SUBJECT_EVENT_IDS },
      (_, i) =>
        String(i).padStart(6, "0") + "\\u00e9".repeat(LIMITS.idChars - 6),
    );
    const body = `{"subject": {"application_id": "app", "event_ids": [\n  "${
      ids.join('",\n  "')
    }"\n]}}`;
    assert.ok(body.length > 15_000_000, "each id takes its worst case");
    const many = await app.request("http://127.0.0.1/api/erasures", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${ADMIN}`,
      },
      body,
    });
    assert.equal(many.status, 200, await many.clone().text());
    const plan = await many.json();
    assert.equal(plan.dry_run, true);
    assert.equal(plan.events, 0);

    const tooMany = await post(app, {
      subject: {
        application_id: "app",
        event_ids: Array.from(
          { length: MAX_SUBJECT_EVENT_IDS + 1 },
          (_, i) => `e${i}`,
        ),
      },
    }, ADMIN);
    assert.equal(tooMany.status, 400);
    assert.match(
      (await tooMany.json()).error.message,
      /event_ids: must list at most 10000 event ids/,
    );

    const huge = await post(app, {
      subject: {
        application_id: "app",
        event_ids: ["x".repeat(ERASURE_MAX_BODY_BYTES)],
      },
    }, ADMIN);
    assert.equal(huge.status, 413);
    assert.match(
      (await huge.json()).error.message,
      new RegExp(
        `^Cannot read the request: the request body exceeds ${ERASURE_MAX_BODY_BYTES} bytes; send a smaller body$`,
      ),
    );
    // Other operator writes keep their 64 KiB bound, with the same wording.
    const reveal = await app.request("http://127.0.0.1/traces/reveal", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${ADMIN}`,
      },
      body: JSON.stringify({ reason: "x".repeat(70_000) }),
    });
    assert.equal(reveal.status, 413);
    assert.match(
      (await reveal.json()).error.message,
      /the request body exceeds 65536 bytes/,
    );
  });
});

Deno.test("POST /api/erasures in a server with background checkpoints never waits for a reader on the serving connection: it answers reached_file false, and the checkpoints finish it", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const checkpoints = startBackgroundCheckpoints(db, {
      truncation: erasureTruncation(db),
    });
    const reader = await openDb({ url: db.url, readOnly: true });
    try {
      const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
      const apply = async (subject: Record<string, string>) => {
        const dry = await post(app, { subject }, ADMIN);
        const { confirmation } = await dry.json();
        const answer = await post(
          app,
          { subject, apply: true, confirmation },
          ADMIN,
        );
        assert.equal(answer.status, 200);
        return await answer.json();
      };
      // Nothing in the way: the worker truncates, and the answer says it reached the file.
      let bob;
      const quiet = await statementsDuring(db, /wal_checkpoint/i, async () => {
        bob = await apply({ application_id: "app", user_id: "bob" });
      });
      assert.equal(bob!.result.reached_file, true);
      assert.deepEqual(quiet, [], "no checkpoint on the serving connection");
      assert.deepEqual(await unreachedErasures(db), []);

      // Another connection keeps a snapshot that needs the WAL.
      const snapshot = await reader.client.transaction("read");
      let alice;
      let held: string[];
      try {
        await snapshot.execute("SELECT COUNT(*) FROM obs_events");
        held = await statementsDuring(db, /wal_checkpoint/i, async () => {
          alice = await apply(SUBJECT);
        });
      } finally {
        snapshot.close();
      }
      assert.deepEqual(
        held,
        [],
        "a checkpoint there would wait for the reader",
      );
      const id = alice!.receipt.receipt.receipt_id;
      assert.equal(alice!.result.reached_file, false);
      assert.equal(alice!.result.events, 3);
      assert.match(alice!.result.storage.note, /a reader kept the WAL/);
      assert.deepEqual(await unreachedErasures(db), [id]);
      assert.equal(await fileHolds(db.path!, "ALICE_PREVIEW_ONE"), true);

      // The reader let go: the next background checkpoint finishes it.
      noteCommit(db);
      await checkpoints.stop();
      assert.deepEqual(await unreachedErasures(db), []);
      assert.equal(await fileHolds(db.path!, "ALICE_PREVIEW_ONE"), false);
    } finally {
      reader.close();
      await checkpoints.stop();
    }
  });
});
