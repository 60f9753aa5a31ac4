/**
 * The checks behind `ledger verify` and every verified read: each row's
 * payload and chain digests and its link to the row before it, the head
 * records (which catch a removed last row), and the target rows against
 * their chained registrations. Walks can start from a point already
 * verified, so a reader only walks what was appended since.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { canonicalJson, digestOf } from "../canonical_json.ts";
import { firstMissingTable } from "../db.ts";
import {
  CHAIN_VERSIONS,
  chainDigest,
  GENESIS,
  type LedgerEntry,
  payloadDigest,
  toEntry,
} from "./_entry.ts";
import { receiptEntryProblem } from "./_receipt_shape.ts";
import { verdictProblem } from "./_verdict.ts";
import type { RunReport } from "../runner/report.ts";

/** Something that runs SQL: a client or an open transaction. */
export type Executor = Pick<Transaction, "execute">;

/** The first row that failed verification. */
export interface BrokenRow {
  /** The entry number where the chain breaks. */
  seq: number;
  /** The entry's kind (`run`, `target`, `regression`, …). */
  kind: string;
  /** The id of what the entry records. */
  entity_id: string;
  /** What is wrong, in words. */
  problem: string;
}

/** A verified row the chain continues from. */
export type ChainPoint = Pick<
  LedgerEntry,
  "seq" | "kind" | "entity_id" | "chain_digest" | "chain_version"
>;

/** What a walk saw. */
export interface Walk {
  /** Rows walked. */
  count: number;
  /** The last row walked (or the starting point when nothing was appended). */
  last: ChainPoint | null;
  broken: BrokenRow | null;
}

const PAGE = 500;

/** The ledger's tables: a database whose migrations say it holds a ledger has all three. */
const LEDGER_TABLES = ["ledger_entries", "ledger_head", "ledger_targets"];

/**
 * The first ledger table removed from the database (`DROP TABLE` with an
 * outside tool), as a broken row before every entry, or `null`: without it
 * a walk would fail on SQLite's "no such table" instead of naming the damage.
 */
export async function missingTable(
  executor: Executor,
): Promise<BrokenRow | null> {
  const missing = await firstMissingTable(executor, LEDGER_TABLES);
  if (missing === null) return null;
  return {
    seq: 0,
    kind: "(table)",
    entity_id: missing,
    problem:
      `the table ${missing} is missing: it was removed (the ledger's schema created it)`,
  };
}

/**
 * Walks the rows after `from` (from the first row when `null`) in seq
 * order, checking each against the one before it; `onRow` sees every row
 * that passed, until the first broken one.
 */
export async function walkChain(
  executor: Executor,
  from: ChainPoint | null,
  onRow?: (entry: LedgerEntry) => void,
): Promise<Walk> {
  const walk: Walk = { count: 0, last: from, broken: null };
  let after = from?.seq ?? 0;
  for (;;) {
    const page = await executor.execute({
      sql: "SELECT * FROM ledger_entries WHERE seq > ? ORDER BY seq LIMIT ?",
      args: [after, PAGE],
    });
    for (const row of page.rows) {
      const entry = toEntry(row);
      const problem = gapBefore(entry, walk.last) ??
        checkEntry(entry, walk.last);
      if (problem && !walk.broken) walk.broken = brokenAt(entry, problem);
      if (!walk.broken) onRow?.(entry);
      walk.count++;
      walk.last = entry;
      after = entry.seq;
    }
    if (page.rows.length < PAGE) return walk;
  }
}

/**
 * Seqs are AUTOINCREMENT and a failed append rolls its number back, so
 * they run 1, 2, 3, … with no gap: a missing number is a removed entry,
 * even once a later append has chained over the hole it left.
 */
