/**
 * The chained, append-only entry log. Each row stores the SHA-256 of its
 * canonical JSON payload and a chain digest over the previous row's chain
 * digest and its own columns, and every append also writes a head record, so
 * an edited, removed or truncated row is detectable by `ledger verify`.
 *
 * Every reader here checks what it returns against the verified chain
 * (`_intact.ts`), and every append first verifies the chain it extends: a
 * broken ledger is refused, never presented or extended.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { canonicalJson } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { ConflictError, StorageError, TraceError } from "../errors.ts";
import {
  chainDigest,
  type ChainedFields,
  CURRENT_CHAIN_VERSION,
  type EntryKind,
  GENESIS,
  type LedgerEntry,
  type NewEntry,
  payloadDigest,
} from "./_entry.ts";
import {
  bindTransaction,
  intactChain,
  type LedgerSource,
  verifiedEntries,
} from "./_intact.ts";

export {
  CHAIN_VERSIONS,
  chainDigest,
  type ChainedFields,
  type ChainVersion,
  CURRENT_CHAIN_VERSION,
  ENTRY_KINDS,
  type EntryKind,
  GENESIS,
  type LedgerEntry,
  type NewEntry,
  payloadDigest,
  toEntry,
} from "./_entry.ts";
export { brokenLedger, intactChain, type LedgerSource } from "./_intact.ts";

/** Appends one entry in a write transaction; refuses a second entry with the same kind and id. */
export async function appendEntry(
  db: TraceDb,
  entry: NewEntry,
): Promise<LedgerEntry> {
  const [appended] = await appendEntries(
    db,
    () => Promise.resolve([entry]),
  );
  return appended!;
}

/**
 * Runs `build` inside one write transaction and appends the entries it
 * returns, so checks made by `build` and the appends are atomic with respect
 * to other processes using the same database. The chain is verified inside
 * the transaction first, and readers given `tx` inside `build` read through
 * that verification.
 */
export async function appendEntries(
  db: TraceDb,
  build: (tx: Transaction) => Promise<NewEntry[]>,
): Promise<LedgerEntry[]> {
  let tx: Transaction;
  try {
    tx = await db.client.transaction("write");
  } catch (error) {
    throw new StorageError(
      `Cannot write to the ledger: ${(error as Error).message}`,
      { cause: error },
    );
  }
  try {
    bindTransaction(tx, db);
    await intactChain(tx);
    const entries = await build(tx);
    const appended: LedgerEntry[] = [];
    for (const entry of entries) appended.push(await insertEntry(tx, entry));
    await tx.commit();
    return appended;
  } catch (error) {
    await tx.rollback().catch(() => {});
    if (error instanceof TraceError) throw error;
    throw new StorageError(
      `Cannot append to the ledger: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    tx.close();
  }
}

/**
 * Appends `entries` inside a write transaction the caller opened on `db`
 * (another component's write that must commit with its ledger record, as
 * an erasure and its receipt do). Verifies the chain inside `tx` first; the
 * caller commits or rolls back.
 */
export async function appendInTransaction(
  db: TraceDb,
  tx: Transaction,
  entries: readonly NewEntry[],
): Promise<LedgerEntry[]> {
  bindTransaction(tx, db);
  await intactChain(tx);
  const appended: LedgerEntry[] = [];
  for (const entry of entries) appended.push(await insertEntry(tx, entry));
  return appended;
}

async function insertEntry(
  tx: Transaction,
  entry: NewEntry,
): Promise<LedgerEntry> {
  const { kind, entityId, targetId } = entry;
  const text = canonicalJson(entry.payload);
  const digest = payloadDigest(text);
  const existing = await tx.execute({
    sql: "SELECT 1 FROM ledger_entries WHERE kind = ? AND entity_id = ?",
    args: [kind, entityId],
  });
  if (existing.rows.length > 0) {
    throw new ConflictError(
      `Cannot append ${kind} "${entityId}": it is already in the ledger`,
    );
  }
  const last = await tx.execute(
    "SELECT chain_digest FROM ledger_entries ORDER BY seq DESC LIMIT 1",
  );
  const fields: ChainedFields = {
    chain_version: CURRENT_CHAIN_VERSION,
    prev_chain: last.rows[0] ? String(last.rows[0].chain_digest) : GENESIS,
    kind,
    entity_id: entityId,
    target_id: targetId,
    payload_digest: digest,
    created_at: new Date().toISOString(),
  };
  const chain = chainDigest(fields);
  const inserted = await tx.execute({
    sql: `INSERT INTO ledger_entries
      (kind, entity_id, target_id, payload, payload_digest, prev_chain, chain_digest, created_at, chain_version)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    args: [
      kind,
      entityId,
      targetId,
      text,
      digest,
      fields.prev_chain,
      chain,
      fields.created_at,
      fields.chain_version,
    ],
  });
  const seq = Number(inserted.rows[0]!.seq);
  await tx.execute({
    sql: `INSERT INTO ledger_head
      (entry_seq, entry_count, kind, entity_id, chain_digest, created_at)
      VALUES (?, (SELECT COUNT(*) FROM ledger_entries), ?, ?, ?, ?)`,
    args: [seq, kind, entityId, chain, fields.created_at],
  });
  return { ...fields, seq, payload: text, chain_digest: chain };
}

