/**
 * Runs for the run pages' tests: real runs against the demo app (short
 * windows), reference runs, synthesized ledger rows for lists and paging,
 * and an interrupted checkpoint.
 */

import { startDemoServer } from "../../cli/demo.ts";
import { parseStagingConfig } from "../../lib/contract/config.ts";
import type { TraceDb } from "../../lib/db.ts";
import type { DemoDefect } from "../../lib/demo/defects.ts";
import { recordRun } from "../../lib/ledger/runs.ts";
import { findSystem } from "../../lib/reference/systems.ts";
import { type Checkpoint, checkpointDir } from "../../lib/runner/checkpoint.ts";
import type { RunReport, Verdict } from "../../lib/runner/report.ts";
import {
  registerNamedTarget,
  replayRegression,
  runExternalTarget,
  RunJobs,
  runReference,
  saveRun,
} from "../../lib/runs/mod.ts";
import { join } from "node:path";
import type { AppOptions } from "../../routes/app.ts";
import {
  ADMIN_TOKEN,
  IN_MEMORY_ORIGIN,
  type UiFixture,
  type UiFixtureOptions,
  type UiServer,
  withUiApp,
  withUiServer,
} from "./_server.ts";
import { findingsFor } from "../../bench/_synthetic_findings.ts";

/** An app with the run pages over a fresh data directory, and its job manager. */
export interface RunsFixture extends UiServer {
  jobs: RunJobs;
}

/**
 * Runs `fn` with the trace UI over a migrated database that `seed` filled,
 * with the run pages wired to the data directory and a job manager (as
 * `trace serve` wires them); listening on an ephemeral loopback port when
 * `listen` is set, else in memory at {@link IN_MEMORY_ORIGIN}. Running jobs
 * are cancelled and awaited afterwards.
 */
export async function withRunsFixture<T>(
  options: {
    seed?: (db: TraceDb, dataDir: string) => Promise<unknown>;
    listen?: boolean;
    /** More `createApp` options (accounts, read-only mode). */
    app?: Partial<AppOptions>;
  },
  fn: (fixture: RunsFixture) => Promise<T>,
): Promise<T> {
  let jobs: RunJobs | undefined;
  const ui: UiFixtureOptions = {
    adminToken: ADMIN_TOKEN,
    ...(options.seed ? { seed: options.seed } : {}),
    app: (db, dataDir) => {
      jobs = new RunJobs({ db, dataDir });
      return { runs: { dataDir, jobs }, ...options.app };
    },
  };
  const withJobs = async (server: UiServer) => {
    try {
      return await fn({ ...server, jobs: jobs! });
    } finally {
      await jobs!.close();
    }
  };
  if (options.listen) return await withUiServer(ui, withJobs);
  return await withUiApp(ui, (fixture: UiFixture) =>
    withJobs({
      ...fixture,
      origin: IN_MEMORY_ORIGIN,
      loginUrl: fixture.login.url(IN_MEMORY_ORIGIN),
    }));
}

/** A staging config for the demo app at `url`: 2 documents, a short window. */
export function demoConfig(url: string, windowSeconds = 1) {
  return parseStagingConfig({
    base_url: url,
    environment: "staging",
    allow_synthetic_writes: true,
    document_count: 2,
    deletion_window_seconds: windowSeconds,
    sample_interval_seconds: 0.25,
    timeout_seconds: { ingest: 5, query: 5, inventory: 5, delete: 5 },
  });
}

/** A demo app with `defect`, registered as target `targetId`, for `fn`. */
export async function withDemoTarget<T>(
  db: TraceDb,
  targetId: string,
  defect: DemoDefect | null,
  fn: (demo: { url: string; port: number }) => Promise<T>,
  options: { port?: number; windowSeconds?: number; register?: boolean } = {},
): Promise<T> {
  const demo = await startDemoServer({
    defect,
    delayMs: 200,
    ...(options.port ? { port: options.port } : {}),
  });
  try {
    if (options.register !== false) {
      await registerNamedTarget(
        db,
        targetId,
        demoConfig(demo.url, options.windowSeconds),
      );
    }
    return await fn(demo);
  } finally {
    await demo.shutdown();
  }
}

