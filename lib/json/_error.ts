/** The error type of the strict JSON parser, shared by its private parts. */

/** Why a text was refused; stable and content-free. */
export const STRICT_JSON_REASONS = [
  "syntax",
  "duplicate_key",
  "non_finite",
  "trailing_data",
  "too_deep",
  "not_object",
] as const;

/** One of {@link STRICT_JSON_REASONS}. */
export type StrictJsonReason = typeof STRICT_JSON_REASONS[number];

/** A text that is not strict JSON; `offset` is a UTF-16 index into it. */
export class StrictJsonError extends SyntaxError {
  /** What was wrong. */
  readonly reason: StrictJsonReason;
  /** Where it was noticed. */
  readonly offset: number;

  constructor(reason: StrictJsonReason, detail: string, offset: number) {
    super(`Invalid JSON at offset ${offset}: ${detail}`);
    this.name = "StrictJsonError";
    this.reason = reason;
    this.offset = offset;
  }
}

/** A position in the text being parsed. */
export interface Cursor {
  readonly text: string;
  pos: number;
}

/** Throws a {@link StrictJsonError} at the cursor. */
export function fail(
  cursor: Cursor,
  reason: StrictJsonReason,
  detail: string,
): never {
  throw new StrictJsonError(reason, detail, cursor.pos);
}
