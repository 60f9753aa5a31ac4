/**
 * `--json` everywhere: every command prints exactly one JSON object on stdout,
 * a failure included, decided once in `main()`; listing streams are NDJSON.
 * And the command grammar's "did you mean".
 */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { closestName, editDistance } from "../lib/suggest.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { captureIo, withDb, withTempDir } from "./_helpers.ts";

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** Exactly one line of stdout, and it is a JSON error object. */
function oneJsonError(
  out: string,
  what: string,
): { code: string; message: string } {
  const lines = out.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, `${what}: ${JSON.stringify(out)}`);
  const error = JSON.parse(lines[0]!).error;
  assert.equal(typeof error?.code, "string", what);
  assert.equal(typeof error?.message, "string", what);
  return error;
}

Deno.test("every command on an empty data directory answers --json with one JSON error object", async () => {
  await withTempDir(async (dir) => {
    const empty = ["--data-dir", `${dir}/empty`];
    for (
      const args of [
        ["events", "query"],
        ["events", "summary"],
        ["events", "export"],
        ["obs", "health"],
        ["obs", "parity"],
        ["obs", "retention"],
        ["obs", "erase", "--receipts"],
        ["obs", "propagation"],
        ["reference", "dashboard"],
        ["reference", "ranking"],
        ["reference", "show", "run-20990101T000000Z-000000000001"],
        ["external-runs"],
        ["external-gate"],
        ["audit", "list"],
      ]
    ) {
      const result = await trace([...args, "--json", ...empty]);
      assert.equal(result.code, 2, args.join(" "));
      const error = oneJsonError(result.out, args.join(" "));
      // The same one line on stderr, prefixed with the command.
      assert.equal(
        result.err,
        `trace ${
          args.slice(0, 2).filter((a) =>
            !a.startsWith("-") && !a.startsWith("run-")
          ).join(" ")
        }: ${error.message}\n`,
        args.join(" "),
      );
    }
  });
});

Deno.test("usage errors answer --json with one JSON error object of code usage", async () => {
  for (
    const args of [
      ["external", "bogus"],
      ["external", "--json"],
      ["external-run"],
      ["external-run", "--limit", "3"],
      ["no-such-command"],
    ]
  ) {
    const result = await trace([...args, "--json"]);
    assert.equal(result.code, 2, args.join(" "));
    const error = oneJsonError(result.out, args.join(" "));
    assert.equal(error.code, "usage", args.join(" "));
  }
});

Deno.test("events query, summary and export refuse a bad filter flag value alike, with code usage", async () => {
  await withTempDir(async (dir) => {
    for (
      const flag of [
        ["--store", "bogus"],
        ["--since", "yesterday"],
        ["--kind", "Not A Kind"],
        ["--resource-type", "doc"],
      ]
    ) {
      const answers = [];
      for (const command of ["query", "summary", "export"]) {
        const args = ["events", command, ...flag, "--json", "--data-dir", dir];
        const result = await trace(args);
        assert.equal(result.code, 2, args.join(" "));
        answers.push(oneJsonError(result.out, args.join(" ")));
      }
      for (const answer of answers) {
        assert.deepEqual(answer, answers[0], flag.join(" "));
        assert.equal(answer.code, "usage", flag.join(" "));
      }
    }
  });
});

Deno.test("a command that answered before it failed is not answered twice", async () => {
  await withTempDir(async (dir) => {
    const file = `${dir}/bad.ndjson`;
    await Deno.writeTextFile(file, "{}\n");
    const result = await trace([
      "events",
      "ingest",
      file,
      "--json",
      "--data-dir",
      dir,
    ]);
    assert.equal(result.code, 2);
    const lines = result.out.split("\n").filter((line) => line !== "");
    assert.equal(lines.length, 1, result.out);
    const answer = JSON.parse(lines[0]!);
    assert.equal(answer.ok, false);
    assert.equal(answer.error.code, "config_invalid");
    // Nothing is "above" in JSON: the refused lines are in items.
    assert.doesNotMatch(answer.error.message, /above/);
    assert.match(answer.error.message, /listed in items/);
    assert.equal(answer.error.items.length, 1);
  });
});

