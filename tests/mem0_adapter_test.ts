/**
 * The Mem0 staging adapter (fixtures/adapters/mem0) end to end: the adapter's
 * own Node.js tests, then `trace external-register` and `external-run`
 * against unmodified Mem0, checking the verdicts and findings that
 * fixtures/adapters/mem0/ASSESSMENT.md states. Skipped, with a name that
 * says so, when the adapter's npm dependencies are not installed.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { withTempDir } from "./_helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const ADAPTER = new URL("../fixtures/adapters/mem0/", import.meta.url).pathname;

function hasFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function hasNode(): boolean {
  try {
    return new Deno.Command("node", { args: ["--version"], stdout: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const INSTALLED = hasFile(join(ADAPTER, "node_modules/mem0ai/package.json")) &&
  hasFile(
    join(
      ADAPTER,
      "node_modules/better-sqlite3/build/Release/better_sqlite3.node",
    ),
  ) && hasNode();

function testName(name: string): string {
  return INSTALLED
    ? name
    : `${name} (skipped: dependencies not installed; run npm ci in fixtures/adapters/mem0)`;
}

interface Adapter {
  url: string;
  dataDir: string;
}

async function withAdapter<T>(
  dataDir: string,
  extraArgs: string[],
  fn: (adapter: Adapter) => Promise<T>,
): Promise<T> {
  const child = new Deno.Command("node", {
    args: ["server.js", "--port", "0", "--data-dir", dataDir, ...extraArgs],
    cwd: ADAPTER,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let seen = "";
    let url: string | undefined;
    while (url === undefined) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the Mem0 adapter exited early: ${seen}`);
      seen += value;
      url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen)?.[1];
    }
    reader.releaseLock();
    return await fn({ url, dataDir });
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
}

async function trace(
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    out: new TextDecoder().decode(output.stdout),
    err: new TextDecoder().decode(output.stderr),
  };
}

interface Report {
  verdict: string;
  namespaces: { test: string; control: string };
  baseline: { ok: boolean; inventory: Record<string, unknown> };
  samples: {
    inventory: Record<string, unknown>;
    marker_seen: boolean;
    control_present: boolean;
  }[];
  findings: { severity: string; code: string; subject: string }[];
  cleanup: {
    cleanup_complete: boolean;
    remaining: {
      test: Record<string, unknown>;
      control: Record<string, unknown>;
    };
  };
}

/** Registers the adapter as target `mem0-local` and runs the contract once. */
async function runContract(
  adapter: Adapter,
  traceDir: string,
): Promise<{ code: number; report: Report }> {
  await Deno.mkdir(traceDir, { recursive: true });
  const config = join(traceDir, "staging.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      base_url: adapter.url,
      environment: "staging",
      allow_synthetic_writes: true,
      document_count: 3,
      deletion_window_seconds: 1,
      sample_interval_seconds: 0.25,
    }),
  );
  const data = ["--data-dir", traceDir];
  const register = await trace([
    "external-register",
    "--target",
    "mem0-local",
    "--config",
    config,
    ...data,
  ]);
  assert.equal(register.code, 0, register.err);
  const run = await trace([
    "external-run",
    "--target",
    "mem0-local",
    "--json",
    ...data,
  ]);
  assert.ok(
    run.out.startsWith("{"),
    `external-run printed no report: ${run.err}`,
  );
  return { code: run.code, report: JSON.parse(run.out) };
}

function inventory(source: number, vector: number, cache: number) {
  return {
    complete: true,
    source_records: source,
    vector_records: vector,
    cache_records: cache,
  };
}

