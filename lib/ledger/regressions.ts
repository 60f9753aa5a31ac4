/**
 * Saved regressions and their lifecycle. Only a completed FAIL can be saved;
 * the definition pins target, config digest, protocol revision, timing,
 * document count and the failed assertions. A regression starts `pending`
 * (a known, open bug); its first PASS replay makes it `enforced`; from then on
 * a failing replay is a real regression. Every replay is a new chained entry,
 * so status changes are appended, never updated.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { digestOf } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { NotFoundError, RefusedError } from "../errors.ts";
import type { RunReport, Verdict } from "../runner/report.ts";
import {
  appendEntries,
  listEntries,
  type NewEntry,
  readEntry,
} from "./chain.ts";
import {
  configContract,
  contractDifferences,
  failedAssertions,
  type PinnedAssertion,
  type RunContract,
  runContract,
} from "./contract.ts";
import type { HeadView } from "./head.ts";
import { replayOutcomeWords, type ReplayRecurrence } from "./recurrence.ts";
import { readRun, validateRunId } from "./runs.ts";
import {
  CONFIG_TARGET_PREFIX,
  readTarget,
  type TargetRecord,
  type TargetSource,
} from "./targets.ts";

/** Lifecycle states of a saved regression. */
export const REGRESSION_STATUSES = ["pending", "enforced"] as const;

/** One of {@link REGRESSION_STATUSES}. */
export type RegressionStatus = typeof REGRESSION_STATUSES[number];

/** The immutable definition of a saved regression. */
export interface RegressionDefinition {
  /** Format identifier. */
  schema: "trace.regression/1";
  /** `reg-…`, derived from the source run's id. */
  regression_id: string;
  /** The completed FAIL this regression was saved from. */
  source_run_id: string;
  /** When it was saved, ISO 8601. */
  saved_at: string;
  /** The target it pins, with the digest its stored config must still have. */
  target: {
    id: string;
    base_url: string;
    source: TargetSource;
    config_digest: string;
  };
  /** The contract a replay must run under: protocol, timing, document count, rules revision. */
  contract: RunContract;
  /** The failed assertions of the source run (finding code and subject). */
  assertions: PinnedAssertion[];
}

/** A replay entry: the link from a regression to one completed run. */
export interface ReplayRecord {
  /** Format identifier. */
  schema: "trace.replay/1";
  /** The regression replayed. */
  regression_id: string;
  /** The run the replay made. */
  run_id: string;
  /** That run's verdict. */
  verdict: Verdict;
  /** The regression's status before this replay. */
  status_before: RegressionStatus;
  /** Its status after: the first PASS makes a pending regression `enforced`. */
  status_after: RegressionStatus;
  /** When the replay was recorded, ISO 8601. */
  recorded_at: string;
}

/** A regression with its derived status and last result. */
export interface RegressionView {
  /** `reg-…`. */
  regression_id: string;
  /** The target it pins. */
  target_id: string;
  /** `pending` (a known open bug) until a replay passes, `enforced` after. */
  status: RegressionStatus;
  /** The completed FAIL it was saved from. */
  source_run_id: string;
  /** When it was saved, ISO 8601. */
  saved_at: string;
  /** How many replays were recorded. */
  replays: number;
  /** The latest replay's verdict, `null` before the first. */
  last_result: Verdict | null;
  /** The latest replay's run. */
  last_run_id: string | null;
  /** When the latest replay was recorded. */
  last_replayed_at: string | null;
  /** The immutable definition. */
  definition: RegressionDefinition;
}

/** The regression id a run is saved under: stable, so the replay command can be printed at run time. */
export function regressionIdFor(runId: string): string {
  return `reg-${runId.replace(/^run-/, "")}`;
}

/** The answer of `external-save`. */
export interface SavedRegression {
  /** The regression the run was saved as. */
  regression: RegressionView;
  /** False when the run was already saved. */
  created: boolean;
}

/**
 * Saves a completed FAIL as a regression; saving the same run again is a
 * no-op. A run that is not in the ledger is a {@link NotFoundError}.
 */
