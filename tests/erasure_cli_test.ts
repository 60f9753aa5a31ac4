import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import {
  captureIo,
  exists,
  markNewerSchema,
  spawnCli,
  withTempDir,
} from "./_helpers.ts";
import { expiredUnrecorded, SEED } from "./erasure_support.ts";
import { openDb } from "../lib/db.ts";
import { OBS_SCHEMA_VERSION } from "../lib/obs/schema.ts";
import {
  applyExpiry,
  ERASURE_KEY_FILE,
  planExpiry,
} from "../lib/obs/maint/mod.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";

/** Runs `trace …` through the real entry point. */
async function trace(
  args: string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
) {
  const io = captureIo(options.stdin ?? "", options.env ?? {});
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** A data directory holding the seed events, ingested by `trace events ingest`. */
async function withSeededData<T>(
  fn: (data: string[], dir: string) => Promise<T>,
): Promise<T> {
  return await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    assert.equal((await trace(["obs", "init", ...data])).code, 0);
    const ndjson = SEED.map((e) => JSON.stringify(e)).join("\n");
    const ingest = await trace(["events", "ingest", "-", ...data], {
      stdin: ndjson,
    });
    assert.equal(ingest.code, 0, ingest.err);
    return await fn(data, dir);
  });
}

const ALICE = ["--application", "app", "--user", "alice"];

/** `trace obs propagation --application app --on`, and what it printed. */
async function turnPropagationOn(data: string[]) {
  const on = await trace([
    "obs",
    "propagation",
    "--application",
    "app",
    "--on",
    ...data,
  ]);
  assert.equal(on.code, 0, on.err);
  return on;
}

/** `trace obs erase` of application app's event ids listed in `file`; `flags` go before the data flags. */
function eraseIdsIn(file: string, data: string[]) {
  return (...flags: string[]) =>
    trace([
      "obs",
      "erase",
      "--application",
      "app",
      "--event-ids",
      file,
      ...flags,
      ...data,
    ]);
}

/** `trace obs erase --apply` of alice with `confirmation`; `flags` go before the data flags. */
async function applyErasure(
  data: string[],
  confirmation: string,
  ...flags: string[]
) {
  return await trace([
    "obs",
    "erase",
    ...ALICE,
    "--apply",
    "--confirm",
    confirmation,
    ...flags,
    ...data,
  ]);
}