/** One completed run of a registered target (traced into the index). */
export async function runTarget(
  db: TraceDb,
  dataDir: string,
  targetId: string,
): Promise<RunReport> {
  const outcome = await runExternalTarget(db, { targetId }, { dataDir });
  return outcome.report;
}

/**
 * A FAIL against the stale-cache demo, saved as a regression, then a
 * replay against the healthy demo on the same port (a PASS): the pair a
 * compare page shows.
 */
export async function failThenFixed(
  db: TraceDb,
  dataDir: string,
  targetId = "demo-staging",
): Promise<{ fail: RunReport; pass: RunReport; regressionId: string }> {
  let port = 0;
  const fail = await withDemoTarget(
    db,
    targetId,
    "stale-cache",
    async (demo) => {
      port = demo.port;
      return await runTarget(db, dataDir, targetId);
    },
  );
  const saved = await saveRun(db, fail.run_id, { dataDir });
  const regressionId = saved.regression.regression_id;
  const pass = await withDemoTarget(db, targetId, null, async () => {
    const outcome = await replayRegression(db, regressionId, { dataDir });
    return outcome.report;
  }, { port, register: false });
  return { fail, pass, regressionId };
}

/** Records runs of the given reference systems (in process, virtual time). */
export async function referenceRuns(
  db: TraceDb,
  names?: string[],
): Promise<RunReport[]> {
  const systems = names?.map((name) => findSystem(name)!);
  const runs = await runReference(db, systems ? { systems } : {});
  return runs.map((run) => run.report);
}

/**
 * `count` ledger rows copied from `template`, one a minute apart (newest
 * last), cycling through `verdicts` and `targets`.
 */
export async function syntheticRuns(
  db: TraceDb,
  template: RunReport,
  count: number,
  options: { verdicts?: Verdict[]; targets?: string[]; from?: number } = {},
): Promise<RunReport[]> {
  const verdicts = options.verdicts ?? ["PASS", "FAIL", "INCONCLUSIVE"];
  const targets = options.targets ?? [template.target.id];
  const from = options.from ?? Date.parse("2026-11-01T00:00:00Z");
  const reports: RunReport[] = [];
  for (let i = 0; i < count; i++) {
    const at = new Date(from + i * 60_000);
    const stamp = at.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
    const verdict = verdicts[i % verdicts.length]!;
    const report: RunReport = {
      ...structuredClone(template),
      run_id: `run-${stamp}-${i.toString(16).padStart(12, "0")}`,
      verdict,
      findings: findingsFor(template.findings, verdict),
      started_at: at.toISOString(),
      finished_at: new Date(at.getTime() + 5000).toISOString(),
      target: { ...template.target, id: targets[i % targets.length]! },
    };
    await recordRun(db, report);
    reports.push(report);
  }
  return reports;
}

/**
 * A checkpoint of a run whose process is gone (pid 2^22 + 1 is above
 * Linux's pid limit): an interrupted run with ids issued and never cleaned.
 */
export async function interruptedCheckpoint(
  dataDir: string,
  targetId: string,
): Promise<Checkpoint> {
  const runId = "run-20261129T100000Z-00000000dead";
  const checkpoint: Checkpoint = {
    schema: "trace.checkpoint/1",
    run_id: runId,
    state: "running",
    pid: 4_194_305,
    process_identity: null,
    started_at: "2026-11-29T10:00:00.000Z",
    updated_at: "2026-11-29T10:00:01.000Z",
    target: {
      id: targetId,
      base_url: "http://127.0.0.1:1",
      source: "registered",
    },
    regression_id: null,
    config_digest: "sha256:" + "0".repeat(64),
    namespaces: {
      test: "trace-test-interrupted",
      control: "trace-control-interrupted",
    },
    issued: {
      test: ["trace-doc-a", "trace-doc-b"],
      control: ["trace-doc-c"],
    },
    verdict: null,
  };
  await Deno.mkdir(checkpointDir(dataDir), { recursive: true });
  await Deno.writeTextFile(
    join(checkpointDir(dataDir), `${runId}.json`),
    JSON.stringify(checkpoint, null, 2),
  );
  return checkpoint;
}