export async function saveRegression(
  db: TraceDb,
  runId: string,
): Promise<SavedRegression> {
  const report = await readRun(db, validateRunId(runId));
  if (!report) {
    throw new NotFoundError(
      `Cannot find run ${runId} in the ledger; list runs with trace external-runs (run ids are also printed by trace external-run); check --data-dir`,
    );
  }
  refuseUnsaveable(report);
  const target = await readTarget(db, report.target.id);
  const targetProblems = targetDrift(
    report.target.id,
    report.config_digest,
    target,
  );
  if (targetProblems.length > 0 || !target) {
    throw new RefusedError(
      `Cannot save run ${runId} as a regression: ${targetProblems.join("; ")}`,
    );
  }
  const definition = buildDefinition(report, target);
  let created = false;
  await appendEntries(db, async (tx) => {
    const existing = await readEntry(
      tx,
      "regression",
      definition.regression_id,
    );
    if (existing) return [];
    created = true;
    return [{
      kind: "regression",
      entityId: definition.regression_id,
      targetId: definition.target.id,
      payload: definition,
    }];
  });
  const regression = await readRegression(db, definition.regression_id);
  return { regression: regression!, created };
}

function refuseUnsaveable(report: RunReport): void {
  const refuse = (why: string) =>
    new RefusedError(
      `Cannot save run ${report.run_id} as a regression: ${why}; only a completed FAIL can be saved`,
    );
  if (report.kind !== "external") {
    throw new RefusedError(
      `Cannot save run ${report.run_id} as a regression: it is a reference run, and only external runs become regressions; reference systems are rechecked by trace reference run`,
    );
  }
  if (report.state !== "completed") throw refuse(`it is ${report.state}`);
  if (report.verdict !== "FAIL") {
    throw refuse(`its verdict is ${report.verdict}`);
  }
}

/** Problems that make a target unusable for a definition pinned to `digest`. */
function targetDrift(
  targetId: string,
  digest: string,
  target: TargetRecord | null,
): string[] {
  if (!target && targetId.startsWith(CONFIG_TARGET_PREFIX)) {
    return [
      `it ran from a config never registered (as trace quickstart runs its demo), and only a registered target can replay it; register that config with trace external-register --target NAME --config FILE, run trace external-run --target NAME, and save that run`,
    ];
  }
  if (!target) {
    return [
      `target "${targetId}" is not registered; register it with trace external-register`,
    ];
  }
  if (target.config_digest !== digest) {
    return [
      `the registered config of target "${targetId}" is not the one the run used (config digest differs)`,
    ];
  }
  return [];
}

function buildDefinition(
  report: RunReport,
  target: TargetRecord,
): RegressionDefinition {
  return {
    schema: "trace.regression/1",
    regression_id: regressionIdFor(report.run_id),
    source_run_id: report.run_id,
    saved_at: new Date().toISOString(),
    target: {
      id: target.target_id,
      base_url: target.base_url,
      source: target.source,
      config_digest: report.config_digest,
    },
    contract: runContract(report),
    assertions: failedAssertions(report),
  };
}

/** Reads a regression definition, or `null`. */
export async function readDefinition(
  db: TraceDb | Transaction,
  regressionId: string,
): Promise<RegressionDefinition | null> {
  const entry = await readEntry(db, "regression", regressionId);
  return entry ? JSON.parse(entry.payload) as RegressionDefinition : null;
}

/** The regression `runId` was saved as (its id derives from the run's), or `null`. */
export async function savedRegressionOf(
  db: TraceDb,
  runId: string,
): Promise<string | null> {
  const definition = await readDefinition(db, regressionIdFor(runId));
  return definition?.source_run_id === runId ? definition.regression_id : null;
}

/** Reads a regression with its status, or `null`. */
export async function readRegression(
  db: TraceDb,
  regressionId: string,
): Promise<RegressionView | null> {
  const definition = await readDefinition(db, regressionId);
  if (!definition) return null;
  const replays = await replaysOf(db, definition.target.id, regressionId);
  return viewOf(definition, replays);
}

