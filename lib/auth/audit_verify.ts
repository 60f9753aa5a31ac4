/**
 * Verifying the audit trail, and its head.
 *
 * {@link verifyAudit} walks every entry in one snapshot: each payload
 * digest, each column copied from the payload, each link and chain digest,
 * then the newest head record, and the subject key against the fingerprint
 * each entry written since payload version 2 chains. That finds an entry edited (in its payload or
 * in a column alone), removed from the middle, or removed from the end
 * without its head record, and a subject key deleted or replaced (one
 * replaced under the same name and time is found by a version-2 entry's
 * fingerprint only); the tables' sequences find entries removed from the
 * end with their head records, and what only an append writes (the
 * subject key, a replay draft) left beside an empty trail finds one
 * removed whole. It cannot find the last entries removed together with
 * their head records and both sequences wound back, a whole trail removed
 * with everything an append wrote, nor a whole trail rewritten with
 * recomputed digests: all of that lives in the same file as what it protects.
 * Only a head kept elsewhere catches those: {@link auditHead} (`trace audit
 * head`) prints it, and `verifyAudit(db, {expectHead})` (`trace audit
 * verify --expect-head`) checks that the trail still extends it.
 *
 * @module
 */

import { firstMissingTable, type TraceDb } from "../db.ts";
import { UsageError } from "../errors.ts";
import { GENESIS } from "../ledger/chain.ts";
import { type AuditExecutor, auditRowProblem } from "./_audit_chain.ts";
import { brokenAudit, KEY_MISSING, TABLE_REMOVED } from "./audit_integrity.ts";
import { readSubjectKey, subjectKeyFingerprint } from "./subject_digest.ts";
import { quoteValue } from "../echo.ts";
import { missingAuthGuards } from "./schema.ts";

/** A point in the trail: entry `seq` has chain digest `chain_digest`. */
export interface AuditPoint {
  seq: number;
  chain_digest: string;
}

/** The trail's head: how many entries, the newest one's number and chain digest (0 and genesis when empty). */
export interface AuditHead extends AuditPoint {
  /** Entries in the trail. */
  entries: number;
  /** Format identifier. */
  schema: "trace.audit-head/1";
  /** `seq:chain_digest`, the form `--expect-head` takes. */
  head: string;
}

/** What {@link verifyAudit} found. */
export interface AuditVerification {
  /** Format identifier. */
  schema: "trace.audit-verify/1";
  /** True when every entry's digest, columns and link check out (and the expected head, when given, is still in the chain). */
  ok: boolean;
  /** Entries checked. */
  entries: number;
  /** The last entry's chain digest (keep it elsewhere to detect a replaced file or a removed end). */
  head: { seq: number; chain_digest: string } | null;
  /** The head given as `expectHead`, and whether the trail still extends it. */
  expected_head: { head: string; extended: boolean } | null;
  /** The first problem, or `null` when intact. */
  broken: { seq: number; problem: string } | null;
  /**
   * Triggers the trail's schema should hold and does not (dropped or
   * changed with an outside tool): its tables no longer refuse UPDATE or
   * DELETE. A warning, not a break: `ok` is about the evidence.
   */
  missing_guards: string[];
}

/** Options for {@link verifyAudit}. */
export interface AuditVerifyOptions {
  /** A head recorded earlier (`trace audit head`, parsed by `parseAuditHead`): the trail must still contain it, unchanged. */
  expectHead?: { seq: number; chain_digest: string };
}

/** Recomputes every entry and the chain in one snapshot, checks the head records and, when given, an expected head. */
export async function verifyAudit(
  db: TraceDb,
  options: { expectHead?: { seq: number; chain_digest: string } } = {},
): Promise<AuditVerification> {
  const tx = await db.client.transaction("deferred");
  try {
    return await verifyAuditIn(tx, options);
  } finally {
    tx.close();
  }
}

/** {@link verifyAudit} on an open transaction (readers verify and read in one snapshot). */
export async function verifyAuditIn(
  executor: AuditExecutor,
  options: AuditVerifyOptions = {},
): Promise<AuditVerification> {
  const expected = options.expectHead;
  const missing_guards = await missingAuthGuards(executor);
  const removed = await missingTable(executor);
  if (removed) {
    return {
      schema: "trace.audit-verify/1",
      ok: false,
      entries: 0,
      head: null,
      expected_head: expected
        ? { head: formatAuditHead(expected), extended: false }
        : null,
      broken: removed,
      missing_guards,
    };
  }
  const key = await readSubjectKey(executor);
  const fingerprint = key === null ? undefined : subjectKeyFingerprint(key);
  const walked = await walkAudit(executor, expected?.seq, fingerprint);
  const headProblem = walked.broken ??
    await checkHead(executor, walked.count, walked.last) ??
    await checkSequences(executor, walked.last) ??
    await checkKey(executor, walked.first) ??
    await checkLeftBehind(executor, walked.count);
  const seen = expected?.seq === 0 ? GENESIS : walked.seen;
  const extended = expected ? seen === expected.chain_digest : null;
  const broken = headProblem ??
    (extended === false ? notExtended(expected!, walked.last) : null);
  return {
    schema: "trace.audit-verify/1",
    ok: broken === null,
    entries: walked.count,
    head: walked.last,
    expected_head: expected
      ? { head: formatAuditHead(expected), extended: extended! }
      : null,
    broken,
    missing_guards,
  };
}

