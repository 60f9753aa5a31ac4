/**
 * Keyed digests of identifying values (user, thread, memory, event and
 * resource ids) for records that must outlive an erasure: the audit trail
 * and replay drafts keep `hmac-sha256:<hex>` instead of the id, so erasing a
 * subject never needs to rewrite a chained record, and the stored digest
 * says nothing to someone without the key.
 *
 * The key is 256 random bits, made once per database (`auth_keys`). Someone
 * holding the database can still test a guessed id against a digest; that is
 * what lets `trace audit list --subject` find a subject's entries.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { createHmac } from "node:crypto";
import type { TraceDb } from "../db.ts";
import { brokenAudit, KEY_MISSING } from "./audit_integrity.ts";

/** Kinds of identifying values, each digested under its own label. */
export const SUBJECT_KINDS = [
  "user_id",
  "thread_id",
  "memory_id",
  "event_id",
  "resource_id",
] as const;
/** One of {@link SUBJECT_KINDS}. */
export type SubjectKind = typeof SUBJECT_KINDS[number];

const KEY_NAME = "subject_digest";

/**
 * Something that runs SQL: the database's client, an open transaction, or
 * the executor an erasure hands its participants.
 */
export interface SqlRunner {
  /** Runs one statement. */
  execute(
    statement: string | { sql: string; args: (string | number | null)[] },
  ): Promise<
    { rows: readonly Record<string, unknown>[]; rowsAffected: number }
  >;
}

type Executor = SqlRunner;

function executor(db: TraceDb | Executor): Executor {
  return "client" in db ? db.client : db;
}

/** The digest of `value` as a `kind`, under `key` (hex). */
export function subjectDigest(
  key: string,
  kind: SubjectKind,
  value: string,
): string {
  const mac = createHmac("sha256", key).update(`${kind}\0${value}`);
  return `hmac-sha256:${mac.digest("hex")}`;
}

// The label the key's fingerprint is an HMAC of. Subject digests always
// hold a NUL between kind and value, and this label holds none, so a
// fingerprint is never also some subject's digest.
const FINGERPRINT_LABEL = "trace audit subject key fingerprint v1";

/**
 * Names a key without revealing it: an HMAC of a fixed label under the key.
 * Chained audit entries carry it, so a key replaced later is named by
 * verification, not only a deleted one.
 */
export function subjectKeyFingerprint(key: string): string {
  const mac = createHmac("sha256", key).update(FINGERPRINT_LABEL);
  return `hmac-sha256:${mac.digest("hex")}`;
}

/**
 * Reads the key, creating it inside `tx` (a write transaction) when nothing
 * was digested yet. A key missing beside existing entries or drafts was
 * deleted: a new one would digest the same subject differently, so that is
 * refused (`audit_integrity`).
 */
export async function subjectKeyFor(tx: Transaction): Promise<string> {
  const existing = await readSubjectKey(tx);
  if (existing !== null) return existing;
  if (await digestedBefore(tx)) {
    throw brokenAudit({ seq: 1, problem: KEY_MISSING });
  }
  const secret = Array.from(
    crypto.getRandomValues(new Uint8Array(32)),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
  await tx.execute({
    sql: "INSERT INTO auth_keys (name, secret, created_at) VALUES (?, ?, ?)",
    args: [KEY_NAME, secret, new Date().toISOString()],
  });
  return secret;
}

/** Whether anything was stored under a key: an audit entry or a replay draft. */
async function digestedBefore(db: Executor): Promise<boolean> {
  const row = (await db.execute(
    `SELECT EXISTS (SELECT 1 FROM auth_audit) OR EXISTS (SELECT 1 FROM auth_replay_drafts) AS used`,
  )).rows[0];
  return Number(row?.used ?? 0) === 1;
}

/**
 * The key for a reader that matches subjects: `null` when nothing was ever
 * digested; a key missing beside entries or drafts is refused
 * (`audit_integrity`), never read as "nothing matches".
 */
export async function requireSubjectKey(
  db: TraceDb | Transaction,
): Promise<string | null> {
  const key = await readSubjectKey(db);
  if (key === null && await digestedBefore(executor(db))) {
    throw brokenAudit({ seq: 1, problem: KEY_MISSING });
  }
  return key;
}

/** The key, or `null` when nothing was ever digested in this database. */
export async function readSubjectKey(
  db: TraceDb | Executor,
): Promise<string | null> {
  const result = await executor(db).execute({
    sql: "SELECT secret FROM auth_keys WHERE name = ?",
    args: [KEY_NAME],
  });
  const row = result.rows[0];
  return row ? String(row.secret) : null;
}
