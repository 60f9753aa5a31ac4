/**
 * Erasure receipts: each applied erasure of the observability index appends
 * an `erasure` entry to the chain, in the same transaction as the deletes.
 * A receipt names its subject only by a keyed digest (HMAC-SHA256 with the
 * data directory's erasure key) and holds counts, never ids or text, so the
 * ledger can prove an erasure without remembering whom it concerned.
 *
 * `ledger verify` checks receipts like every entry (digests and chain) and
 * also their shape: a receipt that names a raw id instead of a digest, or
 * whose counts are not counts, is reported as broken.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import type { TraceDb } from "../db.ts";
import { NotFoundError } from "../errors.ts";
import {
  appendInTransaction,
  type LedgerEntry,
  listEntries,
  readEntry,
} from "./chain.ts";
import { headAfter, type LedgerHead } from "./head.ts";
import {
  type ErasureReceipt,
  KEY_ID,
  RECEIPT_ID,
  receiptProblem,
} from "./_receipt_shape.ts";

export {
  type ErasureReceipt,
  RECEIPT_SCHEMA,
  RECEIPT_TRIGGERS,
  receiptProblem,
  type ReceiptTrigger,
} from "./_receipt_shape.ts";
import { quoteValue } from "../echo.ts";

/** A receipt and where it sits in the ledger. */
export interface RecordedReceipt {
  /** The receipt as chained. */
  receipt: ErasureReceipt;
  /** Its entry number in the ledger. */
  seq: number;
  /** The ledger's head right after the receipt. */
  head: LedgerHead;
}

/** A fresh receipt id such as `erasure-20261129T214455Z-3f9a1c07b2e4`. */
export function newReceiptId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const random = Array.from(
    crypto.getRandomValues(new Uint8Array(6)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  return `erasure-${stamp}-${random}`;
}

/** True when `id` has the form of a receipt id. */
export function isReceiptId(id: string): boolean {
  return RECEIPT_ID.test(id);
}

/**
 * Appends `receipt` inside the erasure's own write transaction on `db`, so
 * the deletes and their receipt commit together or not at all.
 */
export async function appendReceiptIn(
  db: TraceDb,
  tx: Transaction,
  receipt: ErasureReceipt,
): Promise<LedgerEntry> {
  const problem = receiptProblem(receipt);
  if (problem) throw new TypeError(`Invalid erasure receipt: ${problem}`);
  const [entry] = await appendInTransaction(db, tx, [{
    kind: "erasure",
    entityId: receipt.receipt_id,
    targetId: null,
    payload: receipt,
  }]);
  return entry!;
}

/** The receipt with its position, after the transaction that appended `entry` committed. */
export async function recordedReceipt(
  db: TraceDb,
  entry: LedgerEntry,
): Promise<RecordedReceipt> {
  return {
    receipt: JSON.parse(entry.payload) as ErasureReceipt,
    seq: entry.seq,
    head: await headAfter(db, entry),
  };
}

/** Reads one receipt, verified against the chain; `NotFoundError` when there is none. */
export async function readReceipt(
  db: TraceDb,
  receiptId: string,
): Promise<RecordedReceipt> {
  const entry = await readEntry(db, "erasure", receiptId);
  if (!entry) {
    throw new NotFoundError(
      `No erasure receipt ${
        quoteValue(receiptId)
      } in the ledger; list receipts with trace obs erase --receipts`,
    );
  }
  return await recordedReceipt(db, entry);
}

/** Every receipt, oldest first. */
export async function listReceipts(db: TraceDb): Promise<RecordedReceipt[]> {
  const entries = await listEntries(db, "erasure");
  const receipts: RecordedReceipt[] = [];
  for (const entry of entries) receipts.push(await recordedReceipt(db, entry));
  return receipts;
}

/** The erasure keys the ledger's receipts were made with (the shape the key check reads). */
export interface ReceiptKeys {
  /** Receipts in the ledger. */
  records: number;
  /** The key ids they name, most used first (one that is not a key id is left out). */
  key_ids: string[];
}

/**
 * Which keys the ledger's receipts were made with: what a new erasure key
 * would leave unverifiable. Reads the payloads without walking the chain
 * (that receipts exist is what matters here; `ledger verify` checks them);
 * none when the database has no ledger yet.
 */
export async function receiptKeys(db: TraceDb): Promise<ReceiptKeys> {
  const table = await db.client.execute(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_entries'",
  );
  if (table.rows.length === 0) return { records: 0, key_ids: [] };
  const result = await db.client.execute(
    `SELECT CASE WHEN json_valid(payload) THEN json_extract(payload, '$.key_id') END AS key_id,
            COUNT(*) AS n
       FROM ledger_entries WHERE kind = 'erasure'
       GROUP BY 1 ORDER BY n DESC, 1`,
  );
  let receipts = 0;
  const keyIds: string[] = [];
  for (const row of result.rows) {
    receipts += Number(row.n);
    const id = row.key_id;
    if (typeof id === "string" && KEY_ID.test(id)) keyIds.push(id);
  }
  return { records: receipts, key_ids: keyIds };
}
