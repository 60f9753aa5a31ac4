/**
 * The ledger's head: the number and chain digest of its newest entry. Kept
 * outside the database (a CI log, a ticket, another machine), it lets
 * `ledger verify --expect-head` tell whether the ledger still extends it:
 * the head table lives in the same file as what it protects, so only a copy
 * kept elsewhere catches entries removed from the end together with their
 * head records, or a whole file replaced.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { UsageError } from "../errors.ts";
import { GENESIS, type LedgerEntry } from "./_entry.ts";
import { type IntactChain, intactChain, reverifiedChain } from "./_intact.ts";
import { quoteValue } from "../echo.ts";

/** A head: entry `seq` (0 for the empty ledger) has chain digest `chain_digest`. */
export interface LedgerHead {
  /** Entries in the ledger. */
  entries: number;
  /** The newest entry's number (0 when empty). */
  seq: number;
  /** Its chain digest (the genesis digest when empty). */
  chain_digest: string;
}

/** The answer of `ledger head`. */
export interface HeadView extends LedgerHead {
  /** Format identifier. */
  schema: "trace.ledger-head/1";
  /** `seq:chain_digest`, the form `--expect-head` takes. */
  head: string;
}

const HEAD_PATTERN = /^(\d{1,15}):(sha256:[0-9a-f]{64})$/;

/** The verified head of the ledger; refuses a broken ledger like every reader. */
export async function ledgerHead(db: TraceDb): Promise<LedgerHead> {
  return headOf(await intactChain(db));
}

/**
 * The verified head for a judgement (the gate): first re-walks the chained
 * columns and links of every row this handle verified before, so an edit
 * no cheap check notices is still refused.
 */
export async function reverifiedHead(db: TraceDb): Promise<LedgerHead> {
  return headOf(await reverifiedChain(db));
}

/** The head a verified chain ends at (GENESIS for the empty ledger). */
function headOf(chain: IntactChain): LedgerHead {
  return {
    entries: chain.entries,
    seq: chain.head?.seq ?? 0,
    chain_digest: chain.head?.chain_digest ?? GENESIS,
  };
}

/** The head right after `entry` was appended (read from the head record written with it). */
export async function headAfter(
  db: TraceDb,
  entry: LedgerEntry,
): Promise<LedgerHead> {
  const row = (await db.client.execute({
    sql:
      "SELECT entry_count FROM ledger_head WHERE entry_seq = ? ORDER BY head_seq DESC LIMIT 1",
    args: [entry.seq],
  })).rows[0];
  return {
    entries: row ? Number(row.entry_count) : entry.seq,
    seq: entry.seq,
    chain_digest: entry.chain_digest,
  };
}

/** `seq:chain_digest`: how a head is printed and given back to `--expect-head`. */
export function formatHead(
  head: Pick<LedgerHead, "seq" | "chain_digest">,
): string {
  return `${head.seq}:${head.chain_digest}`;
}

/** A head as `ledger head` prints it, with its schema. */
export function headView(head: LedgerHead): HeadView {
  return { schema: "trace.ledger-head/1", ...head, head: formatHead(head) };
}

/** Parses `seq:sha256:<64 hex>` (as printed by `trace ledger head`). */
export function parseHead(text: string): LedgerHead {
  const match = HEAD_PATTERN.exec(text.trim());
  if (!match) {
    throw new UsageError(
      `Invalid head ${
        quoteValue(text)
      }: expected SEQ:sha256:<64 hex>, as printed by trace ledger head`,
    );
  }
  const seq = Number(match[1]);
  return { entries: seq, seq, chain_digest: match[2]! };
}