Deno.test("events query --limit takes a whole number from 1 to 1000, like every numeric flag", async () => {
  await withTempDir(async (dir) => {
    for (const limit of ["-1", "1.5", "99999999", "0", "ten"]) {
      const result = await trace([
        "events",
        "query",
        "--limit",
        limit,
        "--data-dir",
        dir,
      ]);
      assert.equal(result.code, 2, limit);
      assert.equal(
        result.err,
        `trace events query: Invalid trace query: --limit must be a whole number from 1 to 1000, got ${
          JSON.stringify(limit)
        }\n`,
      );
    }
  });
});

Deno.test("editDistance() counts swapped neighbours as one edit, so trace external rnu suggests run", async () => {
  assert.equal(editDistance("rnu", "run"), 1);
  assert.equal(editDistance("shwo", "show"), 1);
  assert.equal(editDistance("run", "run"), 0);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(closestName("rnu", ["run", "show", "plan"]), "run");
  const grouped = await trace(["external", "rnu"]);
  assert.equal(grouped.code, 2);
  assert.match(
    grouped.err,
    /^trace external: unknown command "rnu"; did you mean "run"\? /,
  );
  const hyphenated = await trace(["external-rnu"]);
  assert.match(hyphenated.err, /did you mean "external-run"\?/);
  const far = await trace(["external", "zzz"]);
  assert.doesNotMatch(far.err, /did you mean/);
});

Deno.test("external-run --help names every output flag, --html included, and exit code 130", async () => {
  const help = await trace(["external-run", "--help"]);
  assert.equal(help.code, 0);
  const usage = help.out.slice(0, help.out.indexOf("\n\n"));
  for (
    const flag of ["--output", "--junit", "--summary-md", "--html", "--force"]
  ) {
    assert.ok(usage.includes(flag), `${flag} missing from the usage line`);
  }
  assert.match(help.out, /130 after a second Ctrl-C/);
  const global = await trace(["--help"]);
  assert.match(global.out, /130 when a second Ctrl-C/);
});

Deno.test("help asked for with --json is one JSON object holding the help text as usage", async () => {
  for (
    const [args, start] of [
      [["help", "--json"], /^trace: prove/],
      [["--help", "--json"], /^trace: prove/],
      [["--json", "help"], /^trace: prove/],
      [["external-run", "--help", "--json"], /^Usage: trace external-run /],
      [["help", "external", "run", "--json"], /^Usage: trace external-run /],
      [["events", "ingest", "-h", "--json"], /^Usage: trace events ingest /],
      [["external", "--json"], null],
    ] as const
  ) {
    const answer = await trace([...args]);
    if (start === null) {
      // A group without a command asks for no help: a usage error, in JSON.
      assert.equal(answer.code, 2);
      assert.equal(oneJsonError(answer.out, args.join(" ")).code, "usage");
      continue;
    }
    assert.equal(answer.code, 0, args.join(" "));
    const lines = answer.out.split("\n").filter((line) => line !== "");
    assert.equal(lines.length, 1, `${args.join(" ")}: ${answer.out}`);
    assert.match(JSON.parse(lines[0]!).usage, start, args.join(" "));
  }
});

Deno.test("a leading --json is taken as the command's, --version answers in JSON, and other leading options say where they go", async () => {
  await withTempDir(async (dir) => {
    const leading = await trace(["--json", "external-runs", "--data-dir", dir]);
    assert.equal(leading.code, 2);
    assert.match(JSON.parse(leading.out).error.message, /^No Trace data at /);
    const version = await trace(["--version", "--json"]);
    assert.equal(version.code, 0);
    assert.match(JSON.parse(version.out).version, /^\d+\.\d+\.\d+/);
    const misplaced = await trace(["--data-dir", dir, "external-runs"]);
    assert.equal(misplaced.code, 2);
    assert.match(
      misplaced.err,
      /"--data-dir" is an option, and options go after the command/,
    );
  });
});

