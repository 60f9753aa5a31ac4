/**
 * Trace as a library: every entry of deno.json's `exports` is documented and
 * publishable, and another Deno project that lists this repository as a
 * workspace member imports each entry by name (`@trace/trace`,
 * `@trace/trace/obs`, …) and runs it. Everything reads the npm packages
 * already in Deno's cache: no network.
 *
 * `deno task check:surface` runs the same documentation and publish checks
 * with no exception at all.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "./_helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** Paths allowed to fail the surface checks: none. */
const UNDOCUMENTED_YET: string[] = [];

interface Problem {
  rule: string;
  at: string;
}

async function deno(
  args: string[],
  cwd: string = ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return {
    code: output.code,
    stdout: text.decode(output.stdout),
    stderr: text.decode(output.stderr),
  };
}

/** The `error[rule]` blocks of a `deno doc --lint` or `deno publish` answer, with where each points. */
function problemsIn(text: string): Problem[] {
  const found = text.matchAll(/^error\[([a-z-]+)\][^\n]*\n\s*--> (\S+)/gm);
  return [...found].map(([, rule, at]) => ({
    rule: rule!,
    at: at!.replace(`file://${ROOT}/`, "").replace(`${ROOT}/`, ""),
  }));
}

function outsideKnownGaps(problems: Problem[]): Problem[] {
  return problems.filter((p) =>
    !UNDOCUMENTED_YET.some((prefix) => p.at.startsWith(prefix))
  );
}

async function exportedEntries(): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  return config.exports;
}

Deno.test("deno.json exports the library and one entry per area, each with a module doc", async () => {
  const entries = await exportedEntries();
  assert.deepEqual(Object.keys(entries), [
    ".",
    "./contract",
    "./runs",
    "./ledger",
    "./obs",
    "./server",
  ]);
  for (const [name, path] of Object.entries(entries)) {
    const text = await Deno.readTextFile(join(ROOT, path));
    assert.match(
      text,
      /^ \* @module$/m,
      `${name} (${path}) has no @module doc`,
    );
  }
});

Deno.test("deno doc --lint passes on every exported entry by itself", async (t) => {
  for (const [name, path] of Object.entries(await exportedEntries())) {
    await t.step(name, async () => {
      const result = await deno(["doc", "--lint", path]);
      const problems = problemsIn(result.stdout + result.stderr);
      assert.deepEqual(outsideKnownGaps(problems), []);
      if (problems.length === 0) assert.equal(result.code, 0, result.stderr);
    });
  }
});

Deno.test("the examples in every entry's docs type-check", async () => {
  const entries = Object.values(await exportedEntries());
  const result = await deno(["check", "--doc", ...entries]);
  assert.equal(result.code, 0, result.stderr);
});

Deno.test("deno publish --dry-run finds nothing to fix, slow types and license included", async () => {
  const result = await deno(["publish", "--dry-run", "--allow-dirty"]);
  const problems = problemsIn(result.stdout + result.stderr);
  assert.deepEqual(outsideKnownGaps(problems), []);
  if (problems.length === 0) {
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout + result.stderr, /Success Dry run complete/);
  }
});

const CONSUMER = `
import { createRecorder, initializeObs, queryTraceEvents } from "@trace/trace/obs";
import { ALL_MIGRATIONS, migrate, openDb, verifyLedger } from "@trace/trace/ledger";
import { configTargetId, resolveDataDir } from "@trace/trace/runs";
import { createApp } from "@trace/trace/server";
import {
  handlerTransport,
  parseStagingConfig,
  planRun,
  runDeletionContract,
} from "@trace/trace/contract";
import { CORRECT_BEHAVIOUR, handleStagingRequest, MemoryPipeline } from "@trace/trace";

const dataDir = resolveDataDir({ flag: Deno.args[0] });
const config = parseStagingConfig({
  base_url: "http://127.0.0.1:8787",
  environment: "staging",
  allow_synthetic_writes: true,
  deletion_window_seconds: 0.1,
  sample_interval_seconds: 0.05,
});
const target = { id: configTargetId(config), base_url: config.base_url, source: "config" as const };

const pipeline = new MemoryPipeline(CORRECT_BEHAVIOUR);
const report = await runDeletionContract(config, {
  transport: handlerTransport((op, body) => handleStagingRequest(pipeline, op, body)),
  target,
  checkpoint: { location: "memory", write: () => Promise.resolve() },
});
pipeline.close();

const db = await openDb({ dataDir });
await migrate(db, ALL_MIGRATIONS);
await initializeObs(db);
const recorder = createRecorder(db, { application_id: "app-1", agent_id: "bot" });
await recorder.record({ kind: "memory_search", thread_id: "t-1" });
const page = await queryTraceEvents(db, { application_id: "app-1" });
const ledger = await verifyLedger(db);
const health = await createApp({ db }).request("http://127.0.0.1:8788/healthz");
console.log(JSON.stringify({
  samples: planRun(config, target).timing.samples,
  verdict: report.verdict,
  events: page.events.map((e) => e.kind),
  ledger_ok: ledger.ok,
  health: [health.status, await health.json()],
}));
db.close();
`;

/** The first TypeScript block of the README's "Use Trace as a library" section. */
async function readmeExample(): Promise<string> {
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const section = readme.slice(readme.indexOf("## Use Trace as a library"));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, "no TypeScript example in the library section");
  return block[1]!;
}

/** A project in `dir` listing this repository (linked at `vendor/trace`) as its one workspace member. */
async function withConsumer(
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const vendored = join(dir, "vendor", "trace");
    await Deno.mkdir(join(dir, "vendor"));
    // A symlink stands in for a git submodule, subtree or copy.
    await Deno.symlink(ROOT, vendored);
    try {
      await Deno.writeTextFile(
        join(dir, "deno.json"),
        JSON.stringify({ workspace: ["./vendor/trace"] }),
      );
      await fn(dir);
    } finally {
      // The link goes first, so nothing below it can be removed with the directory.
      await Deno.remove(vendored);
    }
  });
}

/** `deno check`, then `deno run` with cached packages only; the run's stdout. */
async function checkAndRun(
  dir: string,
  file: string,
  args: string[] = [],
): Promise<string> {
  const check = await deno(["check", file], dir);
  assert.equal(check.code, 0, check.stderr);
  const run = await deno(["run", "-A", "--cached-only", file, ...args], dir);
  assert.equal(run.code, 0, run.stderr);
  // A member's deno.json may not hold root-only settings: no warning.
  assert.doesNotMatch(check.stderr + run.stderr, /Warning/);
  return run.stdout;
}

Deno.test("a Deno project with this repository as a workspace member imports and runs every entry", async () => {
  await withConsumer(async (dir) => {
    await Deno.writeTextFile(join(dir, "main.ts"), CONSUMER);
    const output = await checkAndRun(dir, "main.ts", [join(dir, "data")]);
    assert.deepEqual(JSON.parse(output), {
      samples: 3,
      verdict: "PASS",
      events: ["memory_search"],
      ledger_ok: true,
      health: [200, { status: "ok" }],
    });
  });
});

Deno.test("the README's library example runs as written in such a project", async () => {
  await withConsumer(async (dir) => {
    await Deno.writeTextFile(join(dir, "main.ts"), await readmeExample());
    const output = await checkAndRun(dir, "main.ts");
    assert.deepEqual(output.trim().split("\n"), ["PASS", "1", "200"]);
  });
});
