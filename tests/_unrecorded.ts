/** Fixtures of ledger tests: a registered staging target, fake runs and replays, the CLI in memory. */

import { main } from "../cli.ts";
import { digestOf } from "../lib/canonical_json.ts";
import type { StagingConfig } from "../lib/contract/config.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import {
  type Checkpoint,
  fileCheckpointSink,
} from "../lib/runner/checkpoint.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import { replayRegression } from "../lib/runs/replay.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { captureIo, stagingConfig } from "./_helpers.ts";

/** The staging config of target staging-a. */
export const CONFIG = stagingConfig({ document_count: 2 });

/** Target staging-a as runs record it. */
const STAGING_A = {
  id: "staging-a",
  base_url: CONFIG.base_url,
  source: "registered",
} as const;

/** A ledger with target staging-a registered. */
export async function withStagingA(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: "staging-a",
    config: CONFIG,
    source: "registered",
  });
}

/** A run of staging-a against a fake adapter, recorded in `dir`'s ledger. */
export async function fakeRun(
  db: TraceDb,
  dir: string,
  behaviour: FakeBehaviour = {},
): Promise<RunReport> {
  const clock = new VirtualClock();
  const { report } = await runExternal(CONFIG, {
    db,
    dataDir: dir,
    target: STAGING_A,
    transport: new FakeTarget(clock, behaviour),
    clock,
    trace: false,
  });
  return report;
}

/** A replay of `regressionId` against a fake adapter. */
export async function fakeReplay(
  db: TraceDb,
  dir: string,
  regressionId: string,
  behaviour: FakeBehaviour = {},
): Promise<RunReport> {
  const clock = new VirtualClock();
  return (await replayRegression(db, regressionId, {
    dataDir: dir,
    transport: new FakeTarget(clock, behaviour),
    clock,
    trace: false,
  })).report;
}

/** Runs the CLI with `args` in memory. */
export async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** A checkpoint of a run whose process (pid 0, never a live run) is gone; of staging-a unless `run` names another target. */
export async function interruptedCheckpoint(
  dataDir: string,
  runId: string,
  issued: Checkpoint["issued"],
  run: Partial<Pick<Checkpoint, "target" | "namespaces" | "markers">> & {
    config?: StagingConfig;
  } = {},
): Promise<Checkpoint> {
  const checkpoint: Checkpoint = {
    schema: "trace.checkpoint/1",
    run_id: runId,
    state: "running",
    pid: 0,
    process_identity: null,
    started_at: "2099-01-01T00:00:00.000Z",
    updated_at: "2099-01-01T00:00:01.000Z",
    target: run.target ?? STAGING_A,
    regression_id: null,
    config_digest: digestOf(run.config ?? CONFIG),
    namespaces: run.namespaces ??
      { test: "trace-test-x", control: "trace-control-x" },
    // Without markers unless given: as written before checkpoints kept them.
    ...(run.markers ? { markers: run.markers } : {}),
    issued,
    verdict: null,
  };
  await fileCheckpointSink(dataDir, runId).write(checkpoint);
  return checkpoint;
}

/** The run id {@link killedReplay} gives its checkpoint unless told another. */
export const KILLED_REPLAY = "run-20261130T000000Z-00000000dead";

/**
 * The checkpoint a replay of `regressionId` (of staging-a) leaves when its
 * process is killed mid-window on 2026-11-30 (pid 0 is never a live run);
 * returns its run id.
 */
export async function killedReplay(
  dataDir: string,
  regressionId: string,
  overrides: Partial<Checkpoint> = {},
): Promise<string> {
  const runId = overrides.run_id ?? KILLED_REPLAY;
  await fileCheckpointSink(dataDir, runId).write({
    schema: "trace.checkpoint/1",
    run_id: runId,
    state: "running",
    pid: 0,
    process_identity: null,
    started_at: "2026-11-30T00:00:00.000Z",
    updated_at: "2026-11-30T00:00:01.000Z",
    target: STAGING_A,
    regression_id: regressionId,
    config_digest: digestOf(CONFIG),
    namespaces: { test: "trace-test-killed", control: "trace-control-killed" },
    issued: {
      test: ["trace-doc-k1", "trace-doc-k2"],
      control: ["trace-doc-k3"],
    },
    verdict: null,
    ...overrides,
  });
  return runId;
}