Deno.test("obs erase: dry run, refused confirmation, apply, verify, receipts, ledger verify", async () => {
  await withSeededData(async (data) => {
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(dry.code, 0, dry.err);
    assert.match(
      dry.out,
      /^Erasure dry run for one user of application app \(subject hmac-sha256:[0-9a-f]{64}\)\n {2}3 events: 3 envelopes, 3 index rows, 4 resource refs, 2 previews\n {2}by store: trace 1, conversation 1, tool_log 1\n/,
    );
    assert.match(dry.out, /Nothing was changed/);
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const json = JSON.parse(
      (await trace(["obs", "erase", ...ALICE, "--json", ...data])).out,
    );
    assert.equal(json.confirmation, confirmation);
    assert.equal(json.dry_run, true);

    const noConfirm = await trace([
      "obs",
      "erase",
      ...ALICE,
      "--apply",
      ...data,
    ]);
    assert.equal(noConfirm.code, 2);
    assert.match(noConfirm.err, /--apply needs --confirm VALUE/);
    const wrong = await applyErasure(
      data,
      "erase 3 events up to 8 0123456789abcdef",
    );
    assert.equal(wrong.code, 2);
    assert.match(wrong.err, /confirmation does not match/);

    const applied = await applyErasure(data, confirmation);
    assert.equal(applied.code, 0, applied.err);
    assert.match(
      applied.out,
      /^Erased 3 events of one user of application app/,
    );
    assert.match(applied.out, /WAL checkpointed into the file/);
    const receiptId = /Receipt (erasure-\S+): ledger entry 1, head 1:sha256:/
      .exec(applied.out)![1]!;

    const verify = await trace([
      "obs",
      "erase",
      "--verify",
      receiptId,
      ...ALICE,
      ...data,
    ]);
    assert.equal(verify.code, 0, verify.err);
    assert.match(verify.out, /the subject matches; nothing of it remains/);
    const other = await trace([
      "obs",
      "erase",
      "--verify",
      receiptId,
      "--application",
      "app",
      "--user",
      "bob",
      ...data,
    ]);
    assert.equal(other.code, 2);
    assert.match(other.err, /not the one it names/);

    const list = await trace(["obs", "erase", "--receipts", ...data]);
    assert.match(
      list.out,
      new RegExp(`^${receiptId}  \\S+  operator  user/all  3 events`),
    );
    const ledger = JSON.parse(
      (await trace(["ledger", "verify", "--json", ...data])).out,
    );
    assert.equal(ledger.ok, true);
    assert.equal(ledger.receipts, 1);

    // Something of alice comes back: verification exits 1.
    await trace(["events", "ingest", "-", ...data], {
      stdin: JSON.stringify({
        event_id: "a9",
        application_id: "app",
        user_id: "alice",
        agent_id: "bot",
        kind: "llm_call",
      }),
    });
    const dirty = await trace([
      "obs",
      "erase",
      "--verify",
      receiptId,
      ...ALICE,
      ...data,
    ]);
    assert.equal(dirty.code, 1);
    assert.match(
      dirty.out,
      /nothing the erasure covered remains\nStill there: 1 event of the subject written after this erasure's dry run \(after index position 8\), which it did not cover; to erase them, run the dry run again \(trace obs erase --application app with the same --user\) and apply the value it prints\n$/,
    );
  });
});

Deno.test("obs erase --apply erases what the dry run saw while the user keeps writing, and says what arrived since", async () => {
  await withSeededData(async (data) => {
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const late = (id: string) =>
      JSON.stringify({
        event_id: id,
        application_id: "app",
        user_id: "alice",
        agent_id: "bot",
        kind: "llm_call",
        preview: `LATE_TEXT_${id}`,
      });
    const ingest = await trace(["events", "ingest", "-", ...data], {
      stdin: [late("a8"), late("a9")].join("\n"),
    });
    assert.equal(ingest.code, 0, ingest.err);
    const applied = await applyErasure(data, confirmation);
    assert.equal(applied.code, 0, applied.err);
    assert.match(
      applied.out,
      /^Erased 3 events of one user of application app/,
    );
    assert.match(
      applied.out,
      /\nNot erased: 2 events of the subject arrived after the dry run; run the dry run again \(trace obs erase --application app with the same --user\) and apply the value it prints\n/,
    );
    assert.ok(!applied.out.includes("alice"), "the subject's id is not echoed");
    const again = JSON.parse(
      (await trace(["obs", "erase", ...ALICE, "--json", ...data])).out,
    );
    assert.equal(again.events, 2);
    const rest = JSON.parse(
      (await applyErasure(data, again.confirmation, "--json")).out,
    );
    assert.equal(rest.result.events, 2);
    assert.equal(rest.result.later_events, 0);
    const verify = await trace([
      "obs",
      "erase",
      "--verify",
      rest.receipt.receipt.receipt_id,
      ...ALICE,
      ...data,
    ]);
    assert.equal(verify.code, 0, verify.out);
    assert.match(verify.out, /nothing of it remains\n$/);
  });
});

