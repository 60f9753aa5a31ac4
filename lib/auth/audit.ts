/**
 * The audit trail of privileged operator actions: who (operator, role, how
 * they signed in), what (action, target ids), in which scope, why (the
 * stated reason) and how it ended. Never content, tokens or emails;
 * identifying ids (user, thread, memory, event, resource) are stored as
 * keyed digests (`subject_digest.ts`).
 *
 * Entries are append-only rows chained with the ledger's digest functions
 * (`payloadDigest`, `chainDigest`), each append also writing a head record,
 * so an edited, removed or truncated entry is found by {@link verifyAudit}.
 * A privileged action fails closed: {@link appendAudit} throws
 * {@link AuditUnavailableError} when the entry cannot be written, and the
 * caller answers nothing of what the action found.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { canonicalJson } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { LedgerIntegrityError, StorageError, TraceError } from "../errors.ts";
import {
  chainDigest,
  type EntryKind,
  GENESIS,
  payloadDigest,
} from "../ledger/chain.ts";
import type { Action } from "./permissions.ts";
import type { AuthMethod, Role, TenantScope } from "./roles.ts";
import {
  readSubjectKey,
  subjectDigest,
  subjectKeyFor,
  type SubjectKind,
} from "./subject_digest.ts";

/** How an audited action ended. */
export const AUDIT_OUTCOMES = ["succeeded", "refused", "failed"] as const;
/** One of {@link AUDIT_OUTCOMES}. */
export type AuditOutcome = typeof AUDIT_OUTCOMES[number];

/** What an action was about. Identifying ids are digested when written. */
export interface AuditTargets {
  application_id?: string;
  agent_id?: string;
  root_trace_id?: string;
  turn_id?: string;
  run_id?: string;
  draft_id?: string;
  /** Digested. */
  event_id?: string;
  /** Digested; `null` names anonymous evidence. */
  user_id?: string | null;
  /** Digested. */
  thread_id?: string;
  /** Digested. */
  memory_id?: string;
  /** A typed resource ref; its id is digested. */
  resource?: { type: string; id: string; version?: string | undefined };
  /** How many resource refs a replay plan or draft froze. */
  refs?: number;
  /** How many events a selection held. */
  events?: number;
}

/** Who did it. */
export interface AuditActor {
  name: string;
  role: Role;
  via: AuthMethod;
}

/** One privileged action to record. */
export interface AuditRecord {
  actor: AuditActor;
  action: Action;
  /** The scope the action ran in (the account's, narrowed by the request). */
  scope: TenantScope;
  targets?: AuditTargets;
  /** The operator's stated reason (required for a reveal). */
  reason?: string | null;
  outcome: AuditOutcome;
  /** A short code: why it was refused or failed (`role`, `hook_missing`, …). */
  detail?: string;
}

/** An entry as stored and read back (its payload already digested). */
export interface AuditEntry {
  /** The entry's number in the trail. */
  seq: number;
  /** `audit-…`. */
  entry_id: string;
  /** When it was appended, ISO 8601. */
  created_at: string;
  /** Who acted. */
  operator: string;
  /** What they did (`content.reveal`, `account.resolve`, …). */
  action: string;
  /** How it ended (`succeeded`, `refused`, `failed`). */
  outcome: string;
  /** The canonical JSON payload, parsed. */
  payload: Record<string, unknown>;
  /** SHA-256 of the payload. */
  payload_digest: string;
  /** The digest chaining this entry to the one before. */
  chain_digest: string;
}

/** The audit trail could not be written: the action it guards is refused. */
export class AuditUnavailableError extends StorageError {
  constructor(detail: string, options?: ErrorOptions) {
    super(`Cannot write the audit trail: ${detail}`, options);
    this.name = "AuditUnavailableError";
  }
}

/** The kind audit entries are chained under (they live in their own chain, never in the ledger). */
const AUDIT_KIND = "audit" as unknown as EntryKind;

const DIGESTED: readonly ("event_id" | "thread_id" | "memory_id")[] = [
  "event_id",
  "thread_id",
  "memory_id",
];

/**
 * Appends one entry. With `write`, runs it in the same transaction first, so
 * the record and what it describes are committed together or not at all.
 */
