/**
 * `ledger verify`: recomputes every payload digest and the chain, checks the
 * head records (which catch a removed last entry) and that every registered
 * target still matches its chained registration. Detects accidental or
 * careless edits; it cannot stop someone who rewrites the whole file.
 *
 * @module
 */

import { canonicalJson, digestOf } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import {
  CHAIN_VERSIONS,
  chainDigest,
  GENESIS,
  type LedgerEntry,
  payloadDigest,
  toEntry,
} from "./chain.ts";

/** The first row that failed verification. */
export interface BrokenRow {
  seq: number;
  kind: string;
  entity_id: string;
  problem: string;
}

/** The answer of `ledger verify`. */
export interface LedgerVerification {
  schema: "trace.ledger-verify/1";
  ok: boolean;
  entries: number;
  targets: number;
  /** The latest chain digest: record it elsewhere to detect a replaced file later. */
  head: { seq: number; chain_digest: string } | null;
  broken: BrokenRow | null;
}

const PAGE = 500;

/** Verifies the whole ledger; never throws for a broken row, reports it. */
export async function verifyLedger(db: TraceDb): Promise<LedgerVerification> {
  const walked = await walkChain(db);
  const headProblem = await checkHeads(db, walked.last, walked.count);
  const targets = await checkTargets(db);
  const broken = [walked.broken, headProblem, targets.broken]
    .filter((row): row is BrokenRow => row !== null)
    .sort((x, y) => x.seq - y.seq)[0] ?? null;
  return {
    schema: "trace.ledger-verify/1",
    ok: broken === null,
    entries: walked.count,
    targets: targets.count,
    head: walked.last
      ? { seq: walked.last.seq, chain_digest: walked.last.chain_digest }
      : null,
    broken,
  };
}

interface Walk {
  count: number;
  last: LedgerEntry | null;
  broken: BrokenRow | null;
}

async function walkChain(db: TraceDb): Promise<Walk> {
  const walk: Walk = { count: 0, last: null, broken: null };
  let after = 0;
  for (;;) {
    const page = await db.client.execute({
      sql: "SELECT * FROM ledger_entries WHERE seq > ? ORDER BY seq LIMIT ?",
      args: [after, PAGE],
    });
    for (const row of page.rows) {
      const entry = toEntry(row);
      const problem = checkEntry(entry, walk.last);
      if (problem && !walk.broken) walk.broken = brokenAt(entry, problem);
      walk.count++;
      walk.last = entry;
      after = entry.seq;
    }
    if (page.rows.length < PAGE) return walk;
  }
}

function brokenAt(entry: LedgerEntry, problem: string): BrokenRow {
  return {
    seq: entry.seq,
    kind: entry.kind,
    entity_id: entry.entity_id,
    problem,
  };
}

function checkEntry(
  entry: LedgerEntry,
  previous: LedgerEntry | null,
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
  return null;
}

function chainVersionProblem(
  entry: LedgerEntry,
  previous: LedgerEntry | null,
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

async function checkHeads(
  db: TraceDb,
  last: LedgerEntry | null,
  count: number,
): Promise<BrokenRow | null> {
  const heads = await db.client.execute(
    "SELECT * FROM ledger_head ORDER BY head_seq",
  );
  let firstMissing: BrokenRow | null = null;
  for (const row of heads.rows) {
    const seq = Number(row.entry_seq);
    const found = await db.client.execute({
      sql: "SELECT chain_digest FROM ledger_entries WHERE seq = ?",
      args: [seq],
    });
    const digest = found.rows[0] ? String(found.rows[0].chain_digest) : null;
    if (digest !== String(row.chain_digest)) {
      firstMissing = {
        seq,
        kind: String(row.kind),
        entity_id: String(row.entity_id),
        problem: digest === null
          ? "it was removed (a head record names it)"
          : "its chain digest differs from the one recorded when it was appended (edited)",
      };
      break;
    }
  }
  if (firstMissing) return firstMissing;
  const head = heads.rows.at(-1);
  if (!head) {
    return last
      ? brokenAt(
        last,
        "no head record exists for the ledger (head records removed)",
      )
      : null;
  }
  if (
    !last || Number(head.entry_seq) !== last.seq ||
    Number(head.entry_count) !== count
  ) {
    const at = last ?? { seq: 0, kind: "(none)", entity_id: "(none)" };
    return {
      seq: at.seq,
      kind: at.kind,
      entity_id: at.entity_id,
      problem:
        `the latest head record expects ${head.entry_count} entries ending at seq ${head.entry_seq}, found ${count}`,
    };
  }
  return null;
}

async function checkTargets(
  db: TraceDb,
): Promise<{ count: number; broken: BrokenRow | null }> {
  const rows = await db.client.execute(
    `SELECT t.target_id, t.source, t.config_json, t.config_digest, t.created_at,
       e.seq, e.payload
     FROM ledger_targets t LEFT JOIN ledger_entries e
       ON e.kind = 'target' AND e.entity_id = t.target_id
     ORDER BY e.seq`,
  );
  const registered = await db.client.execute(
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