Deno.test("obs erase --receipts and --verify count one erased event in the singular", async () => {
  await withSeededData(async (data) => {
    const one = ["--application", "app", "--event-ids", "-"];
    const plan = JSON.parse(
      (await trace(["obs", "erase", ...one, "--json", ...data], {
        stdin: "b1\n",
      })).out,
    );
    assert.equal(plan.events, 1);
    const applied = await trace(
      [
        "obs",
        "erase",
        ...one,
        "--apply",
        "--confirm",
        plan.confirmation,
        ...data,
      ],
      { stdin: "b1\n" },
    );
    assert.equal(applied.code, 0, applied.err);
    const id = /Receipt (erasure-\S+):/.exec(applied.out)?.[1] ?? "";
    const list = await trace(["obs", "erase", "--receipts", ...data]);
    assert.match(list.out, / 1 event {2}\(ledger entry /);
    const verify = await trace(
      ["obs", "erase", "--verify", id, ...one, ...data],
      { stdin: "b1\n" },
    );
    assert.equal(verify.code, 0, verify.err);
    assert.match(verify.out, /all of 1 event on /);
  });
});

Deno.test("obs erase takes exactly one selector, and event ids from a file or stdin", async () => {
  await withSeededData(async (data, dir) => {
    const none = await trace(["obs", "erase", "--application", "app", ...data]);
    assert.equal(none.code, 2);
    assert.match(none.err, /exactly one of --user, --anonymous/);
    const two = await trace([
      "obs",
      "erase",
      ...ALICE,
      "--thread",
      "t1",
      ...data,
    ]);
    assert.equal(two.code, 2);
    const noApp = await trace(["obs", "erase", "--user", "alice", ...data]);
    assert.match(noApp.err, /--application ID is required/);
    const stray = await trace([
      "obs",
      "erase",
      ...ALICE,
      "--confirm",
      "x",
      ...data,
    ]);
    assert.match(stray.err, /--confirm takes effect only with --apply/);

    const file = join(dir, "ids.txt");
    const eraseApp = (selector: string[], json = false, stdin?: string) =>
      trace(
        [
          "obs",
          "erase",
          "--application",
          "app",
          ...selector,
          ...(json ? ["--json"] : []),
          ...data,
        ],
        stdin === undefined ? {} : { stdin },
      );
    // Ids are taken exactly: "  n1  " is another id than n1 (ingest accepts
    // both), and the dry run says it matched nothing.
    await Deno.writeTextFile(file, "b1\n\n  n1  \n");
    const spaced = await eraseApp(["--event-ids", file]);
    assert.match(spaced.out, /\n {2}1 event: /);
    assert.match(
      spaced.out,
      /\n {2}1 of the 2 listed ids match no event of application app \(ids are compared exactly: case and spaces count\): " {2}n1 {2}"\n/,
    );
    const spacedJson = JSON.parse(
      (await eraseApp(["--event-ids", file], true)).out,
    );
    assert.deepEqual(spacedJson.unmatched_event_ids, ["  n1  "]);
    assert.match(spaced.out, /To erase, run the same command with:/);
    // Ids that match nothing get no confirmation to apply: that is refused.
    await Deno.writeTextFile(file, "nope\n");
    const noMatch = await eraseApp(["--event-ids", file]);
    assert.doesNotMatch(noMatch.out, /--apply --confirm/);
    assert.match(
      noMatch.out,
      /\nNothing was changed, and no event has these ids, so there is nothing to apply: check the ids \(they are compared exactly: case and spaces count\); if they were erased already, check that erasure with trace obs erase --verify RECEIPT_ID and the same subject \(trace obs erase --receipts lists the receipts\)\n/,
    );
    await Deno.writeTextFile(file, "b1\n\n  n1  \n");
    const cased = await eraseApp(["--user", "Alice"]);
    assert.match(
      cased.out,
      /\n {2}nothing matched in application app: ids are compared exactly \(case and spaces count\); trace events query --application app lists its events\n/,
    );
    await Deno.writeTextFile(file, "b1\n\nn1\n");
    const fromFile = JSON.parse(
      (await eraseApp(["--event-ids", file], true)).out,
    );
    assert.equal(fromFile.events, 2);
    assert.equal(fromFile.selector, "events");
    assert.deepEqual(fromFile.unmatched_event_ids, []);
    const fromStdin = JSON.parse(
      (await eraseApp(["--event-ids", "-"], true, "n1\nb1\n")).out,
    );
    assert.equal(fromStdin.confirmation, fromFile.confirmation);
    // A bad id is named by its line in the file (blank lines count).
    const bad = await trace(
      ["obs", "erase", "--application", "app", "--event-ids", "-", ...data],
      { stdin: "b1\n\n\nbad\u001bid\n" },
    );
    assert.equal(bad.code, 2);
    assert.match(
      bad.err,
      /--event-ids - line 4: the event id must not contain control, line separator or bidirectional formatting characters; fix that line\n$/,
    );
    for (
      const selector of [
        ["--anonymous"],
        ["--thread", "t1"],
        ["--memory", "mem-1"],
      ]
    ) {
      const plan = JSON.parse(
        (await trace([
          "obs",
          "erase",
          "--application",
          "app",
          ...selector,
          "--json",
          ...data,
        ])).out,
      );
      assert.equal(plan.events, selector[0] === "--memory" ? 1 : 2);
    }
  });
});

Deno.test("obs erase --apply of event ids that match nothing is refused with one line, and one where some match names the others", async () => {
  await withSeededData(async (data, dir) => {
    const file = join(dir, "ids.txt");
    const erase = eraseIdsIn(file, data);
    const confirmationOf = async () =>
      JSON.parse((await erase("--json")).out).confirmation as string;
    await Deno.writeTextFile(file, "A1\nb 1\n");
    const typo = await erase("--apply", "--confirm", await confirmationOf());
    assert.equal(typo.code, 2);
    assert.equal(
      typo.err,
      'trace obs erase: Cannot erase: none of the 2 event id(s) matches an event of application "app" in scope all ("A1", "b 1"); nothing was changed; ids are compared exactly (case and spaces count): check them with a dry run\n',
    );
    const receipts = await trace(["obs", "erase", "--receipts", ...data]);
    assert.match(receipts.out, /^No erasure receipts yet/);

    await Deno.writeTextFile(file, "a1\nA1\nb 1\n");
    const some = await erase("--apply", "--confirm", await confirmationOf());
    assert.equal(some.code, 0, some.err);
    assert.match(
      some.out,
      /\n {2}2 of the 3 listed ids match no event of application app \(ids are compared exactly: case and spaces count\): "A1", "b 1"\n/,
    );
    const again = await erase("--apply", "--confirm", await confirmationOf());
    assert.equal(again.code, 2);
    assert.match(
      again.err,
      /matches an event of application "app" any more, and receipt erasure-\S+ erased this same subject already; nothing was changed; check it with trace obs erase --verify erasure-\S+ and the same subject\n$/,
    );
  });
});

Deno.test("obs erase dry run of event ids an applied erasure took already names its receipt and the command that verifies it", async () => {
  await withSeededData(async (data, dir) => {
    const file = join(dir, "ids.txt");
    await Deno.writeTextFile(file, "a1\nA1\n");
    const erase = eraseIdsIn(file, data);
    const dryRunJson = async () => JSON.parse((await erase("--json")).out);
    assert.equal((await dryRunJson()).earlier_receipt_id, null);
    const { confirmation } = await dryRunJson();
    const applied = await erase("--apply", "--confirm", confirmation, "--json");
    assert.equal(applied.code, 0, applied.err);
    const id = JSON.parse(applied.out).receipt.receipt.receipt_id;

    assert.equal((await dryRunJson()).earlier_receipt_id, id);
    const dry = await erase();
    assert.equal(dry.code, 0, dry.err);
    const verify =
      `trace obs erase --verify ${id} --application app --event-ids ${file} ${
        data.join(" ")
      }`;
    assert.match(
      dry.out,
      new RegExp(
        `\nNothing was changed, and no event has these ids any more, so there is nothing to apply: receipt ${id} erased this same subject already; check it with ${
          RegExp.escape(verify)
        }\n$`,
      ),
    );
    // The command runs as printed.
    const verified = await trace(verify.split(" ").slice(1));
    assert.equal(verified.code, 0, verified.err);
    assert.match(verified.out, /the subject matches; nothing of it remains/);
  });
});

Deno.test("obs erase counts envelopes expired before schema version 7 as archived to an unrecorded location", async () => {
  await withSeededData(async (data, dir) => {
    const db = await openDb({ dataDir: join(dir, "data") });
    try {
      // A grant as a version 6 expiry left it: no archive location.
      await db.client.batch(expiredUnrecorded("a2"), "write");
    } finally {
      db.close();
    }
    const archived =
      /Source expiry archived the envelope of 1 of these events earlier, ids and preview digests included; no erasure opens its archives, so clean them yourself, or delete them once no longer needed:\n {2,4}1 envelope expired before schema version 7, which recorded no archive location: search the --archive-dir of earlier trace obs expiry-apply runs for the subject's ids\n/;
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.match(dry.out, archived);
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const applied = await applyErasure(data, confirmation);
    assert.equal(applied.code, 0, applied.err);
    assert.match(applied.out, archived);
  });
});

Deno.test("obs erase names the archive file trace obs expiry-apply wrote the subject's envelopes to", async () => {
  await withSeededData(async (data, dir) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const planFile = join(dir, "plan.json");
    const planned = await trace([
      "obs",
      "expiry-plan",
      "--older-than",
      new Date().toISOString(),
      "--application-id",
      "app",
      "--out",
      planFile,
      ...data,
    ]);
    assert.equal(planned.code, 0, planned.err);
    const plan = JSON.parse(await Deno.readTextFile(planFile));
    const expired = await trace([
      "obs",
      "expiry-apply",
      "--plan",
      planFile,
      "--confirm",
      plan.confirmation,
      "--archive-dir",
      join(dir, "archive"),
      ...data,
    ]);
    assert.equal(expired.code, 0, expired.err);
    const [file] = [...Deno.readDirSync(join(dir, "archive"))]
      .filter((entry) => entry.name.endsWith(".ndjson"));
    const path = join(dir, "archive", file!.name);
    // Listed under the answer's archive line, indented one step more.
    const named = (indent: string) =>
      `\n${indent}remove the subject's lines from ${path} (3 envelopes)\n`;
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(dry.code, 0, dry.err);
    assert.match(dry.out, /archived the envelopes of 3 of these events/);
    assert.ok(dry.out.includes(named("    ")), dry.out);
    const json = await trace(["obs", "erase", ...ALICE, "--json", ...data]);
    assert.deepEqual(JSON.parse(json.out).expired_archives, [
      { location: path, envelopes: 3 },
    ]);
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const applied = await applyErasure(data, confirmation);
    assert.equal(applied.code, 0, applied.err);
    assert.ok(applied.out.includes(named("  ")), applied.out);
  });
});

