/**
 * Subject erasure as entry points use it: the index's erasure
 * (`lib/obs/maint/`) with Trace's own participants (replay drafts,
 * `erasure_drafts.ts`) and its receipt in the ledger's chain, appended
 * inside the erasure's own write transaction so that the deletes and the
 * receipt commit together or not at all. Verifying a receipt reads it
 * through the verified chain, checks that the subject given now is the one
 * it names (same key, same keyed digest), and counts what is left of the
 * subject.
 *
 * @module
 */

import type { SubjectKind as AuditSubjectKind } from "../auth/mod.ts";
import { migrate, type TraceDb } from "../db.ts";
import { RefusedError } from "../errors.ts";
import { formatHead } from "../ledger/head.ts";
import {
  appendReceiptIn,
  type ErasureReceipt,
  listReceipts,
  newReceiptId,
  readReceipt,
  receiptKeys,
  type ReceiptTrigger,
  type RecordedReceipt,
  recordedReceipt,
} from "../ledger/erasure_receipts.ts";
import type { LedgerEntry } from "../ledger/chain.ts";
import { LEDGER_MIGRATIONS } from "../ledger/schema.ts";
import { backgroundTruncation, noteCommit } from "../obs/ingest/mod.ts";
import { withOwnParticipants } from "./erasure_drafts.ts";
import {
  createSelfStagingAdapter,
  type SelfStagingAdapter,
} from "../obs/self_contract/mod.ts";
import {
  alreadyErased,
  applyErasure,
  type ApplyErasureOptions,
  eraseNow,
  ERASURE_SCOPES,
  erasureKey,
  erasureKeyId,
  type ErasureKeyState,
  erasureKeyState,
  type ErasureOptions,
  type ErasurePlan,
  erasureReachedFile,
  type ErasureRecord,
  type ErasureRemainder,
  erasureRemainder,
  type ErasureResult,
  type ErasureSubject,
  type ErasureSubjectInput,
  ErasureUnmatchedError,
  markUnreachedIn,
  nothingToApply,
  parseErasureSubject,
  planErasure,
  settleUnreached,
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
    madeWith: () => receiptKeys(db),
  });
}

/** What health says of `dataDir`'s erasure key for `db` (`lost` when missing while `db` holds receipts); reads only. */
export async function erasureKeyStateFor(
  db: TraceDb,
  dataDir: string,
): Promise<ErasureKeyState> {
  return await erasureKeyState(dataDir, () => receiptKeys(db));
}

/** Options for {@link eraseSubject} and {@link eraseSubjectNow}. */
export interface SubjectErasureOptions
  extends Omit<ApplyErasureOptions, "inTransaction"> {
  /** What started it, as the receipt records (default `operator`). */
  trigger?: ReceiptTrigger;
  /** The receipt's id (default: a fresh one); an audit hook may need it first. */
  receiptId?: string;
  /**
   * Calls the erasure off while it still can be: aborted before the commit,
   * the erasure rolls back, nothing changes and a `RefusedError` says so.
   * Once it commits it always finishes, the checkpoint that takes the
   * erased text out of the file included.
   */
  signal?: AbortSignal;
  /**
   * Called right before the commit, once nothing calls the erasure off any
   * more: from here on the receipt may exist while the erased text is
   * still in the file, until the erasure returns.
   */
  onCommit?: (receiptId: string) => void;
}

/** An applied erasure and its receipt in the ledger. */
export interface AppliedErasure {
  /** What the erasure removed, and whether the removal reached the file. */
  result: ErasureResult;
  /** Its receipt, where it sits in the ledger and the head after it. */
  receipt: RecordedReceipt;
}

/** The dry run of a subject's erasure, and the receipt that may have erased it already. */
export interface SubjectErasurePlan extends ErasurePlan {
  /**
   * When {@link nothingToApply} (event ids none of which matches), the
   * newest receipt of this same subject and scope: the ids were most likely
   * erased by it, and `trace obs erase --verify` checks it. Else `null`.
   */
  earlier_receipt_id: string | null;
}

/**
 * The dry run of an erasure (nothing changes, nothing is recorded). Event
 * ids none of which matches name the receipt that erased this same subject
 * when there is one, as the refused apply does ({@link eraseSubject}).
 */
export async function planSubjectErasure(
  db: TraceDb,
  subject: ErasureSubject,
  options: ErasureOptions,
): Promise<SubjectErasurePlan> {
  const plan = await planErasure(db, subject, {
    ...options,
    participants: withOwnParticipants(options.participants),
  });
  const earlier = nothingToApply(subject, plan.events)
    ? await receiptOfSubject(db, subject, options)
    : null;
  return { ...plan, earlier_receipt_id: earlier };
}

/**
 * Applies a reviewed erasure (refused unless `confirmation` matches) and
 * appends its receipt. Event ids none of which matches are refused
 * (`ErasureUnmatchedError`), naming the receipt that erased this same
 * subject when there is one.
 */
export async function eraseSubject(
  db: TraceDb,
  subject: ErasureSubject,
  confirmation: string,
  options: SubjectErasureOptions,
): Promise<AppliedErasure> {
  try {
    return await withReceipt(
      db,
      options,
      (apply) => applyErasure(db, subject, confirmation, apply),
    );
  } catch (error) {
    if (!(error instanceof ErasureUnmatchedError)) throw error;
    const earlier = await receiptOfSubject(db, subject, options);
    throw earlier === null
      ? error
      : alreadyErased(subject, earlier, { cause: error });
  }
}