function gapBefore(
  entry: LedgerEntry,
  previous: Pick<ChainPoint, "seq"> | null,
): string | null {
  const expected = (previous?.seq ?? 0) + 1;
  if (entry.seq === expected) return null;
  if (entry.seq < expected) return "its seq is out of order (edited)";
  return entry.seq === expected + 1
    ? `entry ${expected} before it is missing (removed)`
    : `entries ${expected} to ${entry.seq - 1} before it are missing (removed)`;
}

/** A broken-row record for `entry`. */
export function brokenAt(entry: ChainPoint, problem: string): BrokenRow {
  return {
    seq: entry.seq,
    kind: entry.kind,
    entity_id: entry.entity_id,
    problem,
  };
}

function checkEntry(
  entry: LedgerEntry,
  previous: Pick<ChainPoint, "chain_digest" | "chain_version"> | null,
): string | null {
  let payload: unknown;
  try {
    payload = JSON.parse(entry.payload);
  } catch {
    return "its payload is not valid JSON";
  }
  if (canonicalJson(payload) !== entry.payload) {
    return "its payload is not in canonical form (edited)";
  }
  if (payloadDigest(entry.payload) !== entry.payload_digest) {
    return "its payload does not match its digest (edited)";
  }
  if (entry.prev_chain !== (previous?.chain_digest ?? GENESIS)) {
    return "it does not link to the previous row (a row before it was removed or altered)";
  }
  const versionProblem = chainVersionProblem(entry, previous);
  if (versionProblem) return versionProblem;
  if (chainDigest(entry) !== entry.chain_digest) {
    return "its chain digest does not match its contents (edited)";
  }
  const target = payloadTargetId(payload);
  if (target !== undefined && target !== entry.target_id) {
    return "its target_id column does not match its payload (edited)";
  }
  if (entry.kind === "erasure") {
    return receiptEntryProblem(entry.entity_id, payload);
  }
  if (entry.kind === "run" || entry.kind === "reference_run") {
    const verdict = verdictProblem(payload as RunReport);
    if (verdict !== null) return `${verdict} (edited)`;
  }
  return null;
}

function chainVersionProblem(
  entry: LedgerEntry,
  previous: Pick<ChainPoint, "chain_version"> | null,
): string | null {
  if (!(CHAIN_VERSIONS as readonly number[]).includes(entry.chain_version)) {
    return `its chain_version ${entry.chain_version} is unknown (edited)`;
  }
  // Versions only ever increase: a lower one after a higher one was lowered by hand.
  if (previous && entry.chain_version < previous.chain_version) {
    return "its chain_version is lower than the row before it (edited)";
  }
  return null;
}

/** The target id a payload names, when it names one. */
function payloadTargetId(payload: unknown): string | null | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const record = payload as Record<string, unknown>;
  if (typeof record.target_id === "string") return record.target_id;
  const target = record.target as Record<string, unknown> | undefined;
  if (target && typeof target.id === "string") return target.id;
  return undefined;
}

/** What the head records say, and the first thing wrong with them. */
export interface HeadCheck {
  broken: BrokenRow | null;
  /** The newest head record's number (0 when there is none). */
  lastHeadSeq: number;
}

/**
 * Checks the head records written after `afterHeadSeq`: each must name a
 * row that still has the chain digest it had when appended, and the newest
 * must name the last row and the row count.
 */
export async function checkHeads(
  executor: Executor,
  last: ChainPoint | null,
  count: number,
  afterHeadSeq = 0,
): Promise<HeadCheck> {
  const mismatch = await executor.execute({
    sql: `SELECT h.entry_seq, h.kind, h.entity_id, e.chain_digest AS found
      FROM ledger_head h LEFT JOIN ledger_entries e ON e.seq = h.entry_seq
      WHERE h.head_seq > ? AND (e.chain_digest IS NULL OR e.chain_digest <> h.chain_digest)
      ORDER BY h.head_seq LIMIT 1`,
    args: [afterHeadSeq],
  });
  const newest = (await executor.execute(
    "SELECT * FROM ledger_head ORDER BY head_seq DESC LIMIT 1",
  )).rows[0];
  const lastHeadSeq = newest ? Number(newest.head_seq) : 0;
  const row = mismatch.rows[0];
  if (row) {
    return {
      lastHeadSeq,
      broken: {
        seq: Number(row.entry_seq),
        kind: String(row.kind),
        entity_id: String(row.entity_id),
        problem: row.found === null
          ? "it was removed (a head record names it)"
          : "its chain digest differs from the one recorded when it was appended (edited)",
      },
    };
  }
  return { lastHeadSeq, broken: newestHeadProblem(newest, last, count) };
}