/** Every regression (optionally of one target) with status and last result. */
export async function listRegressions(
  db: TraceDb,
  targetId?: string,
): Promise<RegressionView[]> {
  const definitions = (await listEntries(db, "regression", targetId)).map((e) =>
    JSON.parse(e.payload) as RegressionDefinition
  );
  const replays = (await listEntries(db, "replay", targetId)).map((e) =>
    JSON.parse(e.payload) as ReplayRecord
  );
  return definitions.map((definition) =>
    viewOf(
      definition,
      replays.filter((r) => r.regression_id === definition.regression_id),
    )
  );
}

/** Every replay link (optionally of one target), in ledger order. */
export async function listReplays(
  db: TraceDb,
  targetId?: string,
): Promise<ReplayRecord[]> {
  return (await listEntries(db, "replay", targetId)).map((e) =>
    JSON.parse(e.payload) as ReplayRecord
  );
}

async function replaysOf(
  db: TraceDb | Transaction,
  targetId: string,
  regressionId: string,
): Promise<ReplayRecord[]> {
  return (await listEntries(db, "replay", targetId))
    .map((e) => JSON.parse(e.payload) as ReplayRecord)
    .filter((r) => r.regression_id === regressionId);
}

function viewOf(
  definition: RegressionDefinition,
  replays: ReplayRecord[],
): RegressionView {
  const last = replays.at(-1) ?? null;
  return {
    regression_id: definition.regression_id,
    target_id: definition.target.id,
    status: statusAfter(replays),
    source_run_id: definition.source_run_id,
    saved_at: definition.saved_at,
    replays: replays.length,
    last_result: last?.verdict ?? null,
    last_run_id: last?.run_id ?? null,
    last_replayed_at: last?.recorded_at ?? null,
    definition,
  };
}

function statusAfter(replays: ReplayRecord[]): RegressionStatus {
  return replays.some((r) => r.verdict === "PASS") ? "enforced" : "pending";
}

/** Why `definition` cannot be replayed against `target` by this build (empty when it can). */
export function replayDrift(
  definition: RegressionDefinition,
  target: TargetRecord | null,
): string[] {
  const problems = targetDrift(
    definition.target.id,
    definition.target.config_digest,
    target,
  );
  if (!target) return problems;
  if (
    problems.length === 0 &&
    digestOf(target.config) !== definition.target.config_digest
  ) {
    problems.push(
      `the stored config of target "${target.target_id}" no longer matches its digest`,
    );
  }
  const current = configContract(target.config);
  const fields = contractDifferences(definition.contract, current);
  if (fields.length > 0) {
    problems.push(`the contract drifted (${fields.join(", ")})`);
  }
  // Named on its own: after an upgrade it is the one a user cannot undo.
  if (definition.contract.assertion_rules !== current.assertion_rules) {
    problems.push(
      `it was saved under the rules ${definition.contract.assertion_rules}, and this build judges runs by ${current.assertion_rules} (docs/report.md says what changed)`,
    );
  }
  return problems;
}

/** The link a replay run appends with its report, and what it appended. */
export interface ReplayLink {
  /** Pass as the run's linked entries: computed inside the report's transaction. */
  entries: (report: RunReport, tx: Transaction) => Promise<NewEntry[]>;
  /** The replay record the last transaction built (committed only if the report was recorded). */
  record(): ReplayRecord | null;
}

/** The replay entry appended with a replay run's report, in the same transaction. */
export function replayLink(regressionId: string): ReplayLink {
  let built: ReplayRecord | null = null;
  return {
    entries: async (report, tx) => {
      const before = statusAfter(
        await replaysOf(tx, report.target.id, regressionId),
      );
      built = {
        schema: "trace.replay/1",
        regression_id: regressionId,
        run_id: report.run_id,
        verdict: report.verdict,
        status_before: before,
        status_after: before === "enforced" || report.verdict === "PASS"
          ? "enforced"
          : "pending",
        recorded_at: new Date().toISOString(),
      };
      return [{
        kind: "replay",
        entityId: report.run_id,
        targetId: report.target.id,
        payload: built,
      }];
    },
    record: () => built,
  };
}

/** A regression as it stands after `record` was appended to it. */
export function regressionAfter(
  regression: RegressionView,
  record: ReplayRecord,
): RegressionView {
  return {
    ...regression,
    status: record.status_after,
    replays: regression.replays + 1,
    last_result: record.verdict,
    last_run_id: record.run_id,
    last_replayed_at: record.recorded_at,
  };
}