Deno.test("obs erase names the file of an expiry apply stopped between batches, and says which envelopes it did not delete", async () => {
  await withSeededData(async (data, dir) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const db = await openDb({ dataDir: join(dir, "data") });
    try {
      const plan = await planExpiry(db, {
        olderThan: Date.now(),
        applicationId: "app",
      });
      // Stopped after the first batch (a1), as a Ctrl-C between batches.
      let looks = 0;
      const signal = {
        get aborted() {
          return ++looks > 2;
        },
      } as AbortSignal;
      const stopped = await applyExpiry(
        db,
        plan,
        plan.confirmation,
        () => ({ archived: true, location: "/srv/archive/expiry-p1.ndjson" }),
        { batchSize: 1, signal },
      );
      assert.equal(stopped.deleted, 1);
    } finally {
      db.close();
    }
    const lines = (indent: string, kept: string) =>
      `Source expiry archived the envelopes of 3 of these events earlier, ids and preview digests included; no erasure opens its archives, so clean them yourself, or delete them once no longer needed:\n${indent}  remove the subject's lines from /srv/archive/expiry-p1.ndjson (3 envelopes)\n${indent}  2 of them were not deleted by source expiry (an apply stopped between its batches, or a batch failed): ${kept}\n`;
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(dry.code, 0, dry.err);
    assert.ok(
      dry.out.includes(lines("  ", "the index still holds them too")),
      dry.out,
    );
    const json = await trace(["obs", "erase", ...ALICE, "--json", ...data]);
    const answer = JSON.parse(json.out);
    assert.deepEqual(
      [
        answer.expired_envelopes,
        answer.archived_envelopes,
        answer.archived_unexpired,
      ],
      [1, 3, 2],
    );
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const applied = await applyErasure(data, confirmation);
    assert.equal(applied.code, 0, applied.err);
    assert.ok(
      applied.out.includes(
        lines(
          "",
          "this erasure removed them from the index, not from their archive",
        ),
      ),
      applied.out,
    );
  });
});

