/**
 * `ledger verify`: recomputes every payload digest and the chain, checks the
 * head records (which catch a removed last entry) and that every registered
 * target still matches its chained registration, and, given a head recorded
 * earlier (`--expect-head`), that the ledger still extends it. Erasure
 * receipts are checked like every entry and also for their shape (a keyed
 * digest and counts only, see `erasure_receipts.ts`). Detects
 * accidental or careless edits; a head kept outside the database also
 * detects a rewritten or truncated file.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import type { LedgerHead } from "./head.ts";
import { GENESIS } from "./_entry.ts";
import { missingLedgerGuards } from "./schema.ts";
import {
  type BrokenRow,
  checkHeads,
  checkTargets,
  type Executor,
  firstBroken,
  missingTable,
  walkChain,
} from "./_walk.ts";

export type { BrokenRow } from "./_walk.ts";

/** The answer of `ledger verify`. */
export interface LedgerVerification {
  /** Format identifier. */
  schema: "trace.ledger-verify/1";
  /** True when every entry's digest and link checks out (and the expected head, when given, is still in the chain). */
  ok: boolean;
  /** Entries checked. */
  entries: number;
  /** Registered targets among them. */
  targets: number;
  /** Erasure receipts among the entries. */
  receipts: number;
  /** The latest chain digest: record it elsewhere to detect a replaced file later. */
  head: { seq: number; chain_digest: string } | null;
  /** The head given with `--expect-head`, and whether the ledger still extends it. */
  expected_head: { head: string; extended: boolean } | null;
  /** The first entry that failed a check, or `null`. */
  broken: BrokenRow | null;
  /**
   * Append-only triggers the schema should hold and does not (dropped or
   * changed with an outside tool): the tables no longer refuse UPDATE or
   * DELETE. A warning, not a break: `ok` is about the evidence.
   */
  missing_guards: string[];
}

/** Options for {@link verifyLedger}. */
export interface VerifyOptions {
  /** A head recorded earlier: the ledger must still contain it, unchanged, in its chain. */
  expectHead?: LedgerHead;
}

/**
 * Verifies the whole ledger, in one snapshot so that entries appended
 * meanwhile are not mistaken for damage; never throws for a broken row,
 * reports it.
 */
export async function verifyLedger(
  db: TraceDb,
  options: VerifyOptions = {},
): Promise<LedgerVerification> {
  const tx = await db.client.transaction("deferred");
  try {
    return await verifyIn(tx, options);
  } finally {
    tx.close();
  }
}

async function verifyIn(
  executor: Executor,
  options: VerifyOptions,
): Promise<LedgerVerification> {
  const missing_guards = await missingLedgerGuards(executor);
  const removed = await missingTable(executor);
  if (removed) {
    return { ...removedTable(removed, options.expectHead), missing_guards };
  }
  const expected = options.expectHead;
  let seen: string | null = expected?.seq === 0 ? GENESIS : null;
  let receipts = 0;
  const walked = await walkChain(executor, null, (entry) => {
    if (entry.seq === expected?.seq) seen = entry.chain_digest;
    if (entry.kind === "erasure") receipts++;
  });
  const heads = await checkHeads(executor, walked.last, walked.count);
  const targets = await checkTargets(executor);
  const extended = expected ? seen === expected.chain_digest : null;
  const broken = firstBroken(
    walked.broken,
    heads.broken,
    targets.broken,
    extended === false ? notExtended(expected!, walked.last?.seq ?? 0) : null,
  );
  return {
    schema: "trace.ledger-verify/1",
    ok: broken === null,
    entries: walked.count,
    targets: targets.count,
    receipts,
    head: walked.last
      ? { seq: walked.last.seq, chain_digest: walked.last.chain_digest }
      : null,
    expected_head: expected
      ? {
        head: `${expected.seq}:${expected.chain_digest}`,
        extended: extended!,
      }
      : null,
    broken,
    missing_guards,
  };
}

/** Nothing can be walked without the ledger's tables: the answer names the one removed. */
function removedTable(
  broken: BrokenRow,
  expected: LedgerHead | undefined,
): Omit<LedgerVerification, "missing_guards"> {
  return {
    schema: "trace.ledger-verify/1",
    ok: false,
    entries: 0,
    targets: 0,
    receipts: 0,
    head: null,
    expected_head: expected
      ? { head: `${expected.seq}:${expected.chain_digest}`, extended: false }
      : null,
    broken,
  };
}

/** An audit trail head looks like a ledger head, so a mixed-up head is named as a possible cause. */
const NOT_OURS =
  "or the head is not this ledger's: an audit trail head, or another data directory's";

function notExtended(expected: LedgerHead, lastSeq: number): BrokenRow {
  return {
    seq: expected.seq,
    kind: "(head)",
    entity_id: `${expected.seq}:${expected.chain_digest}`,
    problem: expected.seq > lastSeq
      ? `the ledger no longer extends the expected head: it ends at entry ${lastSeq} (entries were removed from its end, or the file was replaced, ${NOT_OURS})`
      : `the ledger no longer extends the expected head: entry ${expected.seq} has another chain digest (the file was rewritten or replaced, ${NOT_OURS})`,
  };
}