export async function appendAudit(
  db: TraceDb,
  record: AuditRecord,
  write?: (tx: Transaction) => Promise<void>,
): Promise<AuditEntry> {
  let tx: Transaction;
  try {
    tx = await db.client.transaction("write");
  } catch (error) {
    throw new AuditUnavailableError((error as Error).message, { cause: error });
  }
  try {
    if (write) await write(tx);
    const entry = await insertEntry(tx, record);
    await tx.commit();
    return entry;
  } catch (error) {
    await tx.rollback().catch(() => {});
    if (error instanceof TraceError && !(error instanceof StorageError)) {
      throw error;
    }
    if (error instanceof AuditUnavailableError) throw error;
    throw new AuditUnavailableError((error as Error).message, { cause: error });
  } finally {
    tx.close();
  }
}

async function insertEntry(
  tx: Transaction,
  record: AuditRecord,
): Promise<AuditEntry> {
  const key = await subjectKeyFor(tx);
  const entryId = `audit-${crypto.randomUUID()}`;
  const createdAt = new Date().toISOString();
  const payload = auditPayload(record, key, entryId, createdAt);
  const text = canonicalJson(payload);
  const digest = payloadDigest(text);
  const last = await tx.execute(
    "SELECT chain_digest FROM auth_audit ORDER BY seq DESC LIMIT 1",
  );
  const prev = last.rows[0] ? String(last.rows[0].chain_digest) : GENESIS;
  const chain = auditChain(prev, entryId, createdAt, digest);
  const inserted = await tx.execute({
    sql:
      `INSERT INTO auth_audit (entry_id, created_at, operator, action, outcome,
        payload, payload_digest, prev_chain, chain_digest)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    args: [
      entryId,
      createdAt,
      record.actor.name,
      record.action,
      record.outcome,
      text,
      digest,
      prev,
      chain,
    ],
  });
  const seq = Number(inserted.rows[0]!.seq);
  await tx.execute({
    sql:
      `INSERT INTO auth_audit_head (entry_seq, entry_count, chain_digest, created_at)
      VALUES (?, (SELECT COUNT(*) FROM auth_audit), ?, ?)`,
    args: [seq, chain, createdAt],
  });
  return {
    seq,
    entry_id: entryId,
    created_at: createdAt,
    operator: record.actor.name,
    action: record.action,
    outcome: record.outcome,
    payload,
    payload_digest: digest,
    chain_digest: chain,
  };
}

/** The ledger's version-2 chain digest over an audit row's columns. */
function auditChain(
  prev: string,
  entryId: string,
  createdAt: string,
  digest: string,
): string {
  return chainDigest({
    chain_version: 2,
    prev_chain: prev,
    kind: AUDIT_KIND,
    entity_id: entryId,
    target_id: null,
    created_at: createdAt,
    payload_digest: digest,
  });
}

/** The stored form of a record: content-free, identifying ids digested. */
function auditPayload(
  record: AuditRecord,
  key: string,
  entryId: string,
  createdAt: string,
): Record<string, unknown> {
  return {
    v: 1,
    entry_id: entryId,
    at: createdAt,
    operator: record.actor.name,
    role: record.actor.role,
    via: record.actor.via,
    action: record.action,
    outcome: record.outcome,
    detail: record.detail ?? null,
    scope: digestScope(record.scope, key),
    targets: digestTargets(record.targets ?? {}, key),
    reason: record.reason ?? null,
  };
}

function digestScope(scope: TenantScope, key: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if ("application_id" in scope) out.application_id = scope.application_id;
  if ("user_id" in scope) out.user_id = digestUser(scope.user_id, key);
  return out;
}

function digestUser(
  user: string | null | undefined,
  key: string,
): string | null {
  return user === null || user === undefined
    ? null
    : subjectDigest(key, "user_id", user);
}

function digestTargets(
  targets: AuditTargets,
  key: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...targets };
  for (const field of DIGESTED) {
    const value = targets[field];
    if (value !== undefined) out[field] = subjectDigest(key, field, value);
  }
  if ("user_id" in targets) out.user_id = digestUser(targets.user_id, key);
  if (targets.resource) {
    out.resource = {
      ...targets.resource,
      id: subjectDigest(key, "resource_id", targets.resource.id),
    };
  }
  return out;
}

/** Filters of {@link listAudit}. */
export interface AuditListOptions {
  /** At most this many, newest first (default 50). */
  limit?: number;
  /** Only this operator's entries. */
  operator?: string;
  /** Only this action's entries. */
  action?: string;
  /** Only entries naming this subject (its digest is computed here). */
  subject?: { kind: SubjectKind; value: string };
}

/** The newest entries, each checked against its payload digest. */
export async function listAudit(
  db: TraceDb,
  options: AuditListOptions = {},
): Promise<AuditEntry[]> {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (options.operator !== undefined) {
    where.push("operator = ?");
    args.push(options.operator);
  }
  if (options.action !== undefined) {
    where.push("action = ?");
    args.push(options.action);
  }
  if (options.subject) {
    const key = await readSubjectKey(db);
    if (key === null) return [];
    const { kind, value } = options.subject;
    where.push("instr(payload, ?) > 0");
    args.push(JSON.stringify(subjectDigest(key, kind, value)));
  }
  const result = await db.client.execute({
    sql: `SELECT * FROM auth_audit ${
      where.length ? `WHERE ${where.join(" AND ")}` : ""
    } ORDER BY seq DESC LIMIT ?`,
    args: [...args, options.limit ?? 50],
  });
  return result.rows.map((row) => checkedEntry(row));
}

function checkedEntry(row: Record<string, unknown>): AuditEntry {
  const seq = Number(row.seq);
  const text = String(row.payload);
  if (payloadDigest(text) !== String(row.payload_digest)) {
    throw new LedgerIntegrityError(
      `The audit entry at seq ${seq} was changed after it was written; run trace audit verify`,
    );
  }
  return {
    seq,
    entry_id: String(row.entry_id),
    created_at: String(row.created_at),
    operator: String(row.operator),
    action: String(row.action),
    outcome: String(row.outcome),
    payload: JSON.parse(text),
    payload_digest: String(row.payload_digest),
    chain_digest: String(row.chain_digest),
  };
}

/** What {@link verifyAudit} found. */
export interface AuditVerification {
  /** True when every entry's digest and link checks out. */
  ok: boolean;
  /** Entries checked. */
  entries: number;
  /** The last entry's chain digest (keep it elsewhere to detect a replaced file). */
  head: { seq: number; chain_digest: string } | null;
  /** The first problem, or `null` when intact. */
  broken: { seq: number; problem: string } | null;
}

const PAGE = 500;

/** Recomputes every payload digest and the chain, and checks the head records. */
export async function verifyAudit(db: TraceDb): Promise<AuditVerification> {
  let prev = GENESIS;
  let count = 0;
  let last: { seq: number; chain_digest: string } | null = null;
  let after = 0;
  for (;;) {
    const page = await db.client.execute({
      sql: "SELECT * FROM auth_audit WHERE seq > ? ORDER BY seq LIMIT ?",
      args: [after, PAGE],
    });
    for (const row of page.rows) {
      const seq = Number(row.seq);
      const problem = rowProblem(row, prev);
      if (problem) return broken(count, last, seq, problem);
      prev = String(row.chain_digest);
      last = { seq, chain_digest: prev };
      count++;
      after = seq;
    }
    if (page.rows.length < PAGE) break;
  }
  const headProblem = await checkHead(db, count, last);
  if (headProblem) {
    return broken(count, last, headProblem.seq, headProblem.problem);
  }
  return { ok: true, entries: count, head: last, broken: null };
}

function rowProblem(
  row: Record<string, unknown>,
  prev: string,
): string | null {
  const text = String(row.payload);
  const digest = String(row.payload_digest);
  if (payloadDigest(text) !== digest) return "payload digest mismatch";
  if (String(row.prev_chain) !== prev) {
    return "previous chain digest mismatch (an entry before it was removed or changed)";
  }
  const expected = auditChain(
    prev,
    String(row.entry_id),
    String(row.created_at),
    digest,
  );
  if (expected !== String(row.chain_digest)) return "chain digest mismatch";
  return null;
}

async function checkHead(
  db: TraceDb,
  count: number,
  last: { seq: number; chain_digest: string } | null,
): Promise<{ seq: number; problem: string } | null> {
  const head = await db.client.execute(
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

function broken(
  entries: number,
  head: { seq: number; chain_digest: string } | null,
  seq: number,
  problem: string,
): AuditVerification {
  return { ok: false, entries, head, broken: { seq, problem } };
}
