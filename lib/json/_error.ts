/** The error type of the strict JSON parser, shared by its private parts. */

/** Why a text was refused; stable and content-free. */
export const STRICT_JSON_REASONS = [
  "empty",
  "syntax",
  "duplicate_key",
  "non_finite",
  "inexact_integer",
  "trailing_data",
  "too_deep",
  "too_many_values",
  "too_many_items",
  "not_object",
] as const;

/** One of {@link STRICT_JSON_REASONS}. */
export type StrictJsonReason = typeof STRICT_JSON_REASONS[number];

/** A 1-based line and column (in UTF-16 code units) of a text. */
export interface TextPosition {
  /** 1-based line. */
  line: number;
  /** 1-based column, in UTF-16 code units. */
  column: number;
}

/** The line and column of the UTF-16 index `offset` of `text`. */
export function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset;) {
    line++;
    lineStart = i + 1;
    i = text.indexOf("\n", lineStart);
  }
  return { line, column: offset - lineStart + 1 };
}

/** The stable {@link StrictJsonError.code} of every strict JSON refusal. */
export const STRICT_JSON_ERROR_CODE = "invalid_json";

/**
 * A text that is not strict JSON. `offset` is a UTF-16 index into it; `line`
 * and `column` say the same for people, and the message uses them.
 *
 * Its `code` is always `"invalid_json"` (stable; `reason` says which rule
 * refused the text). It stays a `SyntaxError`, not a `TraceError`: each
 * reader says what the text was (a config, a request body, an answer) and
 * throws its own error, so an uncaught one is a bug and is mapped as any
 * unexpected error is (exit 2; HTTP 500 `internal`; `--json` code `internal`).
 */
export class StrictJsonError extends SyntaxError {
  /** Always `"invalid_json"`: the same for every reason, as `name` is. */
  readonly code: typeof STRICT_JSON_ERROR_CODE = STRICT_JSON_ERROR_CODE;
  /** What was wrong. */
  readonly reason: StrictJsonReason;
  /** Where it was noticed (UTF-16 index). */
  readonly offset: number;
  /** 1-based line of {@link offset}. */
  readonly line: number;
  /** 1-based column of {@link offset} within its line. */
  readonly column: number;
  /** What was wrong, without the position. */
  readonly detail: string;
  /**
   * The repeated key of a `duplicate_key` refusal, whole, so a caller can
   * decide whether it may be shown (a key of an untrusted answer may be data).
   */
  readonly key: string | undefined;

  /** `detail` says what was wrong; `at` is where, as an offset and as a line and column. */
  constructor(
    reason: StrictJsonReason,
    detail: string,
    at: { offset: number; key?: string } & TextPosition,
  ) {
    super(
      reason === "empty"
        ? `Invalid JSON: ${detail}`
        : `Invalid JSON at line ${at.line}, column ${at.column}: ${detail}`,
    );
    this.name = "StrictJsonError";
    this.reason = reason;
    this.offset = at.offset;
    this.line = at.line;
    this.column = at.column;
    this.detail = detail;
    this.key = at.key;
  }
}

/** A count of values the parser may still build, shared across texts (e.g. NDJSON lines). */
export interface JsonBudget {
  /** Values left; the parser decrements it for every value it reads. */
  remaining: number;
  /** The budget's size, for messages. */
  readonly limit: number;
}

/** A position in the text being parsed, and the bounds that apply. */
export interface Cursor {
  readonly text: string;
  pos: number;
  /** Values that may still be built (`undefined`: unbounded). */
  readonly budget: JsonBudget | undefined;
  /** Most items of the top-level array (`Infinity`: unbounded). */
  readonly maxTopLevelItems: number;
  /** Integer literals a double cannot hold exactly: rounded (`false`), refused (`true`) or kept as `bigint`. */
  readonly exactIntegers: boolean | "bigint";
  /** Skip `//` line and block comments where whitespace may stand (config files). */
  readonly comments?: boolean;
}

/** Throws a {@link StrictJsonError} at the cursor. */
export function fail(
  cursor: Cursor,
  reason: StrictJsonReason,
  detail: string,
  key?: string,
): never {
  const at = positionOf(cursor.text, cursor.pos);
  throw new StrictJsonError(reason, detail, {
    offset: cursor.pos,
    ...at,
    ...(key === undefined ? {} : { key }),
  });
}
