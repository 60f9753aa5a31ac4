/**
 * Three enforced regressions of target `staging-a`, each saved from a FAIL
 * of the fake target's stale cache (marker_retrievable:retrieval and
 * residual_store:cache_records) and fixed once (a PASS replay), whose
 * latest replay did not pass: the stale cache again (the saved failure
 * recurred), vectors left behind (another failure), and incomplete
 * inventories (INCONCLUSIVE). Virtual time: no waiting, no network.
 */

import type { TraceDb } from "../lib/db.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import { replayRegression } from "../lib/runs/replay.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

/** The target the regressions pin. */
export const RECURRENCE_TARGET = "staging-a";

/** The assertions each regression saved, as messages name them. */
export const SAVED_FAILURE =
  "marker_retrievable:retrieval and residual_store:cache_records";

/** One regression and its latest replay. */
export interface ReplayedRegression {
  regression_id: string;
  /** The latest replay's run. */
  run_id: string;
  /** The FAIL it was saved from. */
  source_run_id: string;
}

/** A regression of each recurrence kind. */
export interface ReplayRecurrences {
  recurred: ReplayedRegression;
  other_failure: ReplayedRegression;
  inconclusive: ReplayedRegression;
}

const CONFIG = stagingConfig({ document_count: 2 });

/** Registers the target and records the three regressions in `db` (migrated). */
export async function seedReplayRecurrences(
  db: TraceDb,
  dataDir: string,
): Promise<ReplayRecurrences> {
  await registerTarget(db, {
    targetId: RECURRENCE_TARGET,
    config: CONFIG,
    source: "registered",
  });
  return {
    recurred: await replayedAs(db, dataDir, { staleCache: true }),
    other_failure: await replayedAs(db, dataDir, { vectorDelayMs: 100_000 }),
    inconclusive: await replayedAs(db, dataDir, { incomplete: true }),
  };
}

/** A saved stale-cache FAIL, a PASS replay, then a replay against `latest`. */
async function replayedAs(
  db: TraceDb,
  dataDir: string,
  latest: FakeBehaviour,
): Promise<ReplayedRegression> {
  const clock = new VirtualClock();
  const { report: source } = await runExternal(CONFIG, {
    db,
    dataDir,
    target: {
      id: RECURRENCE_TARGET,
      base_url: CONFIG.base_url,
      source: "registered",
    },
    transport: new FakeTarget(clock, { staleCache: true }),
    clock,
  });
  const { regression } = await saveRegression(db, source.run_id);
  const replay = async (behaviour: FakeBehaviour) => {
    const clock = new VirtualClock();
    return await replayRegression(db, regression.regression_id, {
      dataDir,
      transport: new FakeTarget(clock, behaviour),
      clock,
    });
  };
  await replay({});
  const { report } = await replay(latest);
  return {
    regression_id: regression.regression_id,
    run_id: report.run_id,
    source_run_id: source.run_id,
  };
}
