/**
 * The reference history as entry points read it: one stored run with its
 * expected and observed outcome, the newest runs, the matrix of the latest
 * run of each system and the ranking built from it. Reads only: a database
 * nothing was recorded in has no history, never an error.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import {
  type DashboardRow,
  dashboardRow,
  FAMILIES,
  type RankedSystem,
  RANKING_RULE,
  rankSystems,
} from "../reference/dashboard.ts";
import { evaluateRun, type Evaluation } from "../reference/evaluate.ts";
import {
  latestReferenceRuns,
  listReferenceRuns,
  readReferenceRun,
} from "../reference/history.ts";
import {
  findSystem,
  REFERENCE_SYSTEMS,
  type ReferenceSystemSpec,
} from "../reference/systems.ts";
import type { RunReport, Verdict } from "../runner/report.ts";

/** One stored reference run, judged against its system's expectation. */
export interface ReferenceRunView {
  run_id: string;
  /** The system the run exercised; `null` for a target no known system names. */
  system: string | null;
  created_at: string;
  /** `null` when the system is not known to this build. */
  evaluation: Evaluation | null;
  report: RunReport;
}

/** A line of the reference history. */
export interface ReferenceHistoryEntry {
  run_id: string;
  system: string | null;
  created_at: string;
  verdict: Verdict;
  expected: string | null;
  observed: string | null;
  matches: boolean | null;
}

/** The matrix of the latest run of each system. */
export interface ReferenceDashboard {
  families: readonly string[];
  rows: DashboardRow[];
  /** Systems without any stored run. */
  missing: string[];
  /** Rows whose run landed off the system's expectation. */
  mismatches: number;
}

/** Systems ranked by the strength of their deletion guarantee. */
export interface ReferenceRanking {
  rule: string;
  ranking: RankedSystem[];
  missing: string[];
}

/** Options of the reference views. */
export interface ReferenceViewOptions {
  /** The systems to judge runs against (default: the built-in ones). */
  systems?: readonly ReferenceSystemSpec[];
}

/** One stored reference run with its evaluation, or `null` when the history has no such run. */
export async function referenceRunView(
  db: TraceDb,
  runId: string,
  options: ReferenceViewOptions = {},
): Promise<ReferenceRunView | null> {
  const entry = await readReferenceRun(db, runId);
  if (!entry) return null;
  const spec = entry.system
    ? findSystem(entry.system, options.systems ?? REFERENCE_SYSTEMS)
    : undefined;
  return {
    run_id: entry.run_id,
    system: entry.system,
    created_at: entry.created_at,
    evaluation: spec ? evaluateRun(spec, entry.report) : null,
    report: entry.report,
  };
}

/** The newest stored reference runs (optionally of one system), newest first. */
export async function referenceHistory(
  db: TraceDb,
  options: ReferenceViewOptions & { system?: string; limit?: number } = {},
): Promise<ReferenceHistoryEntry[]> {
  const systems = options.systems ?? REFERENCE_SYSTEMS;
  const entries = await listReferenceRuns(db, {
    ...(options.system === undefined ? {} : { system: options.system }),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
  });
  return entries.map((entry) => {
    const spec = entry.system ? findSystem(entry.system, systems) : undefined;
    const evaluation = spec ? evaluateRun(spec, entry.report) : null;
    return {
      run_id: entry.run_id,
      system: entry.system,
      created_at: entry.created_at,
      verdict: entry.report.verdict,
      expected: evaluation?.expected ?? null,
      observed: evaluation?.observed ?? null,
      matches: evaluation?.matches ?? null,
    };
  });
}

/** The matrix of the latest stored run of each system. */
export async function referenceDashboard(
  db: TraceDb,
  options: ReferenceViewOptions = {},
): Promise<ReferenceDashboard> {
  const latest = await latestReferenceRuns(db);
  const rows: DashboardRow[] = [];
  const missing: string[] = [];
  for (const spec of options.systems ?? REFERENCE_SYSTEMS) {
    const entry = latest.get(spec.name);
    if (!entry) missing.push(spec.name);
    else {
      rows.push(
        dashboardRow(spec, entry.report, evaluateRun(spec, entry.report)),
      );
    }
  }
  return {
    families: FAMILIES,
    rows,
    missing,
    mismatches: rows.filter((row) => !row.matches).length,
  };
}

/** The ranking of the systems, from the latest stored run of each. */
export async function referenceRanking(
  db: TraceDb,
  options: ReferenceViewOptions = {},
): Promise<ReferenceRanking> {
  const { rows, missing } = await referenceDashboard(db, options);
  return { rule: RANKING_RULE, ranking: rankSystems(rows), missing };
}
