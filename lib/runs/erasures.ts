/**
 * Subject erasure as entry points use it: the index's erasure
 * (`lib/obs/maint/`) and its receipt in the ledger's chain, appended inside
 * the erasure's own write transaction so that the deletes and the receipt
 * commit together or not at all. Verifying a receipt reads it through the
 * verified chain, checks that the subject given now is the one it names
 * (same key, same keyed digest), and counts what is left of the subject.
 *
 * @module
 */

import { migrate, type TraceDb } from "../db.ts";
import { RefusedError } from "../errors.ts";
import { formatHead } from "../ledger/head.ts";
import {
  appendReceiptIn,
  type ErasureReceipt,
  newReceiptId,
  readReceipt,
  receiptKeys,
  type ReceiptTrigger,
  type RecordedReceipt,
  recordedReceipt,
} from "../ledger/erasure_receipts.ts";
import type { LedgerEntry } from "../ledger/chain.ts";
import { LEDGER_MIGRATIONS } from "../ledger/schema.ts";
import {
  createSelfStagingAdapter,
  type SelfStagingAdapter,
} from "../obs/self_contract/mod.ts";
import {
  applyErasure,
  type ApplyErasureOptions,
  eraseNow,
  ERASURE_SCOPES,
  erasureKey,
  erasureKeyId,
  type ErasureOptions,
  type ErasurePlan,
  type ErasureRecord,
  type ErasureRemainder,
  erasureRemainder,
  type ErasureResult,
  type ErasureSubject,
  planErasure,
  subjectDigest,
} from "../obs/maint/mod.ts";

/** Options for {@link erasureKeyFor}. */
export interface ErasureKeyForOptions {
  /** Create the key when it is missing and `db` holds no receipt (default true); dry runs and verification pass false. */
  create?: boolean;
}

/**
 * The erasure key of `dataDir` for `db`: read from `<dataDir>/erasure.key`,
 * or created there when missing, but never while `db` holds receipts (a new
 * key would leave them unverifiable: the lost one must be restored from a
 * backup), and never when `create` is false.
 */
export async function erasureKeyFor(
  db: TraceDb,
  dataDir: string,
  options: ErasureKeyForOptions = {},
): Promise<Uint8Array> {
  return await erasureKey(dataDir, {
    create: options.create ?? true,
    madeWith: async () => {
      const { receipts, key_ids } = await receiptKeys(db);
      return { records: receipts, key_ids };
    },
  });
}

/** Options for {@link eraseSubject} and {@link eraseSubjectNow}. */
export interface SubjectErasureOptions
  extends Omit<ApplyErasureOptions, "inTransaction"> {
  /** What started it, as the receipt records (default `operator`). */
  trigger?: ReceiptTrigger;
  /** The receipt's id (default: a fresh one); an audit hook may need it first. */
  receiptId?: string;
}

/** An applied erasure and its receipt in the ledger. */
export interface AppliedErasure {
  /** What the erasure removed, and whether the removal reached the file. */
  result: ErasureResult;
  /** Its receipt, where it sits in the ledger and the head after it. */
  receipt: RecordedReceipt;
}

/** The dry run of an erasure (nothing changes, nothing is recorded). */
export async function planSubjectErasure(
  db: TraceDb,
  subject: ErasureSubject,
  options: ErasureOptions,
): Promise<ErasurePlan> {
  return await planErasure(db, subject, options);
}

/** Applies a reviewed erasure (refused unless `confirmation` matches) and appends its receipt. */
export async function eraseSubject(
  db: TraceDb,
  subject: ErasureSubject,
  confirmation: string,
  options: SubjectErasureOptions,
): Promise<AppliedErasure> {
  return await withReceipt(
    db,
    options,
    (apply) => applyErasure(db, subject, confirmation, apply),
  );
}

/** Erases without a review step and appends its receipt (propagation, the staging adapter). */
export async function eraseSubjectNow(
  db: TraceDb,
  subject: ErasureSubject,
  options: SubjectErasureOptions,
): Promise<AppliedErasure> {
  return await withReceipt(
    db,
    options,
    (apply) => eraseNow(db, subject, apply),
  );
}