Deno.test("obs erase names 20 archive files in a dry run and every one when it applies, since the records go with the events", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    assert.equal((await trace(["obs", "init", ...data])).code, 0);
    const db = await openDb({ dataDir: join(dir, "data") });
    try {
      await ingestEvents(
        db,
        Array.from({ length: 21 }, (_, i) => ({
          event_id: `archived-${i}`,
          application_id: "app",
          agent_id: "agent-1",
          user_id: "alice",
          kind: "retrieval",
        })),
        { now: () => Date.now() - 1_000 },
      );
      // One archive file per expired envelope: 21 plans of one envelope each.
      for (let i = 0; i < 21; i++) {
        const plan = await planExpiry(db, {
          olderThan: Date.now(),
          applicationId: "app",
          limit: 1,
        });
        await applyExpiry(db, plan, plan.confirmation, () => ({
          archived: true as const,
          location: `/srv/archive/expiry-${String(i).padStart(2, "0")}.ndjson`,
        }));
      }
    } finally {
      db.close();
    }
    const named = (out: string) =>
      out.match(/remove the subject's lines from \/srv\/archive\//g)?.length;
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(dry.code, 0, dry.err);
    assert.equal(named(dry.out), 20, dry.out);
    assert.match(
      dry.out,
      /1 more archive files hold some: --json names them all, and the apply names every one/,
    );
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const applied = await applyErasure(data, confirmation);
    assert.equal(applied.code, 0, applied.err);
    assert.equal(named(applied.out), 21, applied.out);
    assert.doesNotMatch(applied.out, /more archive files/);
  });
});

