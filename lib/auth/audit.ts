/**
 * The audit trail of privileged operator actions: who (operator, role, how
 * they signed in), what (action, target ids), in which scope, why (the
 * stated reason) and how it ended. Never content, tokens or emails;
 * identifying ids (user, thread, memory, event, resource) are stored as
 * keyed digests (`subject_digest.ts`).
 *
 * Entries are append-only rows chained with the ledger's digest functions
 * (`payloadDigest`, `chainDigest`), each append also writing a head record;
 * each payload (version 2) names the subject key's fingerprint, so the key
 * its digests were made with is chained too;
 * {@link verifyAudit} (`audit_verify.ts`) finds an edited, removed or
 * reordered entry, and readers (`audit_list.ts`) refuse a broken trail.
 *
 * Appends go through a database handle that remembers what it verified, as
 * the ledger's handle does (`lib/ledger/_intact.ts`): the first append
 * through a handle verifies the whole trail; later ones check that the
 * entry the handle wrote last is still there with the same chain digest,
 * and walk the whole trail again when the database's schema version changed
 * meanwhile (editing or removing an entry means dropping a trigger first,
 * which changes it). Each append also checks the entry it extends and the
 * newest head record. A trail that fails any of these is not extended:
 * {@link appendAudit} throws `AuditIntegrityError` (`audit_integrity`),
 * naming the entry and `trace audit verify`. A privileged action fails
 * closed: when its entry cannot be written it is refused (that error, or
 * {@link AuditUnavailableError} when the database cannot write), and the
 * caller answers nothing of what the action found.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { canonicalJson } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { StorageError, TraceError } from "../errors.ts";
import { GENESIS, payloadDigest } from "../ledger/chain.ts";
import {
  auditChain,
  type AuditExecutor,
  auditRowProblem,
} from "./_audit_chain.ts";
import { unextendable } from "./audit_integrity.ts";
import { verifyAuditIn } from "./audit_verify.ts";
import type { Action } from "./permissions.ts";
import type { AuthMethod, Role, TenantScope } from "./roles.ts";
import {
  subjectDigest,
  subjectKeyFingerprint,
  subjectKeyFor,
} from "./subject_digest.ts";

/**
 * How an audited action ended. `attempted` is written before an action
 * that changes something (an erasure), so it is never run unaudited; its
 * outcome follows in a second entry.
 */
export const AUDIT_OUTCOMES = [
  "attempted",
  "succeeded",
  "refused",
  "failed",
] as const;
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

/** The database would not take the entry (a trail that does not verify is an `AuditIntegrityError`): the action it guards is refused. */
export class AuditUnavailableError extends StorageError {
  constructor(detail: string, options?: ErrorOptions) {
    super(`Cannot write the audit trail: ${detail}`, options);
    this.name = "AuditUnavailableError";
  }
}

const DIGESTED: readonly ("event_id" | "thread_id" | "memory_id")[] = [
  "event_id",
  "thread_id",
  "memory_id",
];

/**
 * Appends one entry. With `write`, runs it in the same transaction, once
 * the trail has verified and before the entry is written, so the record and
 * what it describes are committed together or not at all.
 * An error of `write` is the action's own and is thrown as it is (the
 * caller records that failure); a trail that does not verify is an
 * `AuditIntegrityError`, any other error writing the entry an
 * {@link AuditUnavailableError}.
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
    // The trail is verified before `write` runs: a broken trail takes no
    // write, and the write's own rows (a draft, the subject key it may
    // make) are not yet there to be taken for what an emptied trail left.
    const schema = await schemaVersion(tx);
    await requireVerified(tx, VERIFIED.get(db), schema);
    if (write) {
      try {
        await write(tx);
      } catch (error) {
        throw new ActionFailed(error);
      }
    }
    const entry = await insertEntry(tx, record);
    await tx.commit();
    VERIFIED.set(db, {
      seq: entry.seq,
      chain_digest: entry.chain_digest,
      schema,
    });
    return entry;
  } catch (error) {
    await tx.rollback().catch(() => {});
    if (error instanceof ActionFailed) throw error.cause;
    if (error instanceof TraceError && !(error instanceof StorageError)) {
      throw error;
    }
    if (error instanceof AuditUnavailableError) throw error;
    throw new AuditUnavailableError((error as Error).message, { cause: error });
  } finally {
    tx.close();
  }
}

/** Carries an error of the audited write past the audit's own error handling. */
class ActionFailed {
  constructor(readonly cause: unknown) {}
}

