/**
 * Retired targets. Targets are immutable and never deleted; retiring one
 * appends a `retirement` entry (once per target) that hides it from
 * listings and refuses new runs and replays against it. Its history stays.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { clipValue } from "../echo.ts";
import { NotFoundError, RefusedError, UsageError } from "../errors.ts";
import {
  appendEntries,
  type LedgerSource,
  listEntries,
  readEntry,
} from "./chain.ts";
import { readTarget, validateTargetId } from "./targets.ts";

/** Most characters a retirement reason may hold: every refusal repeats it. */
export const MAX_RETIREMENT_REASON = 500;

/** A retirement as chained. */
export interface Retirement {
  schema: "trace.retirement/1";
  target_id: string;
  retired_at: string;
  /** Why, in the operator's words; `null` when none was given. */
  reason: string | null;
  /** The entry that records it. */
  seq: number;
}

/** The answer of `external retire`. */
export interface RetiredTarget {
  retirement: Retirement;
  /** False when the target was already retired. */
  created: boolean;
}

/** Retires a registered target (once; retiring it again changes nothing). */
export async function retireTarget(
  db: TraceDb,
  targetId: string,
  reason: string | null = null,
): Promise<RetiredTarget> {
  validateTargetId(targetId);
  if (reason !== null && reason.length > MAX_RETIREMENT_REASON) {
    throw new UsageError(
      `Cannot retire target "${targetId}": the reason is ${reason.length} characters; give at most ${MAX_RETIREMENT_REASON}`,
    );
  }
  if (!await readTarget(db, targetId)) {
    throw new NotFoundError(
      `Cannot retire target "${targetId}": it is not registered; see trace external-targets --all`,
    );
  }
  const found: { existing: Retirement | null } = { existing: null };
  const appended = await appendEntries(db, async (tx) => {
    found.existing = await readRetirement(tx, targetId);
    if (found.existing) return [];
    return [{
      kind: "retirement",
      entityId: targetId,
      targetId,
      payload: {
        schema: "trace.retirement/1",
        target_id: targetId,
        retired_at: new Date().toISOString(),
        reason,
      },
    }];
  });
  if (found.existing) return { retirement: found.existing, created: false };
  const entry = appended[0]!;
  return {
    retirement: { ...JSON.parse(entry.payload), seq: entry.seq },
    created: true,
  };
}

/** The retirement of a target, or `null` while it is active. */
export async function readRetirement(
  source: LedgerSource,
  targetId: string,
): Promise<Retirement | null> {
  const entry = await readEntry(source, "retirement", targetId);
  return entry ? { ...JSON.parse(entry.payload), seq: entry.seq } : null;
}

/** Every retirement, by target id. */
export async function listRetirements(
  db: TraceDb,
): Promise<Map<string, Retirement>> {
  const entries = await listEntries(db, "retirement");
  return new Map(
    entries.map((e) => [e.entity_id, { ...JSON.parse(e.payload), seq: e.seq }]),
  );
}

/** Throws a one-line refusal naming the retirement when `targetId` is retired. */
export async function refuseRetired(
  source: LedgerSource,
  targetId: string,
  action: string,
): Promise<void> {
  const retirement = await readRetirement(source, targetId);
  if (!retirement) return;
  throw new RefusedError(
    `Cannot ${action}: target "${targetId}" ${
      retiredWords(retirement)
    }; register a new target id for new runs`,
  );
}

/** "was retired on … (ledger entry N: why)", as every refusal of a retired id says it. */
export function retiredWords(retirement: Retirement): string {
  return `was retired on ${retirement.retired_at} (ledger entry ${retirement.seq}${
    // Clipped: a reason chained before the bound may be of any length.
    retirement.reason ? `: ${clipValue(retirement.reason)}` : ""})`;
}