Deno.test("obs propagation opts an application in, and trace events ingest then propagates its deletions", async () => {
  await withSeededData(async (data) => {
    const off = await trace(["obs", "propagation", "--json", ...data]);
    assert.deepEqual(JSON.parse(off.out), { default: false, applications: [] });
    const set = await turnPropagationOn(data);
    assert.match(
      set.out,
      /Default \(TRACE_OBS_ERASURE_PROPAGATION in this environment\): off\n {2}app: on\n/,
    );
    const ingest = await trace(["events", "ingest", "-", ...data], {
      stdin: JSON.stringify({
        event_id: "del-1",
        application_id: "app",
        memory_id: "mem-1",
        kind: "memory_delete",
      }),
    });
    assert.equal(ingest.code, 0, ingest.err);
    const list = await trace(["obs", "erase", "--receipts", "--json", ...data]);
    const [receipt] = JSON.parse(list.out).receipts;
    assert.equal(receipt.trigger, "propagation");
    assert.equal(receipt.scope, "content");
    assert.equal(receipt.tables.obs_previews, 1);
    // Metadata stays by design of the content scope: neither a leak nor a complete removal.
    const listText = await trace(["obs", "erase", "--receipts", ...data]);
    assert.match(
      listText.out,
      / {2}metadata \(span names, app\.\* attributes\) stays by design of scope content/,
    );
    const verify = await trace([
      "obs",
      "erase",
      "--verify",
      receipt.receipt_id,
      "--application",
      "app",
      "--memory",
      "mem-1",
      ...data,
    ]);
    assert.equal(verify.code, 0, verify.err);
    assert.match(
      verify.out,
      /\nScope content: previews and their digests were erased; metadata \(span names, app\.\* attributes, ids and times\) stays by design of this scope, so it is neither a leak nor a complete removal\n$/,
    );
    const both = await trace([
      "obs",
      "propagation",
      "--application",
      "app",
      "--on",
      "--off",
      ...data,
    ]);
    assert.equal(both.code, 2);
    const empty = await trace([
      "obs",
      "propagation",
      "--application",
      "",
      "--on",
      ...data,
    ]);
    assert.equal(empty.code, 2);
    assert.match(empty.err, /--application was given an empty value/);
    for (const id of ["evil\u001b]0;pwned\u0007", "a\nb", "x".repeat(257)]) {
      const refused = await trace([
        "obs",
        "propagation",
        "--application",
        id,
        "--on",
        ...data,
      ]);
      assert.equal(refused.code, 2, JSON.stringify(id));
      assert.match(
        refused.err,
        /^trace obs propagation: Cannot set memory-deletion propagation: the application id must /,
      );
      assert.equal(refused.err.split("\n").length, 2, "one line");
    }
    const listed = await trace(["obs", "propagation", "--json", ...data]);
    assert.deepEqual(JSON.parse(listed.out).applications, [
      { application_id: "app", enabled: true },
    ]);
  });
});