async function withReceipt(
  db: TraceDb,
  options: SubjectErasureOptions,
  run: (apply: ApplyErasureOptions) => Promise<ErasureResult>,
): Promise<AppliedErasure> {
  // A writer provisions what it writes to: receipts need the ledger's tables.
  await migrate(db, LEDGER_MIGRATIONS);
  const receiptId = options.receiptId ?? newReceiptId();
  const trigger = options.trigger ?? "operator";
  const appended: { entry?: LedgerEntry } = {};
  const result = await run({
    ...options,
    inTransaction: async (tx, record) => {
      appended.entry = await appendReceiptIn(
        db,
        tx,
        receiptOf(receiptId, trigger, record),
      );
    },
  });
  return { result, receipt: await recordedReceipt(db, appended.entry!) };
}

function receiptOf(
  receiptId: string,
  trigger: ReceiptTrigger,
  record: ErasureRecord,
): ErasureReceipt {
  return {
    schema: "trace.erasure-receipt/1",
    receipt_id: receiptId,
    trigger,
    selector: record.selector,
    scope: record.scope,
    subject_digest: record.subject_digest,
    key_id: record.key_id,
    up_to_seq: record.up_to_seq,
    events: record.events,
    tables: record.tables,
    stores: record.stores,
    participants: record.participants,
    erased_at: record.erased_at,
    secure_delete: record.secure_delete,
  };
}

/** The answer of `trace obs erase --verify`. */
export interface ErasureVerification {
  /** Format identifier. */
  schema: "trace.erasure-verify/1";
  /** The receipt checked. */
  receipt_id: string;
  /** The receipt's entry in the chain. */
  seq: number;
  /** The ledger head right after it, `seq:chain_digest`. */
  head: string;
  /** The subject given now has the receipt's keyed digest. */
  subject_matches: true;
  /** Nothing matching the subject remains in the receipt's scope. */
  clean: boolean;
  /** What still matches the subject, per table, store and participant. */
  remaining: ErasureRemainder;
  /** The receipt as chained. */
  receipt: ErasureReceipt;
}

/**
 * Re-checks a receipt: refused when the subject given is not the one it
 * names (or the key is another); otherwise counts what is left.
 */
export async function verifyErasure(
  db: TraceDb,
  receiptId: string,
  subject: ErasureSubject,
  options: Pick<ErasureOptions, "key" | "participants">,
): Promise<ErasureVerification> {
  const { receipt, seq, head } = await readReceipt(db, receiptId);
  if (receipt.key_id !== erasureKeyId(options.key)) {
    throw new RefusedError(
      `Cannot verify receipt ${receiptId}: it was made with another erasure key (${receipt.key_id}); verify with the data directory whose erasure.key made it`,
    );
  }
  if (receipt.subject_digest !== subjectDigest(subject, options.key)) {
    throw new RefusedError(
      `Cannot verify receipt ${receiptId}: the subject given is not the one it names (the keyed digests differ); give the same application and selector as the erasure`,
    );
  }
  const scope = ERASURE_SCOPES.find((s) => s === receipt.scope);
  if (scope === undefined) {
    throw new RefusedError(
      `Cannot verify receipt ${receiptId}: its scope "${receipt.scope}" is not one this build knows; verify it with the build that made it`,
    );
  }
  const remaining = await erasureRemainder(db, subject, {
    ...options,
    scope,
    upToSeq: receipt.up_to_seq,
  });
  return {
    schema: "trace.erasure-verify/1",
    receipt_id: receiptId,
    seq,
    head: formatHead(head),
    subject_matches: true,
    clean: remaining.clean,
    remaining,
    receipt,
  };
}

/**
 * The staging adapter over `db`'s own index whose deletions are erasures
 * with receipts (trigger `staging_adapter`), as `trace serve
 * --staging-adapter` serves it.
 */
export function selfStagingWithReceipts(
  db: TraceDb,
  key: Uint8Array,
): SelfStagingAdapter {
  return createSelfStagingAdapter(db, {
    key,
    erase: async (subject, options) => {
      await eraseSubjectNow(db, subject, {
        key,
        tables: options.tables,
        trigger: "staging_adapter",
      });
    },
  });
}
