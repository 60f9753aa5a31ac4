/**
 * Reading the audit trail. Like the ledger's readers, {@link listAudit}
 * verifies the whole trail first, in the same snapshot as the rows it
 * returns, and refuses a trail `trace audit verify` calls broken: a forged
 * operator, action or outcome column is never listed or filtered on.
 *
 * A subject is found by its keyed digest under the trail's own key; an
 * erasure entry (`subject.erase`) names its subject the way the erasure's
 * receipt does, by its digest under the data directory's erasure key, over
 * the application and the selector. So those are found by that digest,
 * computed by the caller for each application an erasure entry names.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import type { TraceDb } from "../db.ts";
import { auditRowProblem, parsePayload } from "./_audit_chain.ts";
import type { AuditEntry } from "./audit.ts";
import { AuditIntegrityError, brokenAudit } from "./audit_integrity.ts";
import { verifyAuditIn } from "./audit_verify.ts";
import { ERASURE_AUDIT_ACTION } from "./erasure_detail.ts";
import {
  requireSubjectKey,
  subjectDigest,
  type SubjectKind,
} from "./subject_digest.ts";

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
  /**
   * How erasure entries name `subject` in an application: its digest under
   * the erasure key, or `null` when no erasure names it so. Without it,
   * erasure entries are found only by what they name under the trail's key.
   */
  erasureDigest?: (applicationId: string) => string | null;
}

/** The newest entries of a verified trail; throws `AuditIntegrityError` when the trail is broken (or its subject key is missing). */
export async function listAudit(
  db: TraceDb,
  options: AuditListOptions = {},
): Promise<AuditEntry[]> {
  const tx = await db.client.transaction("deferred");
  try {
    const verified = await verifyAuditIn(tx);
    if (verified.broken) throw brokenAudit(verified.broken);
    return await selectEntries(tx, options);
  } finally {
    tx.close();
  }
}

async function selectEntries(
  executor: Transaction,
  options: AuditListOptions,
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
    // No key with no entries: nothing was recorded yet. A key missing beside
    // entries was refused by the verification above, never read as "no match".
    const key = await requireSubjectKey(executor);
    if (key === null) return [];
    const { kind, value } = options.subject;
    const erased = await erasureNames(executor, options.erasureDigest);
    where.push(`(${
      [
        "instr(payload, ?) > 0",
        ...erased.map(() =>
          `(action = '${ERASURE_AUDIT_ACTION}' AND instr(payload, ?) > 0)`
        ),
      ].join(" OR ")
    })`);
    args.push(JSON.stringify(subjectDigest(key, kind, value)), ...erased);
  }
  const result = await executor.execute({
    sql: `SELECT * FROM auth_audit ${
      where.length ? `WHERE ${where.join(" AND ")}` : ""
    } ORDER BY seq DESC LIMIT ?`,
    args: [...args, options.limit ?? 50],
  });
  return result.rows.map((row) => checkedEntry(row));
}

/** The subject's erasure digests, one per application an erasure entry names. */
async function erasureNames(
  executor: Transaction,
  digestIn: AuditListOptions["erasureDigest"],
): Promise<string[]> {
  if (!digestIn) return [];
  const result = await executor.execute({
    sql:
      `SELECT DISTINCT json_extract(payload, '$.targets.application_id') AS app
          FROM auth_audit WHERE action = ?`,
    args: [ERASURE_AUDIT_ACTION],
  });
  const names: string[] = [];
  for (const row of result.rows) {
    if (typeof row.app !== "string") continue;
    const digest = digestIn(row.app);
    if (digest !== null) names.push(digest);
  }
  return names;
}

/** A row as an entry, checked again on its own (it was verified in this snapshot). */
function checkedEntry(row: Record<string, unknown>): AuditEntry {
  const seq = Number(row.seq);
  const problem = auditRowProblem(row, String(row.prev_chain));
  const payload = parsePayload(String(row.payload));
  if (problem || !payload) {
    throw new AuditIntegrityError(
      seq,
      `The audit entry at seq ${seq} was changed after it was written: run trace audit verify`,
    );
  }
  return {
    seq,
    entry_id: String(row.entry_id),
    created_at: String(row.created_at),
    operator: String(row.operator),
    action: String(row.action),
    outcome: String(row.outcome),
    payload,
    payload_digest: String(row.payload_digest),
    chain_digest: String(row.chain_digest),
  };
}
