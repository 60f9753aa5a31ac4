/**
 * What a new user meets first: one name for the application flag, a near
 * flag suggested, the erasure key made with the index, an empty input
 * warned about, and missing or misplaced data directories explained.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ERASURE_KEY_FILE } from "../lib/obs/maint/mod.ts";
import {
  exists,
  runCli,
  SUPPORT_TURN_EVENTS,
  withTempDir,
} from "./_helpers.ts";

const trace = (args: string[], stdin = "") => runCli(args, {}, stdin);
const FIXTURE = SUPPORT_TURN_EVENTS;

/** A data directory holding the fixture's events (application app-1, user u-7). */
async function withIngested<T>(
  fn: (data: string[], dataDir: string) => Promise<T>,
): Promise<T> {
  return await withTempDir(async (dir) => {
    const dataDir = join(dir, "my data");
    const data = ["--data-dir", dataDir];
    const ingest = await trace(["events", "ingest", FIXTURE, ...data]);
    assert.equal(ingest.code, 0, ingest.err);
    return await fn(data, dataDir);
  });
}

/** Splits a printed command line into words (plain and single-quoted words only). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

Deno.test("every command that takes an application accepts --application and --application-id, and refuses both", async () => {
  await withIngested(async (data) => {
    const commands = [
      ["events", "query"],
      ["events", "summary"],
      ["obs", "parity"],
      ["obs", "backfill"],
      ["obs", "expiry-plan", "--older-than", "2021-01-01T00:00:00Z"],
      ["obs", "erase", "--user", "u-7"],
      ["obs", "propagation", "--off"],
    ];
    for (const command of commands) {
      for (const flag of ["--application", "--application-id"]) {
        const answer = await trace([...command, flag, "app-1", ...data]);
        assert.doesNotMatch(answer.err, /Unknown option/, command.join(" "));
        assert.equal(
          answer.code,
          0,
          `${command.join(" ")} ${flag}: ${answer.err}`,
        );
      }
      const both = await trace([
        ...command,
        "--application",
        "app-1",
        "--application-id",
        "app-1",
        ...data,
      ]);
      assert.equal(both.code, 2);
      assert.equal(
        both.err,
        `trace ${command[0]} ${
          command[1]
        }: --application and --application-id are the same flag: give one of them; see trace ${
          command[0]
        } ${command[1]} --help\n`,
      );
    }
    const help = await trace(["--help"]);
    assert.match(
      help.out,
      /--application-id is accepted as another name of --application/,
    );
    for (
      const command of [["obs", "parity"], ["obs", "backfill"], [
        "obs",
        "expiry-plan",
      ]]
    ) {
      const usage = await trace([...command, "--help"]);
      assert.match(usage.out, /\[--application ID\]/);
      assert.doesNotMatch(usage.out, /--application-id/);
    }
  });
});

Deno.test("an unknown flag close to a known one is suggested; a far one is not", async () => {
  const near = await trace(["external-run", "--confg", "x"]);
  assert.equal(near.code, 2);
  assert.equal(
    near.err,
    "trace external-run: Unknown option '--confg' (did you mean --config?); see trace external-run --help\n",
  );
  const far = await trace(["external-run", "--zzzzz", "x"]);
  assert.equal(
    far.err,
    "trace external-run: Unknown option '--zzzzz'; see trace external-run --help\n",
  );
  const json = await trace(["events", "query", "--jsno"]);
  assert.match(json.err, /Unknown option '--jsno' \(did you mean --json\?\)/);
});

Deno.test("events ingest makes the erasure key with the index, so the first dry run works", async () => {
  await withIngested(async (data, dataDir) => {
    assert.equal(await exists(join(dataDir, ERASURE_KEY_FILE)), true);
    const dry = await trace([
      "obs",
      "erase",
      "--application",
      "app-1",
      "--user",
      "u-7",
      ...data,
    ]);
    assert.equal(dry.code, 0, dry.err);
    assert.match(dry.out, /Nothing was changed/);
  });
});

Deno.test("obs erase --apply prints a verify command that runs as printed", async () => {
  await withIngested(async (data, dataDir) => {
    const subject = ["--application-id", "app-1", "--user", "u-7"];
    const dry = await trace(["obs", "erase", ...subject, "--json", ...data]);
    const confirmation = JSON.parse(dry.out).confirmation;
    const applied = await trace([
      "obs",
      "erase",
      ...subject,
      "--apply",
      "--confirm",
      confirmation,
      ...data,
    ]);
    assert.equal(applied.code, 0, applied.err);
    const receiptId = /Receipt (erasure-\S+):/.exec(applied.out)![1]!;
    // The user's id is never echoed after an erasure: the line names the flag to add.
    assert.ok(!applied.out.includes("u-7"), applied.out);
    const later = /^Check later, adding the same --user: (.+)$/m.exec(
      applied.out,
    )![1]!;
    assert.equal(
      later,
      `trace obs erase --verify ${receiptId} --application app-1 --data-dir '${dataDir}'`,
    );
    const words = shellWords(later);
    assert.deepEqual(words.slice(0, 1), ["trace"]);
    const verify = await trace([...words.slice(1), "--user", "u-7"]);
    assert.equal(verify.code, 0, verify.err);
    assert.match(verify.out, /nothing of it remains/);
  });
});

Deno.test("events ingest of an empty file or empty stdin warns on stderr and still exits 0", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    const file = join(dir, "empty.ndjson");
    await Deno.writeTextFile(file, "\n");
    const fromFile = await trace(["events", "ingest", file, ...data]);
    assert.equal(fromFile.code, 0);
    assert.equal(
      fromFile.out,
      "Ingested 0 events (0 identical retries skipped)\n",
    );
    assert.equal(
      fromFile.err,
      `warning: ${file} held no events; check the path (NDJSON, one event per line)\n`,
    );
    const piped = await trace(["events", "ingest", "-", "--json", ...data]);
    assert.equal(piped.code, 0);
    assert.deepEqual(JSON.parse(piped.out), {
      ok: true,
      inserted: 0,
      duplicates: 0,
      lines: 0,
      batches: 0,
    });
    assert.equal(
      piped.err,
      "warning: standard input held no events; check what is piped in\n",
    );
    const some = await trace(["events", "ingest", FIXTURE, ...data]);
    assert.equal(some.err, "");
  });
});

Deno.test("a reader of the index on an empty data directory says how to begin, in one line", async () => {
  await withTempDir(async (dir) => {
    const empty = join(dir, "empty");
    for (
      const command of [["obs", "health"], ["events", "query"], [
        "obs",
        "parity",
      ]]
    ) {
      const answer = await trace([...command, "--data-dir", empty]);
      assert.equal(answer.code, 2);
      assert.equal(
        answer.err,
        `trace ${
          command.join(" ")
        }: No Trace data at ${empty}/trace.db yet: nothing has been recorded there; check --data-dir / --db, or begin with trace obs init, trace events ingest FILE or a run\n`,
      );
    }
    assert.equal(await exists(empty), false, "a reader creates nothing");
  });
});

Deno.test("a data directory that is a file is refused in the same words by readers and writers", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "trace.db");
    await Deno.writeTextFile(file, "");
    for (
      const command of [
        ["external-runs"],
        ["obs", "init"],
        ["obs", "health"],
        ["events", "query"],
        ["events", "ingest", FIXTURE],
      ]
    ) {
      const answer = await trace([...command, "--data-dir", file]);
      assert.equal(answer.code, 2, command.join(" "));
      assert.equal(
        answer.err,
        `trace ${
          command.slice(0, command[0] === "events" ? 2 : command.length).join(
            " ",
          )
        }: Cannot use ${file} as a data directory: it is a file; choose a directory\n`,
      );
    }
  });
});

Deno.test("trace --help says what --json prints; trace serve's usage line names every option", async () => {
  const help = await trace(["--help"]);
  const text = help.out.replace(/\n/g, " ");
  assert.doesNotMatch(text, /every command prints one JSON object/);
  assert.match(text, /reference list and reference plan print an array/);
  const list = await trace(["reference", "list", "--json"]);
  assert.ok(Array.isArray(JSON.parse(list.out)));
  const serve = await trace(["serve", "--help"]);
  const usage = serve.out.slice(0, serve.out.indexOf("\n\n"));
  for (
    const flag of [
      "--host",
      "--port",
      "--public-origin",
      "--default-application",
      "--staging-adapter",
      "--data-dir",
      "--db",
    ]
  ) {
    assert.ok(usage.includes(`[${flag} `) || usage.includes(`[${flag}]`), flag);
  }
});
