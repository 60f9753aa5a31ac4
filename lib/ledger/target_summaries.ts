/**
 * Targets as `external-targets` lists them: what each is (base URL, source),
 * how much it was used (run count, first and last run) and whether it is
 * retired. Run rows are read without their payloads, each checked against
 * the verified chain.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { verifiedEntries } from "./_intact.ts";
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

interface Use {
  runs: number;
  first: string;
  last: string;
}

async function runUse(db: TraceDb): Promise<Map<string, Use>> {
  const rows = await db.client.execute(
    `SELECT seq, kind, entity_id, target_id, payload_digest, prev_chain,
       chain_digest, created_at, chain_version
     FROM ledger_entries WHERE kind = 'run' ORDER BY seq`,
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