/** The tables verification reads: the trail, its head records, its key, and the drafts that witness it. */
const AUDIT_TABLES = [
  "auth_audit",
  "auth_audit_head",
  "auth_keys",
  "auth_replay_drafts",
];

/**
 * The first of the trail's tables removed from the database (`DROP TABLE`
 * with an outside tool), or `null`: without it verification would fail on
 * SQLite's "no such table" instead of naming the damage.
 */
async function missingTable(
  executor: AuditExecutor,
): Promise<{ seq: number; problem: string } | null> {
  const missing = await firstMissingTable(executor, AUDIT_TABLES);
  if (missing === null) return null;
  return {
    seq: 0,
    problem:
      `${TABLE_REMOVED} ${missing} is missing: it was removed (the audit trail's schema created it)`,
  };
}

/** The verified head of the trail; a broken trail is refused like every reader refuses it. */
export async function auditHead(db: TraceDb): Promise<AuditHead> {
  const result = await verifyAudit(db);
  if (result.broken) throw brokenAudit(result.broken);
  const point = result.head ?? { seq: 0, chain_digest: GENESIS };
  return {
    schema: "trace.audit-head/1",
    entries: result.entries,
    ...point,
    head: formatAuditHead(point),
  };
}

/** `seq:chain_digest`, as `trace audit head` prints it. */
export function formatAuditHead(point: AuditPoint): string {
  return `${point.seq}:${point.chain_digest}`;
}

const HEAD_PATTERN = /^(\d{1,15}):(sha256:[0-9a-f]{64})$/;

/** Parses `SEQ:sha256:<64 hex>` as printed by `trace audit head`. */
export function parseAuditHead(text: string): AuditPoint {
  const match = HEAD_PATTERN.exec(text.trim());
  if (!match) {
    throw new UsageError(
      `Invalid audit head ${
        quoteValue(text)
      }: expected SEQ:sha256:<64 hex>, as printed by trace audit head`,
    );
  }
  return { seq: Number(match[1]), chain_digest: match[2]! };
}

const PAGE = 500;

interface Walked {
  count: number;
  /** The first entry's seq and when it was written. */
  first: { seq: number; created_at: string } | null;
  last: AuditPoint | null;
  /** The chain digest at the seq asked for, when the walk met it. */
  seen: string | null;
  broken: { seq: number; problem: string } | null;
}

/**
 * Walks every entry in seq order. Seqs come from AUTOINCREMENT, which never
 * hands out a number twice (nor skips one: a rolled-back append takes its
 * number back with it), so an intact trail numbers its entries 1, 2, 3…
 * and a gap is an entry removed, even when a later entry was chained over it.
 * With the subject key's `fingerprint` (absent when the key is: `checkKey`
 * names that), each version-2 entry must have been written under that key.
 */
async function walkAudit(
  executor: AuditExecutor,
  watch: number | undefined,
  fingerprint: string | undefined,
): Promise<Walked> {
  const walked: Walked = {
    count: 0,
    first: null,
    last: null,
    seen: null,
    broken: null,
  };
  let prev = GENESIS;
  let after = 0;
  for (;;) {
    const page = await executor.execute({
      sql: "SELECT * FROM auth_audit WHERE seq > ? ORDER BY seq LIMIT ?",
      args: [after, PAGE],
    });
    for (const row of page.rows) {
      const seq = Number(row.seq);
      if (seq !== after + 1) {
        walked.broken = { seq: after + 1, problem: missingEntry(after + 1) };
        return walked;
      }
      const problem = auditRowProblem(row, prev, fingerprint);
      if (problem) {
        walked.broken = { seq, problem };
        return walked;
      }
      prev = String(row.chain_digest);
      walked.first ??= { seq, created_at: String(row.created_at) };
      walked.last = { seq, chain_digest: prev };
      if (seq === watch) walked.seen = prev;
      walked.count++;
      after = seq;
    }
    if (page.rows.length < PAGE) break;
  }
  return walked;
}

function missingEntry(seq: number): string {
  return `entry seq ${seq} is missing (it was removed: seq numbers are never reused)`;
}

