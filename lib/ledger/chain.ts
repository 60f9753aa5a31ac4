/**
 * The chained, append-only entry log. Each row stores the SHA-256 of its
 * canonical JSON payload and a chain digest over the previous row's chain
 * digest and its own columns, and every append also writes a head record, so
 * an edited, removed or truncated row is detectable by `ledger verify`.
 *
 * Chain version 1 digests cover kind, entity id and payload digest; version 2
 * (every entry written by this build) also covers target id and created_at.
 * Rows keep the version they were written with, and are verified by it.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { canonicalJson, sha256Hex } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import {
  ConflictError,
  LedgerIntegrityError,
  StorageError,
  TraceError,
} from "../errors.ts";

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

/** Chain digest versions: 1 (before target id and created_at were covered) and 2. */
export const CHAIN_VERSIONS = [1, 2] as const;

/** One of {@link CHAIN_VERSIONS}. */
export type ChainVersion = typeof CHAIN_VERSIONS[number];

/** The version new entries are chained with. */
export const CURRENT_CHAIN_VERSION: ChainVersion = 2;

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
  /** Which columns the chain digest covers (see {@link chainDigest}). */
  chain_version: number;
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

/** The columns of an entry that its chain digest covers. */
export type ChainedFields = Pick<
  LedgerEntry,
  | "chain_version"
  | "prev_chain"
  | "kind"
  | "entity_id"
  | "target_id"
  | "payload_digest"
  | "created_at"
>;

/** Chain digest linking an entry to its predecessor, by the entry's chain version. */
export function chainDigest(entry: ChainedFields): string {
  if (entry.chain_version === 1) {
    return `sha256:${
      sha256Hex(
        `${entry.prev_chain}\n${entry.kind}\n${entry.entity_id}\n${entry.payload_digest}`,
      )
    }`;
  }
  if (entry.chain_version === 2) {
    // A JSON array keeps the fields unambiguous (a null target id, newlines in ids).
    return `sha256:${
      sha256Hex(canonicalJson([
        2,
        entry.prev_chain,
        entry.kind,
        entry.entity_id,
        entry.target_id,
        entry.created_at,
        entry.payload_digest,
      ]))
    }`;
  }
  throw new RangeError(`Unknown chain version ${entry.chain_version}`);
}

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

/**
 * Reads one entry by kind and id, or `null`. Like every reader here, it
 * refuses an entry whose payload no longer matches its digest.
 */
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
  return row ? verifiedEntry(row) : null;
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
  return result.rows.map((row) => verifiedEntry(row));
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
  return result.rows.map((row) => verifiedEntry(row));
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
  return result.rows.map((row) => verifiedEntry(row));
}

/** Never presents an altered row as evidence; `ledger verify` names the damage. */
function verifiedEntry(row: Record<string, unknown>): LedgerEntry {
  const entry = toEntry(row);
  if (payloadDigest(entry.payload) !== entry.payload_digest) {
    throw new LedgerIntegrityError(
      `The ledger row of ${
        entry.kind.replace("_", " ")
      } ${entry.entity_id} (seq ${entry.seq}) was changed after it was written; run trace ledger verify`,
    );
  }
  return entry;
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
    chain_version: Number(row.chain_version ?? 1),
  };
}