/** What a handle verified last: the entry it wrote, and the schema version then. */
interface Verified {
  seq: number;
  chain_digest: string;
  schema: number;
}

const VERIFIED = new WeakMap<TraceDb, Verified>();

/** Writes the entry and its head record onto a trail {@link requireVerified} passed. */
async function insertEntry(
  tx: Transaction,
  record: AuditRecord,
): Promise<AuditEntry> {
  const key = await subjectKeyFor(tx);
  const prev = await intactTail(tx, subjectKeyFingerprint(key));
  const entryId = `audit-${crypto.randomUUID()}`;
  const createdAt = new Date().toISOString();
  const payload = auditPayload(record, key, entryId, createdAt);
  const text = canonicalJson(payload);
  const digest = payloadDigest(text);
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
  const entry: AuditEntry = {
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
  return entry;
}

/** The database's schema version, from its header (the same for every connection). */
async function schemaVersion(executor: AuditExecutor): Promise<number> {
  const row = (await executor.execute(
    "SELECT schema_version FROM pragma_schema_version()",
  )).rows[0];
  return Number(row?.schema_version ?? 0);
}

/**
 * The whole trail on a handle's first append or after a schema change;
 * otherwise the entry the handle wrote last, which must still be there,
 * unchanged.
 */
async function requireVerified(
  tx: Transaction,
  known: Verified | undefined,
  schema: number,
): Promise<void> {
  if (known) {
    const row = (await tx.execute({
      sql: "SELECT chain_digest FROM auth_audit WHERE seq = ?",
      args: [known.seq],
    })).rows[0];
    if (!row || String(row.chain_digest) !== known.chain_digest) {
      throw unextendable({
        seq: known.seq,
        problem: row
          ? "the entry this process appended last was changed"
          : "the entry this process appended last is gone",
      });
    }
    if (known.schema === schema) return;
  }
  const verified = await verifyAuditIn(tx);
  if (verified.broken) throw unextendable(verified.broken);
}

/**
 * The chain digest to extend: the newest entry's, once that entry checks
 * out on its own (written under the key `fingerprint` names, when it records
 * one) and the newest head record names it. A trail whose end was edited is
 * refused (the action it would record is refused with it).
 */
async function intactTail(
  tx: Transaction,
  fingerprint: string,
): Promise<string> {
  const last = (await tx.execute(
    "SELECT * FROM auth_audit ORDER BY seq DESC LIMIT 1",
  )).rows[0];
  const head = (await tx.execute(
    "SELECT entry_seq, chain_digest FROM auth_audit_head ORDER BY head_seq DESC LIMIT 1",
  )).rows[0];
  if (!last && !head) return GENESIS;
  const seq = last ? Number(last.seq) : Number(head!.entry_seq);
  const problem = !last || !head
    ? "head records and entries disagree"
    : auditRowProblem(last, String(last.prev_chain), fingerprint) ??
      (Number(head.entry_seq) !== seq ||
          String(head.chain_digest) !== String(last.chain_digest)
        ? "the newest head record names another entry"
        : null);
  if (problem) throw unextendable({ seq, problem });
  return String(last!.chain_digest);
}

/** The stored form of a record: content-free, identifying ids digested. */
function auditPayload(
  record: AuditRecord,
  key: string,
  entryId: string,
  createdAt: string,
): Record<string, unknown> {
  return {
    v: 2,
    subject_key: subjectKeyFingerprint(key),
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