function newestHeadProblem(
  newest: Record<string, unknown> | undefined,
  last: ChainPoint | null,
  count: number,
): BrokenRow | null {
  if (!newest) {
    return last
      ? brokenAt(
        last,
        "no head record exists for the ledger (head records removed)",
      )
      : null;
  }
  if (
    last && Number(newest.entry_seq) === last.seq &&
    Number(newest.entry_count) === count
  ) {
    return null;
  }
  const at = last ?? { seq: 0, kind: "(none)", entity_id: "(none)" };
  return {
    seq: at.seq,
    kind: at.kind,
    entity_id: at.entity_id,
    problem:
      `the latest head record expects ${newest.entry_count} entries ending at seq ${newest.entry_seq}, found ${count}`,
  };
}

/** Checks every `ledger_targets` row against its chained registration. */
export async function checkTargets(
  executor: Executor,
): Promise<{ count: number; broken: BrokenRow | null }> {
  const rows = await executor.execute(
    `SELECT t.target_id, t.source, t.config_json, t.config_digest, t.created_at,
       e.seq, e.payload
     FROM ledger_targets t LEFT JOIN ledger_entries e
       ON e.kind = 'target' AND e.entity_id = t.target_id
     ORDER BY e.seq`,
  );
  const registered = await executor.execute(
    `SELECT e.seq, e.entity_id FROM ledger_entries e
     WHERE e.kind = 'target'
       AND NOT EXISTS (SELECT 1 FROM ledger_targets t WHERE t.target_id = e.entity_id)
     ORDER BY e.seq LIMIT 1`,
  );
  let broken: BrokenRow | null = null;
  const removed = registered.rows[0];
  if (removed) {
    broken = {
      seq: Number(removed.seq),
      kind: "target",
      entity_id: String(removed.entity_id),
      problem: "its ledger_targets row was removed",
    };
  }
  for (const row of rows.rows) {
    const problem = targetProblem(row);
    if (!problem) continue;
    const candidate: BrokenRow = {
      seq: row.seq === null ? 0 : Number(row.seq),
      kind: "target",
      entity_id: String(row.target_id),
      problem,
    };
    if (!broken || candidate.seq < broken.seq) broken = candidate;
    break;
  }
  return { count: rows.rows.length, broken };
}

function targetProblem(
  row: Record<string, unknown>,
): string | null {
  if (row.payload === null) {
    return "the registered target has no chained registration entry";
  }
  let payload: {
    config: unknown;
    config_digest: string;
    source: unknown;
    created_at: unknown;
  };
  let config: unknown;
  try {
    payload = JSON.parse(String(row.payload));
    config = JSON.parse(String(row.config_json));
  } catch {
    return "its stored config or registration is not valid JSON (edited)";
  }
  if (
    canonicalJson(config) !== canonicalJson(payload.config) ||
    String(row.config_digest) !== payload.config_digest ||
    digestOf(config) !== payload.config_digest ||
    String(row.source) !== payload.source ||
    String(row.created_at) !== payload.created_at
  ) {
    return "its ledger_targets row differs from its chained registration (edited)";
  }
  return null;
}

/** The first of several problems, by seq. */
export function firstBroken(
  ...rows: (BrokenRow | null)[]
): BrokenRow | null {
  return rows.filter((row): row is BrokenRow => row !== null)
    .sort((x, y) => x.seq - y.seq)[0] ?? null;
}
