/**
 * Targets as `external-targets` lists them: what each is (base URL, source),
 * how much it was used (run count, first and last run) and whether it is
 * retired. Run rows are read without their payloads, each checked against
 * the verified chain.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import type { RunReport } from "../runner/report.ts";
import { CHAINED_COLUMNS, verifiedEntries } from "./_intact.ts";
import { latestEntryPerTarget } from "./chain.ts";
import { listRetirements, type Retirement } from "./retirements.ts";
import { listTargets, type TargetRecord } from "./targets.ts";

/** A registered target with its use and retirement. */
export interface TargetSummary extends TargetRecord {
  /** Completed external runs recorded against it. */
  runs: number;
  /** When its first and last runs were recorded (ISO 8601), `null` without runs. */
  first_run_at: string | null;
  last_run_at: string | null;
  /** Its retirement, `null` while active. */
  retired: Retirement | null;
}

/** Options for {@link listTargetSummaries}. */
export interface TargetListOptions {
  /** Include retired targets (default false). */
  all?: boolean;
}

/** Registered targets with their use; retired ones only with `all`. */
export async function listTargetSummaries(
  db: TraceDb,
  options: TargetListOptions = {},
): Promise<TargetSummary[]> {
  const targets = await listTargets(db);
  const retirements = await listRetirements(db);
  const use = await runUse(db);
  return targets
    .map((target) => ({
      ...target,
      runs: use.get(target.target_id)?.runs ?? 0,
      first_run_at: use.get(target.target_id)?.first ?? null,
      last_run_at: use.get(target.target_id)?.last ?? null,
      retired: retirements.get(target.target_id) ?? null,
    }))
    .filter((summary) => options.all || summary.retired === null);
}

/**
 * A target known only from its runs: a config run without a registration
 * (`trace quickstart` runs its in-process demo that way, on a new port each
 * time). No config is stored, so it cannot be run, replayed or cleaned up.
 */
export interface UnregisteredTarget {
  target_id: string;
  /** The base URL its newest run used. */
  base_url: string;
  /** Completed external runs recorded against it. */
  runs: number;
  /** When its first and last runs were recorded (ISO 8601). */
  first_run_at: string;
  last_run_at: string;
}

/** Targets that have external runs but no registration, in the order of their newest run. */
export async function listUnregisteredTargets(
  db: TraceDb,
): Promise<UnregisteredTarget[]> {
  const registered = new Set((await listTargets(db)).map((t) => t.target_id));
  const use = await runUse(db);
  const newest = await latestEntryPerTarget(db, "run");
  return newest.flatMap((entry) => {
    const id = entry.target_id ?? "";
    const seen = use.get(id);
    if (registered.has(id) || !seen) return [];
    const report = JSON.parse(entry.payload) as RunReport;
    return [{
      target_id: id,
      base_url: report.target.base_url,
      runs: seen.runs,
      first_run_at: seen.first,
      last_run_at: seen.last,
    }];
  });
}

interface Use {
  runs: number;
  first: string;
  last: string;
}

async function runUse(db: TraceDb): Promise<Map<string, Use>> {
  const rows = await db.client.execute(
    `SELECT ${CHAINED_COLUMNS} FROM ledger_entries WHERE kind = 'run' ORDER BY seq`,
  );
  const use = new Map<string, Use>();
  for (
    const entry of await verifiedEntries(db, rows.rows, { payload: false })
  ) {
    const id = entry.target_id ?? "";
    const seen = use.get(id);
    if (!seen) {
      use.set(id, { runs: 1, first: entry.created_at, last: entry.created_at });
    } else {
      seen.runs++;
      seen.last = entry.created_at;
    }
  }
  return use;
}
