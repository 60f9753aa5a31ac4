/**
 * Event ids an erasure was given that match no event. Ids are compared
 * exactly, so a typo matches nothing; an applied erasure of such a list
 * would write a receipt of 0 events that `--verify` then passes, a typo
 * reading as a proven erasure. So an apply whose ids match nothing at all
 * is refused before anything is written, a dry run of such ids offers no
 * apply ({@link nothingToApply}, which the refusal, the CLI and the API
 * all ask) and says what to check instead ({@link nothingToApplyAdvice},
 * naming the receipt that erased this same subject when there is one, as
 * the refusal does), and one where only some match names the others in its
 * answer, as the dry run does.
 *
 * @module
 */

import { TraceError } from "../../errors.ts";
import { quoteValue } from "../../echo.ts";
import type { ErasureScope } from "./erasure_participants.ts";
import type { ErasureSubject } from "./erasure_subject.ts";

/** Most ids a refusal names (the dry run's `--json` lists them all). */
const IDS_SHOWN = 5;

/**
 * An applied erasure of event ids that match no event of the application
 * in its scope: nothing was changed and no receipt written (code
 * `erasure_unmatched`).
 */
export class ErasureUnmatchedError extends TraceError {
  /** A receipt of this very subject, when one exists: the ids were probably erased by it already. */
  readonly receiptId: string | null;

  /** `message` is one line: what was wrong and what to do. */
  constructor(
    message: string,
    details: { receiptId?: string | null } = {},
    options?: ErrorOptions,
  ) {
    super("erasure_unmatched", message, options);
    this.name = "ErasureUnmatchedError";
    this.receiptId = details.receiptId ?? null;
  }
}

/**
 * Whether an erasure of `subject` that matched `matched` events has nothing
 * to apply: a subject of event ids none of which matched. (A user, thread
 * or memory that matched nothing still applies: its receipt proves that
 * nothing was held.)
 */
export function nothingToApply(
  subject: ErasureSubject,
  matched: number,
): boolean {
  return subject.kind === "events" && matched === 0;
}

/** Options for {@link nothingToApplyAdvice}. */
export interface NothingToApplyAdviceOptions {
  /** The command that verifies the earlier receipt, as the caller can give it whole (default: its `--verify` and "the same subject"). */
  verifyCommand?: string;
  /** How many ids were listed, and how many of them an earlier erasure left a tombstone of (the dry run's `erased_event_ids`). */
  tombstoned?: { listed: number; erased: number };
}

/**
 * What a dry run says instead of how to apply it, when
 * {@link nothingToApply}: one clause, for the CLI and the API alike. With
 * `earlierReceiptId`, the receipt that erased this same subject, it names
 * that receipt and how to check it, as the refused apply does
 * ({@link alreadyErased}); without, what to check in general.
 */
export function nothingToApplyAdvice(
  earlierReceiptId: string | null,
  options: NothingToApplyAdviceOptions = {},
): string {
  if (earlierReceiptId === null) {
    const erased = options.tombstoned?.erased ?? 0;
    const listed = options.tombstoned?.listed ?? 0;
    if (erased > 0) return tombstonedAdvice(erased, listed);
    return "no event has these ids, so there is nothing to apply: check the ids (they are compared exactly: case and spaces count); if they were erased already, check that erasure with trace obs erase --verify RECEIPT_ID and the same subject (trace obs erase --receipts lists the receipts)";
  }
  return `no event has these ids any more, so there is nothing to apply: ${
    erasedAlready(earlierReceiptId)
  }; ${checkReceipt(earlierReceiptId, options.verifyCommand)}`;
}

/** {@link NothingToApplyAdviceOptions.tombstoned} for a dry run of `subject` that found `erasedIds` tombstoned. */
export function tombstonedCounts(
  subject: ErasureSubject,
  erasedIds: readonly string[] | undefined,
): { listed: number; erased: number } {
  return {
    listed: subject.kind === "events" ? subject.ids.length : 0,
    erased: erasedIds?.length ?? 0,
  };
}

/** The advice when an earlier erasure removed `erased` of the `listed` ids, by another list than this one. */
function tombstonedAdvice(erased: number, listed: number): string {
  const all = erased === listed;
  const which = all
    ? `an earlier erasure removed ${
      listed === 1
        ? "it, and the index keeps its tombstone"
        : `all ${listed}, and the index keeps a tombstone of each`
    }`
    : `an earlier erasure removed ${erased} of the ${listed} (the index keeps a tombstone of each); check the others (ids are compared exactly: case and spaces count)`;
  return `no event has ${
    all ? "these ids any more" : "these ids"
  }, so there is nothing to apply: ${which}; trace obs erase --receipts lists the receipts, and --verify checks one with the subject it erased`;
}

function erasedAlready(receiptId: string): string {
  return `receipt ${receiptId} erased this same subject already`;
}

function checkReceipt(receiptId: string, verifyCommand?: string): string {
  return `check it with ${
    verifyCommand ??
      `trace obs erase --verify ${receiptId} and the same subject`
  }`;
}

/** The listed ids no matched event has, in the subject's order. */
export function unmatchedIds(
  ids: readonly string[],
  matched: readonly { event_id: string }[],
): string[] {
  const found = new Set(matched.map((e) => e.event_id));
  return ids.filter((id) => !found.has(id));
}

/** The first ids of `ids`, quoted, and how many more: `"e-1", "e-2" and 3 more`. */
export function firstIds(ids: readonly string[]): string {
  const shown = ids.slice(0, IDS_SHOWN).map(quoteValue).join(", ");
  const more = ids.length - IDS_SHOWN;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** The refusal of an apply whose event ids matched nothing. */
export function nothingMatched(
  subject: ErasureSubject,
  scope: ErasureScope,
): ErasureUnmatchedError {
  const n = subject.ids.length;
  return new ErasureUnmatchedError(
    `Cannot erase: none of the ${n} event id(s) matches an event of application ${
      quoteValue(subject.application_id)
    } in scope ${scope} (${
      firstIds(subject.ids)
    }); nothing was changed; ids are compared exactly (case and spaces count): check them with a dry run`,
  );
}

/** The refusal of an apply whose event ids matched nothing because `receiptId` already erased this subject. */
export function alreadyErased(
  subject: ErasureSubject,
  receiptId: string,
  options?: ErrorOptions,
): ErasureUnmatchedError {
  const n = subject.ids.length;
  return new ErasureUnmatchedError(
    `Cannot erase: none of the ${n} event id(s) matches an event of application ${
      quoteValue(subject.application_id)
    } any more, and ${erasedAlready(receiptId)}; nothing was changed; ${
      checkReceipt(receiptId)
    }`,
    { receiptId },
    options,
  );
}
