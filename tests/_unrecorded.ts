/** Fixtures of ledger tests: a registered staging target, fake runs and replays, the CLI in memory. */

import { main } from "../cli.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
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
    target: {
      id: "staging-a",
      base_url: CONFIG.base_url,
      source: "registered",
    },
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