Deno.test("obs erase refuses an index a newer build upgraded before it makes a key", async () => {
  await withSeededData(async (data, dir) => {
    const db = await openDb({ dataDir: join(dir, "data") });
    try {
      await markNewerSchema(db, "obs", OBS_SCHEMA_VERSION + 1);
    } finally {
      db.close();
    }
    const key = join(dir, "data", ERASURE_KEY_FILE);
    await Deno.remove(key).catch(() => {});
    const plan = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(plan.code, 2, plan.err);
    assert.match(plan.err, /newer than this build knows/);
    assert.equal(await exists(key), false, "no key was made");
  });
});

Deno.test("trace serve with a lost erasure key serves all but erasure and says to restore the key; with the staging adapter or propagation on it does not start", async () => {
  await withSeededData(async (data, dir) => {
    const key = join(dir, "data", ERASURE_KEY_FILE);
    const dry = await trace(["obs", "erase", ...ALICE, "--json", ...data]);
    const applied = await applyErasure(data, JSON.parse(dry.out).confirmation);
    assert.equal(applied.code, 0, applied.err);
    await Deno.remove(key);
    const restore =
      /The erasure key \S+erasure\.key is missing, but the database holds 1 erasure receipt made with key sha256:[0-9a-f]{16}; restore erasure\.key from a backup of this data directory \(a new key would leave them unverifiable\)/;
    const server = spawnCli(["serve", "--port", "0", ...data]);
    try {
      const [, url] = await server.waitFor(/listening on (http:\/\/\S+?)[\s;]/);
      assert.match(
        server.seen(),
        new RegExp(
          `trace serve: erasure is off, everything else is served: ${restore.source}, then restart trace serve\n`,
        ),
      );
      const health = await fetch(`${url}/api/health`);
      assert.equal(health.status, 200);
      const report = await health.json();
      assert.equal(report.erasure_key, "lost");
      assert.deepEqual(
        report.alerts.filter((a: { code: string }) =>
          a.code.startsWith("erasure_key")
        ).map((a: { code: string; severity: string }) => [a.code, a.severity]),
        [["erasure_key_lost", "warning"]],
        "the health page and API say erasure is off",
      );
    } finally {
      server.child.kill("SIGTERM");
      await server.finish();
    }
    const adapter = spawnCli([
      "serve",
      "--port",
      "0",
      "--staging-adapter",
      ...data,
    ]);
    const refused = await adapter.finish();
    assert.equal(refused.code, 2);
    assert.match(adapter.seen(), restore);
    // A deletion event it acknowledged could not be erased: not without a key.
    await turnPropagationOn(data);
    const propagating = spawnCli(["serve", "--port", "0", ...data]);
    assert.equal((await propagating.finish()).code, 2);
    assert.match(
      propagating.seen(),
      /trace serve does not start without it while erasure propagation is on \(TRACE_OBS_ERASURE_PROPAGATION=true, or an application turned on with trace obs propagation\)/,
    );
    assert.equal(await exists(key), false, "no key was made");
  });
});