/** The replay record of a run, or `null` when the run was not a replay. */
export async function replayOfRun(
  db: TraceDb,
  runId: string,
): Promise<ReplayRecord | null> {
  const entry = await readEntry(db, "replay", runId);
  return entry ? JSON.parse(entry.payload) as ReplayRecord : null;
}

/** An enforced regression whose latest replay did not pass, as the gate names it. */
export interface GateFailure {
  /** `reg-…`. */
  regression_id: string;
  /** The target it pins. */
  target_id: string;
  /** The latest replay's verdict; INCONCLUSIVE for one that did not finish. */
  last_result: Verdict | null;
  /** The latest replay's run. */
  last_run_id: string | null;
  /**
   * `completed` for a replay the ledger holds; `running` or `interrupted`
   * for a later one that only its checkpoint knows (it never finished).
   */
  last_state: "completed" | "running" | "interrupted";
  /**
   * Whether the failure the regression was saved for came back in that
   * replay, it failed on something else, or it cannot say (INCONCLUSIVE,
   * and every replay that did not finish); `null` when the gate was not
   * given the replay's report.
   */
  recurrence: ReplayRecurrence | null;
  /** Why it did not pass, and for a replay that did not finish what to do, in one line. */
  reason: string;
}

/** The answer of `external-gate`. */
export interface GateResult {
  /** Format identifier. */
  schema: "trace.gate/1";
  /** True when every enforced regression's latest replay passed. */
  ok: boolean;
  /** The target the gate judged, `null` for all. */
  target_id: string | null;
  /** Enforced regressions judged. */
  enforced: number;
  /** Pending regressions (open bugs, not judged). */
  pending: number;
  /** Enforced regressions whose latest replay did not pass. */
  failing: GateFailure[];
  /** Pending regressions: known open bugs that do not block the gate. */
  pending_regressions: string[];
  /** The verified ledger head the gate judged; keep it to check later that the ledger still extends it. */
  ledger_head: HeadView | null;
}

/** Options for {@link gateRegressions}. */
export interface GateJudgementOptions {
  /**
   * What each latest replay that did not pass showed of the saved failure,
   * by regression id, as the caller judged it (`replayRecurrence` of the
   * regression's definition and the replay's report): a failing one's reason
   * then says whether the saved failure came back or it failed on something
   * else.
   */
  latestRecurrences?: Readonly<Record<string, ReplayRecurrence>>;
}

/**
 * Passes only when every enforced regression's latest replay passed. With no
 * enforced regression it passes too (nothing is known to be fixed yet, and
 * pending ones are open bugs); `enforced: 0` says so.
 */
export function gateRegressions(
  regressions: RegressionView[],
  targetId: string | null,
  head: HeadView | null = null,
  options: GateJudgementOptions = {},
): GateResult {
  const enforced = regressions.filter((r) => r.status === "enforced");
  const failing = enforced.filter((r) => r.last_result !== "PASS").map((r) =>
    gateFailure(r, options.latestRecurrences?.[r.regression_id] ?? null)
  );
  const pending = regressions.filter((r) => r.status === "pending");
  return {
    schema: "trace.gate/1",
    ok: failing.length === 0,
    target_id: targetId,
    enforced: enforced.length,
    pending: pending.length,
    failing,
    pending_regressions: pending.map((r) => r.regression_id),
    ledger_head: head,
  };
}

function gateFailure(
  regression: RegressionView,
  recurrence: ReplayRecurrence | null,
): GateFailure {
  const runId = regression.last_run_id;
  return {
    regression_id: regression.regression_id,
    target_id: regression.target_id,
    last_result: regression.last_result,
    last_run_id: runId,
    last_state: "completed",
    recurrence,
    reason: `latest replay ${runId ?? "-"} was ${
      regression.last_result ?? "missing"
    }${
      recurrence
        ? `: ${
          replayOutcomeWords(
            recurrence,
            regression.definition,
            "; read its findings and replay again",
          )
        }`
        : ""
    }`,
  };
}