/**
 * Each table's AUTOINCREMENT counter remembers the highest number ever
 * handed out: past the last entry, entries were removed from the end (with
 * their head records, or the head check would have named them). Head
 * records are numbered as the entries are, since each append writes one of
 * each in one transaction, so the head records' counter names a removed end
 * even when the entries' counter was wound back.
 */
async function checkSequences(
  executor: AuditExecutor,
  last: AuditPoint | null,
): Promise<{ seq: number; problem: string } | null> {
  const row = (await executor.execute(
    `SELECT
       COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'auth_audit'), 0) AS entries,
       COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'auth_audit_head'), 0) AS heads`,
  )).rows[0];
  const lastSeq = last?.seq ?? 0;
  const removed = (counted: string) => ({
    seq: lastSeq + 1,
    problem: `${
      missingEntry(lastSeq + 1)
    }; ${counted}, so entries were removed from the end with their head records`,
  });
  const issued = Number(row?.entries ?? 0);
  if (issued > lastSeq) return removed(`seqs up to ${issued} were handed out`);
  const heads = Number(row?.heads ?? 0);
  if (heads > lastSeq) {
    return removed(
      `head records up to ${heads} were written, one with each entry`,
    );
  }
  return null;
}

/**
 * An empty trail with what only an append writes: the subject key is made
 * in the first entry's transaction and a replay draft is stored in its
 * entry's, so either one left behind means the whole trail was removed
 * (with its head records and sequences, or the checks before would have
 * named it). A fresh database has neither.
 */
async function checkLeftBehind(
  executor: AuditExecutor,
  count: number,
): Promise<{ seq: number; problem: string } | null> {
  if (count > 0) return null;
  const row = (await executor.execute(
    `SELECT EXISTS (SELECT 1 FROM auth_keys WHERE name = 'subject_digest') AS key,
       EXISTS (SELECT 1 FROM auth_replay_drafts) AS drafts`,
  )).rows[0];
  if (Number(row?.key ?? 0) === 1) {
    return trailRemoved(
      "the subject key in auth_keys, made only with the first entry, is still there",
    );
  }
  if (Number(row?.drafts ?? 0) === 1) {
    return trailRemoved(
      "replay drafts, each stored only with its entry, are still there",
    );
  }
  return null;
}

function trailRemoved(witness: string): { seq: number; problem: string } {
  return {
    seq: 1,
    problem:
      `the trail has no entries, but ${witness}: the whole trail was removed; check a head kept elsewhere with trace audit verify --expect-head HEAD`,
  };
}

/**
 * Every entry was digested under the subject key, made before the first
 * entry: without it (or with a newer one) no stored digest can be matched
 * to a subject again, and `audit list --subject` would find nothing.
 */
async function checkKey(
  executor: AuditExecutor,
  first: { seq: number; created_at: string } | null,
): Promise<{ seq: number; problem: string } | null> {
  if (!first) return null;
  const key = (await executor.execute(
    "SELECT created_at FROM auth_keys WHERE name = 'subject_digest'",
  )).rows[0];
  if (!key) return { seq: first.seq, problem: KEY_MISSING };
  if (String(key.created_at) > first.created_at) {
    return {
      seq: first.seq,
      problem:
        "the subject key in auth_keys is newer than the first entry (it was replaced): stored digests no longer match their subjects",
    };
  }
  return null;
}

async function checkHead(
  executor: AuditExecutor,
  count: number,
  last: AuditPoint | null,
): Promise<{ seq: number; problem: string } | null> {
  const head = await executor.execute(
    "SELECT entry_seq, entry_count, chain_digest FROM auth_audit_head ORDER BY head_seq DESC LIMIT 1",
  );
  const row = head.rows[0];
  if (!row) {
    return last ? { seq: last.seq, problem: "head records are missing" } : null;
  }
  const headSeq = Number(row.entry_seq);
  if (
    !last || headSeq !== last.seq || Number(row.entry_count) !== count ||
    String(row.chain_digest) !== last.chain_digest
  ) {
    return {
      seq: headSeq,
      problem:
        "the head names an entry that is no longer the last one (entries were removed)",
    };
  }
  return null;
}

/** A ledger head looks like an audit trail head, so a mixed-up head is named as a possible cause. */
const NOT_OURS =
  "or the head is not this trail's: a ledger head, or another data directory's";

function notExtended(
  expected: AuditPoint,
  last: AuditPoint | null,
): { seq: number; problem: string } {
  const lastSeq = last?.seq ?? 0;
  return {
    seq: expected.seq,
    problem: expected.seq > lastSeq
      ? `the trail no longer extends the expected head: it ends at entry seq ${lastSeq} (entries were removed from its end with their head records, or the file was replaced, ${NOT_OURS})`
      : `the trail no longer extends the expected head: entry seq ${expected.seq} has another chain digest (the trail was rewritten or the file replaced, ${NOT_OURS})`,
  };
}