Deno.test("a lost erasure key is never replaced while receipts need it, and a dry run never makes one", async () => {
  await withSeededData(async (data, dir) => {
    const key = join(dir, "data", ERASURE_KEY_FILE);
    assert.equal(await exists(key), true, "trace obs init made the key");
    const original = await Deno.readTextFile(key);
    const dry = await trace(["obs", "erase", ...ALICE, "--json", ...data]);
    const confirmation = JSON.parse(dry.out).confirmation;
    const applied = await applyErasure(data, confirmation, "--json");
    assert.equal(applied.code, 0, applied.err);
    const receipt = JSON.parse(applied.out).receipt.receipt;

    await Deno.remove(key);
    const lost =
      /^trace obs \S+: The erasure key \S+erasure\.key is missing, but the database holds 1 erasure receipt made with key sha256:[0-9a-f]{16}; restore erasure\.key from a backup of this data directory \(a new key would leave them unverifiable\)\n$/;
    for (
      const args of [
        ["obs", "erase", ...ALICE],
        ["obs", "erase", ...ALICE, "--apply", "--confirm", confirmation],
        ["obs", "erase", "--verify", receipt.receipt_id, ...ALICE],
        ["obs", "init"],
      ]
    ) {
      const refused = await trace([...args, ...data]);
      assert.equal(refused.code, 2, args.join(" "));
      assert.match(refused.err, lost, args.join(" "));
      assert.doesNotMatch(refused.out, /Nothing was changed/);
      assert.equal(await exists(key), false, `${args.join(" ")} made no key`);
    }
    // An ingest still writes; only the propagation it would run is refused.
    await turnPropagationOn(data);
    const ingest = await trace(["events", "ingest", "-", ...data], {
      stdin: JSON.stringify({
        event_id: "del-9",
        application_id: "app",
        memory_id: "mem-1",
        kind: "memory_delete",
      }),
    });
    assert.equal(ingest.code, 0, ingest.err);
    assert.match(ingest.err, /Cannot propagate .*erasure\.key is missing/);
    assert.equal(await exists(key), false);

    // The key restored from a backup: every receipt verifies again.
    await Deno.writeTextFile(key, original, { mode: 0o600 });
    const verify = await trace([
      "obs",
      "erase",
      "--verify",
      receipt.receipt_id,
      ...ALICE,
      ...data,
    ]);
    assert.equal(verify.code, 0, verify.err);
  });
});

Deno.test("without a key and without receipts, the dry run points to trace obs init, which makes the key and says so", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    const ingest = await trace(["events", "ingest", "-", ...data], {
      stdin: SEED.map((e) => JSON.stringify(e)).join("\n"),
    });
    assert.equal(ingest.code, 0, ingest.err);
    const key = join(dir, "data", ERASURE_KEY_FILE);
    assert.equal(
      await exists(key),
      true,
      "the ingest that made the index made the key",
    );
    await Deno.remove(key);
    const dry = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(dry.code, 2);
    assert.match(
      dry.err,
      /^trace obs erase: No erasure key at \S+erasure\.key: restore it from a backup if this data directory had one \(receipts are checked only with the key that made them\); otherwise trace obs init creates one\n$/,
    );
    assert.equal(await exists(key), false, "a dry run never makes a key");
    const init = await trace(["obs", "init", ...data]);
    assert.equal(init.code, 0, init.err);
    assert.match(
      init.out,
      /^Observability schema already up to date\nErasure key created at \S+erasure\.key: back it up with the data directory \(receipts are checked only with the key that made them\)\n$/,
    );
    assert.equal(await exists(key), true);
    const quiet = await trace(["obs", "init", "--json", ...data]);
    assert.deepEqual(JSON.parse(quiet.out), {
      applied: [],
      erasure_key_created: false,
    });
    const again = await trace(["obs", "erase", ...ALICE, ...data]);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /Nothing was changed/);
  });
});
