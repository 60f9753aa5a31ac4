/**
 * The chained, append-only entry log. Each row stores the SHA-256 of its
 * canonical JSON payload and a chain digest over the previous row's chain
 * digest, and every append also writes a head record, so an edited, removed
 * or truncated row is detectable by `ledger verify`.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { canonicalJson, sha256Hex } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { ConflictError, StorageError, TraceError } from "../errors.ts";

/** Kinds of ledger entries. */
export const ENTRY_KINDS = [
  "run",
  "reference_run",
  "target",
  "regression",
  "replay",
] as const;

/** One of {@link ENTRY_KINDS}. */
export type EntryKind = typeof ENTRY_KINDS[number];

/** Chain digest of the empty ledger. */
export const GENESIS = "sha256:" + "0".repeat(64);

/** A stored entry as read back. */
export interface LedgerEntry {
  seq: number;
  kind: EntryKind;
  entity_id: string;
  target_id: string | null;
  payload: string;
  payload_digest: string;
  prev_chain: string;
  chain_digest: string;
  created_at: string;
}

/** An entry to append. */
export interface NewEntry {
  kind: EntryKind;
  entityId: string;
  targetId: string | null;
  payload: unknown;
}

/** Digest of a canonical payload string. */
export function payloadDigest(payload: string): string {
  return `sha256:${sha256Hex(payload)}`;
}

/** Chain digest linking an entry to its predecessor. */
export function chainDigest(
  prev: string,
  kind: string,
  entityId: string,
  digest: string,
): string {
  return `sha256:${
    sha256Hex(
      `${prev}\n${kind}\n${entityId}\n${digest}`,
    )
  }`;
}

/** Appends one entry in a write transaction; refuses a second entry with the same kind and id. */
export async function appendEntry(
  db: TraceDb,
  kind: EntryKind,
  entityId: string,
  targetId: string | null,
  payload: unknown,
): Promise<LedgerEntry> {
  const [entry] = await appendEntries(
    db,
    () => Promise.resolve([{ kind, entityId, targetId, payload }]),
  );
  return entry!;
}

/**
 * Runs `build` inside one write transaction and appends the entries it
 * returns, so checks made by `build` and the appends are atomic with respect
 * to other processes using the same database.
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

async function insertEntry(
  tx: Transaction,
  entry: NewEntry,
): Promise<LedgerEntry> {
  const { kind, entityId, targetId } = entry;
  const text = canonicalJson(entry.payload);
  const digest = await payloadDigest(text);
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
  const prev = last.rows[0] ? String(last.rows[0].chain_digest) : GENESIS;
  const chain = await chainDigest(prev, kind, entityId, digest);
  const createdAt = new Date().toISOString();
  const inserted = await tx.execute({
    sql: `INSERT INTO ledger_entries
      (kind, entity_id, target_id, payload, payload_digest, prev_chain, chain_digest, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    args: [kind, entityId, targetId, text, digest, prev, chain, createdAt],
  });
  const seq = Number(inserted.rows[0]!.seq);
  await tx.execute({
    sql: `INSERT INTO ledger_head
      (entry_seq, entry_count, kind, entity_id, chain_digest, created_at)
      VALUES (?, (SELECT COUNT(*) FROM ledger_entries), ?, ?, ?, ?)`,
    args: [seq, kind, entityId, chain, createdAt],
  });
  return {
    seq,
    kind,
    entity_id: entityId,
    target_id: targetId,
    payload: text,
    payload_digest: digest,
    prev_chain: prev,
    chain_digest: chain,
    created_at: createdAt,
  };
}

/** Reads one entry by kind and id, or `null`. */
export async function readEntry(
  db: TraceDb | Transaction,
  kind: EntryKind,
  entityId: string,
): Promise<LedgerEntry | null> {
  const result = await executor(db).execute({
    sql: "SELECT * FROM ledger_entries WHERE kind = ? AND entity_id = ?",
    args: [kind, entityId],
  });
  const row = result.rows[0];
  return row ? toEntry(row) : null;
}

/** Reads every entry of `kind` in chain order, optionally for one target. */
export async function listEntries(
  db: TraceDb | Transaction,
  kind: EntryKind,
  targetId?: string,
): Promise<LedgerEntry[]> {
  const result = await executor(db).execute(
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
  return result.rows.map((row) => toEntry(row));
}

function executor(db: TraceDb | Transaction): Pick<Transaction, "execute"> {
  return "client" in db ? db.client : db;
}

/** Converts a result row into a {@link LedgerEntry}. */
export function toEntry(row: Record<string, unknown>): LedgerEntry {
  return {
    seq: Number(row.seq),
    kind: String(row.kind) as EntryKind,
    entity_id: String(row.entity_id),
    target_id: row.target_id === null ? null : String(row.target_id),
    payload: String(row.payload),
    payload_digest: String(row.payload_digest),
    prev_chain: String(row.prev_chain),
    chain_digest: String(row.chain_digest),
    created_at: String(row.created_at),
  };
}