/** Reads one entry by kind and id, or `null`; refuses it unless the chain vouches for it. */
export async function readEntry(
  source: LedgerSource,
  kind: EntryKind,
  entityId: string,
): Promise<LedgerEntry | null> {
  const result = await executor(source).execute({
    sql: "SELECT * FROM ledger_entries WHERE kind = ? AND entity_id = ?",
    args: [kind, entityId],
  });
  const [entry] = await verifiedEntries(source, result.rows);
  return entry ?? null;
}

/** Reads every entry of `kind` in chain order, optionally for one target. */
export async function listEntries(
  source: LedgerSource,
  kind: EntryKind,
  targetId?: string,
): Promise<LedgerEntry[]> {
  const result = await executor(source).execute(
    targetId === undefined
      ? {
        sql: "SELECT * FROM ledger_entries WHERE kind = ? ORDER BY seq",
        args: [kind],
      }
      : {
        sql:
          "SELECT * FROM ledger_entries WHERE kind = ? AND target_id = ? ORDER BY seq",
        args: [kind, targetId],
      },
  );
  return await verifiedEntries(source, result.rows);
}

/** Options for {@link listNewestEntries}. */
export interface NewestEntriesOptions {
  /** Only entries filed under this target id. */
  targetId?: string;
  /** At most this many. */
  limit: number;
}

/** The newest entries of `kind`, newest first. */
export async function listNewestEntries(
  db: TraceDb,
  kind: EntryKind,
  options: NewestEntriesOptions,
): Promise<LedgerEntry[]> {
  const result = await db.client.execute(
    options.targetId === undefined
      ? {
        sql:
          "SELECT * FROM ledger_entries WHERE kind = ? ORDER BY seq DESC LIMIT ?",
        args: [kind, options.limit],
      }
      : {
        sql:
          "SELECT * FROM ledger_entries WHERE kind = ? AND target_id = ? ORDER BY seq DESC LIMIT ?",
        args: [kind, options.targetId, options.limit],
      },
  );
  return await verifiedEntries(db, result.rows);
}

/** The newest entry of `kind` for each target id, in chain order. */
export async function latestEntryPerTarget(
  db: TraceDb,
  kind: EntryKind,
): Promise<LedgerEntry[]> {
  const result = await db.client.execute({
    sql: `SELECT * FROM ledger_entries WHERE seq IN (
        SELECT MAX(seq) FROM ledger_entries WHERE kind = ? GROUP BY target_id
      ) ORDER BY seq`,
    args: [kind],
  });
  return await verifiedEntries(db, result.rows);
}

/** Runs SQL on a handle or an open transaction. */
export function executor(
  source: LedgerSource,
): Pick<Transaction, "execute"> {
  return "client" in source ? source.client : source;
}