/** Rows of Mem0's SQLite file `name`, read-only. */
function query(dataDir: string, name: string, sql: string): unknown[] {
  const db = new DatabaseSync(join(dataDir, name), { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

/** Whether `needle` appears anywhere in the raw bytes of a file. */
async function rawBytesContain(path: string, needle: string): Promise<boolean> {
  const bytes = await Deno.readFile(path);
  return new TextDecoder("latin1").decode(bytes).includes(needle);
}

Deno.test({
  name: testName("the Mem0 adapter's own Node.js tests pass"),
  ignore: !INSTALLED,
  async fn() {
    const files: string[] = [];
    for await (const entry of Deno.readDir(join(ADAPTER, "test"))) {
      if (entry.name.endsWith(".test.js")) files.push(`test/${entry.name}`);
    }
    assert.ok(files.length >= 4, `adapter test files: ${files}`);
    const output = await new Deno.Command("node", {
      args: ["--test", ...files.sort()],
      cwd: ADAPTER,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(output.stdout);
    assert.equal(output.code, 0, out.slice(-4000));
    assert.match(out, /# fail 0/);
  },
});

Deno.test({
  name: testName(
    "trace external-run fails Mem0 (history on): its history table keeps the deleted text",
  ),
  ignore: !INSTALLED,
  async fn() {
    await withTempDir(async (dir) => {
      const mem0Dir = join(dir, "mem0");
      await withAdapter(mem0Dir, [], async (adapter) => {
        const { code, report } = await runContract(adapter, join(dir, "trace"));
        assert.equal(code, 1, JSON.stringify(report.findings));
        assert.equal(report.verdict, "FAIL");
        assert.equal(report.baseline.ok, true);
        assert.deepEqual(report.baseline.inventory, inventory(3, 3, 3));
        const last = report.samples[report.samples.length - 1]!;
        assert.deepEqual(last.inventory, inventory(3, 0, 3));
        assert.equal(last.marker_seen, false);
        assert.equal(last.control_present, true);
        const failing = report.findings.filter((f) => f.severity === "fail")
          .map((f) => `${f.code}:${f.subject}`);
        assert.deepEqual(failing.sort(), [
          "residual_store:cache_records",
          "residual_store:source_records",
        ]);
        assert.equal(report.cleanup.cleanup_complete, false);
        assert.deepEqual(report.cleanup.remaining.test, inventory(3, 0, 3));
        assert.deepEqual(report.cleanup.remaining.control, inventory(1, 0, 1));

        // What the counts stand for, read from Mem0's own files.
        assert.deepEqual(
          query(mem0Dir, "vector_store.db", "SELECT id FROM vectors"),
          [],
        );
        const deleted = query(
          mem0Dir,
          "history.db",
          "SELECT action FROM memory_history WHERE action = 'DELETE' AND previous_value LIKE '%trace_canary_%'",
        );
        assert.equal(deleted.length, 4); // 3 canaries + the control, at cleanup
        // Freed pages still hold the deleted rows' bytes: no inventory sees them.
        assert.ok(
          await rawBytesContain(
            join(mem0Dir, "vector_store.db"),
            report.namespaces.test,
          ),
        );
      });
    });
  },
});

Deno.test({
  name: testName(
    "trace external-run passes Mem0 with history off, while freed pages still hold the bytes",
  ),
  ignore: !INSTALLED,
  async fn() {
    await withTempDir(async (dir) => {
      const mem0Dir = join(dir, "mem0");
      await withAdapter(mem0Dir, ["--history", "off"], async (adapter) => {
        const { code, report } = await runContract(adapter, join(dir, "trace"));
        assert.equal(code, 0, JSON.stringify(report.findings));
        assert.equal(report.verdict, "PASS");
        assert.deepEqual(report.baseline.inventory, inventory(3, 3, 3));
        assert.deepEqual(
          report.samples[report.samples.length - 1]!.inventory,
          inventory(0, 0, 0),
        );
        assert.deepEqual(
          report.findings.map((f) => f.code),
          ["erased"],
        );
        assert.equal(report.cleanup.cleanup_complete, true);
        assert.equal(hasFile(join(mem0Dir, "history.db")), false);
        assert.ok(
          await rawBytesContain(
            join(mem0Dir, "vector_store.db"),
            report.namespaces.test,
          ),
        );
      });
    });
  },
});
