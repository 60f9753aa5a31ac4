/**
 * Event ids an erasure was given that match no event. Ids are compared
 * exactly, so a typo matches nothing; an applied erasure of such a list
 * would write a receipt of 0 events that `--verify` then passes, a typo
 * reading as a proven erasure. So an apply whose ids match nothing at all
 * is refused before anything is written, and one where only some match
 * names the others in its answer, as the dry run does.
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
  /** Ids the subject listed. */
  readonly listed: number;
  /** A receipt of this very subject, when one exists: the ids were probably erased by it already. */
  readonly receiptId: string | null;

  /** `message` is one line: what was wrong and what to do. */
  constructor(
    message: string,
    details: { listed: number; receiptId?: string | null },
    options?: ErrorOptions,
  ) {
    super("erasure_unmatched", message, options);
    this.name = "ErasureUnmatchedError";
    this.listed = details.listed;
    this.receiptId = details.receiptId ?? null;
  }
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
    { listed: n },
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
    } any more, and receipt ${receiptId} erased this same subject already; nothing was changed; check it with trace obs erase --verify ${receiptId} and the same subject`,
    { listed: n, receiptId },
    options,
  );
}