Deno.test("an error that quotes what was typed sends no control character to the terminal", async () => {
  const io = captureIo();
  const code = await main(
    ["obs", "erase", "--application", "x", "--a\u001b]0;PWN\u0007b"],
    io,
  );
  assert.equal(code, 2);
  // deno-lint-ignore no-control-regex
  const control = /[\u0000-\u001f\u007f-\u009f]/;
  assert.ok(!control.test(io.stderr().trimEnd()), io.stderr());
  assert.match(io.stderr(), /\\u\{001b\}\]0;PWN\\u\{0007\}b/);
  const unknown = captureIo();
  await main(["\u001b[2Jrun"], unknown);
  assert.ok(!unknown.stderr().includes("\u001b"), unknown.stderr());
});

Deno.test("a single-value flag given twice is refused by every command, while collecting flags and switches repeat", async () => {
  await withTempDir(async (dir) => {
    const cases: [string[], string, string][] = [
      [
        ["external-runs", "--target", "a", "--target", "b"],
        "external-runs",
        '--target given twice ("a", "b")',
      ],
      [
        ["external-run", "--target=a", "--target", "a"],
        "external-run",
        '--target given twice ("a", "a")',
      ],
      [
        ["events", "query", "--data-dir", dir, "--data-dir", `${dir}/x`],
        "events query",
        `--data-dir given twice (${JSON.stringify(dir)}, ${
          JSON.stringify(`${dir}/x`)
        })`,
      ],
      [
        ["obs", "health", "--samples", "3", "--samples", "-1"],
        "obs health",
        '--samples given twice ("3", "-1")',
      ],
    ];
    for (const [args, path, problem] of cases) {
      const message = `${problem}: give it once; see trace ${path} --help`;
      const text = await trace(args);
      assert.equal(text.code, 2, args.join(" "));
      assert.equal(text.err, `trace ${path}: ${message}\n`);
      const json = await trace([...args, "--json"]);
      assert.equal(json.code, 2, args.join(" "));
      assert.deepEqual(oneJsonError(json.out, args.join(" ")), {
        code: "usage",
        message,
      });
    }
    const empty = ["--data-dir", `${dir}/empty`];
    const repeated = await trace([
      "events",
      "query",
      "--kind",
      "memory.write",
      "--kind",
      "memory.delete",
      "--json",
      "--json",
      ...empty,
    ]);
    // Past the flags: the empty data directory is the only complaint.
    assert.match(JSON.parse(repeated.out).error.message, /^No Trace data at /);
  });
});

Deno.test("an error that quotes a pasted value shows its first 80 characters and its length", async () => {
  await withDb(async (db, dir) => {
    // Tables to read, so commands get as far as looking the value up.
    await migrate(db, ALL_MIGRATIONS);
    const data = ["--data-dir", dir];
    assert.equal((await trace(["obs", "init", ...data])).code, 0);
    const long = "a".repeat(5000);
    for (
      const args of [
        ["external-show", long, ...data],
        ["external-runs", "--target", long, ...data],
        ["external-runs", "--verdict", long, ...data],
        ["external-register", "--target", "staging", long, ...data],
        ["ledger", "verify", "--expect-head", long, ...data],
        ["events", "query", "--limit", long, ...data],
        ["obs", "expiry-plan", "--older-than", long, ...data],
        ["reference", "run", long, ...data],
        ["obs", "erase", "--verify", long, "--application", "a", "--user", "u"]
          .concat(data),
        ["serve", "--host", long, ...data],
        ["demo", "--trace-to", long],
        ["external-runs", `--${long}`],
        [long],
      ]
    ) {
      const what = args.slice(0, 2).join(" ").slice(0, 40);
      const result = await trace(args);
      assert.equal(result.code, 2, what);
      assert.match(result.err, /a…"? \(500[02] characters\)/, what);
      assert.ok(!result.err.includes("a".repeat(81)), `${what}: ${result.err}`);
    }
    const json = await trace(["external-show", long, "--json", ...data]);
    assert.match(oneJsonError(json.out, "json").message, /\(5000 characters\)/);
    const replay = await trace(["external-replay", long, ...data]);
    assert.match(replay.err, /regression a{80}… \(5000 characters\); list/);
  });
});