/** The newest receipt of exactly this subject and scope, or `null` (one read of the receipts). */
async function receiptOfSubject(
  db: TraceDb,
  subject: ErasureSubject,
  options: Pick<ErasureOptions, "key" | "scope">,
): Promise<string | null> {
  const digest = subjectDigest(subject, options.key);
  const scope = options.scope ?? "all";
  // A ledger that cannot be read, or is not made yet, names no receipt.
  const receipts = await listReceipts(db).catch(() => []);
  const same = receipts.filter(({ receipt }) =>
    receipt.subject_digest === digest && receipt.scope === scope
  );
  return same.at(-1)?.receipt.receipt_id ?? null;
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
  // In a server, truncate on its checkpoint worker: a checkpoint here would
  // hold the thread that serves requests while a reader keeps the WAL.
  const background = backgroundTruncation(db);
  refuseInterrupted(options.signal);
  const applied = await run({
    ...options,
    ...(background ? { truncate: background } : {}),
    participants: withOwnParticipants(options.participants),
    // Events of others whose parent this erasure removes are marked, so
    // health does not ask for the parent to be sent again.
    markParentLinks: true,
    inTransaction: async (tx, record) => {
      const entry = await appendReceiptIn(
        db,
        tx,
        receiptOf(receiptId, trigger, record),
      );
      appended.entry = entry;
      // Until a checkpoint after the commit completes, the text is in the file.
      if (db.path !== null) {
        await markUnreachedIn(
          tx,
          receiptId,
          entry.seq,
          Date.parse(record.erased_at),
        );
      }
      if (options.signal) {
        // The statements above held the thread: let the event loop poll, so a
        // signal that arrived meanwhile is seen before the commit.
        await new Promise((resolve) => setTimeout(resolve, 0));
        await crypto.subtle.digest("SHA-256", new Uint8Array(0));
        refuseInterrupted(options.signal);
      }
      options.onCommit?.(receiptId);
    },
  });
  const entry = appended.entry!;
  if (applied.reached_file === true) {
    // A failure here only leaves the erasure reported as not in the file yet.
    await settleUnreached(db, entry.seq, { truncate: background === null })
      .catch(() => {});
  }
  // In a server, its background checkpoints take it from here (and copy
  // the settling write above).
  if (applied.reached_file !== null) noteCommit(db);
  return { result: applied, receipt: await recordedReceipt(db, entry) };
}

function refuseInterrupted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw new RefusedError(
    "Interrupted before the erasure committed: nothing was changed; run the same command again to erase",
  );
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
  /**
   * Nothing of the subject remains in the receipt's scope, and the erasure
   * reached the database file (`reached_file` is not false). `remaining`
   * counts what the erasure covered (up to its `up_to_seq`), and
   * `remaining.later_events` what was written after it: those count against
   * `clean` too, except for a propagated erasure, whose subject ends at the
   * deletion.
   */
  clean: boolean;
  /**
   * The erasure reached the database file: false while no checkpoint after
   * it has completed (the erased text may still be in `trace.db` or its
   * WAL; `trace obs erase --finish` completes it); `null` for a remote
   * database.
   */
  reached_file: boolean | null;
  /** What still matches the subject, per table, store and participant, and what came after the erasure. */
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
    participants: withOwnParticipants(options.participants),
    scope,
    upToSeq: receipt.up_to_seq,
  });
  const reached = await erasureReachedFile(db, receiptId);
  // A reviewed erasure stops where its dry run did, not where the subject
  // ends: what the user wrote since is still the user's. A propagated one
  // erases what was written before a deletion, and nothing after is part of it.
  const later = receipt.trigger === "propagation" ? 0 : remaining.later_events;
  return {
    schema: "trace.erasure-verify/1",
    receipt_id: receiptId,
    seq,
    head: formatHead(head),
    subject_matches: true,
    clean: remaining.clean && later === 0 && reached !== false,
    reached_file: reached,
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
        tombstones: false,
        trigger: "staging_adapter",
      });
    },
  });
}

/**
 * How an erasure's audit entry and receipt name the subject an audit
 * search gives (`user_id=u-42`) in one application: its keyed digest under
 * the erasure key `key`, or `null` for a kind no erasure selects by
 * (`resource_id`) or an id no subject may hold. An erasure of several event
 * ids names the whole list, so one id of it finds nothing.
 */
export function erasureDigestOf(
  subject: { kind: AuditSubjectKind; value: string },
  key: Uint8Array,
): (applicationId: string) => string | null {
  const selector = ERASURE_SELECTORS[subject.kind];
  return (applicationId) => {
    if (selector === null) return null;
    const input: ErasureSubjectInput = { application_id: applicationId };
    if (selector === "event_ids") input.event_ids = [subject.value];
    else input[selector] = subject.value;
    try {
      return subjectDigest(parseErasureSubject(input), key);
    } catch {
      // Not an id an erasure subject can hold: no erasure named it.
      return null;
    }
  };
}

/** The erasure selector each kind of audit subject is. */
const ERASURE_SELECTORS: Record<
  AuditSubjectKind,
  "user_id" | "thread_id" | "memory_id" | "event_ids" | null
> = {
  user_id: "user_id",
  thread_id: "thread_id",
  memory_id: "memory_id",
  event_id: "event_ids",
  resource_id: null,
};
