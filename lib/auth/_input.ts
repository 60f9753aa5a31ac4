/**
 * Shared shapes of operator requests (ids, reasons, emails) and the one way
 * their validation errors are worded: a field name and a rule, never the
 * value sent (it may be an email address, a token pasted by mistake or
 * content).
 *
 * @module
 */

import * as v from "valibot";
import { ConfigError } from "../errors.ts";
import { isFieldName } from "../issues.ts";
import { UNSAFE_ID_CHAR } from "../obs/model.ts";

/**
 * True when `text` is well-formed Unicode holding none of the characters an
 * id may not hold (controls, separators, bidi formatting): each can forge a
 * line or make text display as something else where it is printed.
 */
function safeLine(text: string): boolean {
  return text.isWellFormed() && !UNSAFE_ID_CHAR.test(text);
}

/** An opaque identifier: 1 to 256 characters, no control, separator or bidi characters. */
export const OpaqueId = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(256, "must be at most 256 characters"),
  v.check(
    safeLine,
    "must not contain control characters, line separators or direction overrides",
  ),
);

// An @ in any form NFKC folds to one (full-width, small), however spaced,
// and "(at)" in brackets. A reason names a ticket or a case, so the cost of
// refusing "@oncall" is small.
const AT_SIGN = /@|[([{<]\s*at\s*[)\]}>]/i;

// Escapes a URL or a page would show as an @ (or as any character): runs of
// percent-encoded bytes, numeric character references and the named `&commat;`.
const PERCENT_RUN = /(?:%[0-9a-f]{2})+/gi;
const NUMERIC_REFERENCE = /&#(?:x([0-9a-f]{1,6})|([0-9]{1,7}));?/gi;
const COMMAT = /&commat;?/gi;
// Escapes source code and JSON write (`\u0040`, `\u{40}`, `\x40`), and
// quoted-printable runs (`=40`, `=EF=BC=A0`) inside a word, as in an address
// pasted from a mail's raw text. Outside a word (`limit=40`, `x =40`) `=` is
// left alone: it reads as an assignment there, not as an escape.
const CODE_ESCAPE =
  /\\(?:u\{([0-9a-f]{1,6})\}|u([0-9a-f]{4})|x([0-9a-f]{2}))/gi;
const QUOTED_PRINTABLE_RUN =
  /(?<=[\p{L}\p{N}_])(?:=[0-9a-f]{2})+(?=[\p{L}\p{N}_])/giu;

/** `text` with the escapes above decoded, as far as they decode. */
function decodeEscapes(text: string): string {
  return text
    .replace(PERCENT_RUN, decodeBytes)
    .replace(
      QUOTED_PRINTABLE_RUN,
      (run) => decodeBytes(run.replaceAll("=", "%")),
    )
    .replace(
      NUMERIC_REFERENCE,
      (reference, hex?: string, dec?: string) =>
        codePoint(hex ? parseInt(hex, 16) : Number(dec)) ?? reference,
    )
    .replace(
      CODE_ESCAPE,
      (escape, braced?: string, u?: string, x?: string) =>
        codePoint(parseInt(braced ?? u ?? x ?? "", 16)) ?? escape,
    )
    .replace(COMMAT, "@")
    .replace(/&amp;/gi, "&");
}

/** A run of `%XX` bytes as UTF-8 text; a run that is not UTF-8 is left as it is. */
function decodeBytes(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    return run;
  }
}

/** The character `code` names, or `null` for 0 and numbers past Unicode. */
function codePoint(code: number): string | null {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : null;
}

/**
 * Whether `text` looks like it carries an email address. Percent escapes,
 * HTML character references, code escapes and quoted-printable runs are
 * decoded (up to three rounds, for a doubly escaped `%2540`), and NFKC
 * folds compatibility forms (full-width and small `@`, full-width letters).
 * Catches `a@b.c`, `a@bc`, `a @ b.c`, `a＠b.c`, `a﹫b.c`, `a%40b.c`,
 * `a&#64;b.c`, `a&#x40;b.c`, `a&commat;b.c`, `a\u0040b.c`, `a\x40b.c`,
 * `a=40b.c`, `a(at)b.c`, `a [at] b`; does not catch an address spelled out in words
 * (`jane dot doe at example dot com`), one split by other characters, or a
 * name, phone number or user id: the reason is the operator's own text, and
 * this check only stops the obvious slip.
 */
export function mentionsEmail(text: string): boolean {
  let folded = text;
  for (let round = 0; round < 3; round++) {
    if (AT_SIGN.test(folded.normalize("NFKC"))) return true;
    const decoded = decodeEscapes(folded);
    if (decoded === folded) return false;
    folded = decoded;
  }
  return AT_SIGN.test(folded.normalize("NFKC"));
}

/** Why an operator acts: required, short, and never an email address. */
export const Reason = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(3, "must say why, in at least 3 characters"),
  v.maxLength(500, "must be at most 500 characters"),
  v.check(
    safeLine,
    "must be one line without control characters or direction overrides",
  ),
  v.check(
    (text) => !mentionsEmail(text),
    "must not contain an email address (or an @); name a ticket or case instead",
  ),
);

/**
 * What an email address must look like: one `@` between two runs without
 * blanks. Loose on purpose (the host's resolver knows its addresses, some
 * with non-ASCII local parts); the account form's `pattern` is the same.
 */
export const EMAIL_PATTERN = String.raw`[^\s@]+@[^\s@]+`;

/** An email address, held only for the length of one request. */
export const Email = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(3, "must be an email address"),
  v.maxLength(320, "must be at most 320 characters"),
  v.regex(new RegExp(`^${EMAIL_PATTERN}$`), "must be an email address"),
);

/** A field of an endpoint, or a dotted path of them: each part only a name. */
function isFieldPath(path: string): boolean {
  return path.split(".").every(isFieldName);
}

/**
 * A refused operator request: the message names the field and the rule,
 * and `field` names the field alone (for the audit trail's `detail`), or is
 * `null` when the request broke no one field (an unknown key, which may
 * itself be a value, is never named here).
 */
export class OperatorInputError extends ConfigError {
  /** The request's field that broke a rule, when it is one of the endpoint's fields. */
  readonly field: string | null;

  constructor(message: string, field: string | null) {
    super(message);
    this.name = "OperatorInputError";
    this.field = field !== null && isFieldPath(field) ? field : null;
  }
}

/**
 * `key` quoted when it reads as a field name, else "a field": any other key
 * is not repeated, since it may itself be a value (an email address or a
 * token pasted in the wrong place).
 */
export function fieldLabel(key: string): string {
  return isFieldName(key) ? JSON.stringify(key) : "a field";
}

/**
 * Parses `input` with `schema`; throws an {@link OperatorInputError} (400)
 * whose message names the field and the rule broken, never the value. An
 * unknown field is named (when its name is only a name) with the fields the
 * request takes.
 */
export function parseOperatorInput<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  what: string,
): v.InferOutput<S> {
  const parsed = v.safeParse(schema, input);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0]!;
  const field = issue.path?.map((item) => String(item.key)).join(".");
  if (issue.expected === "never") {
    const key = String(issue.path?.at(-1)?.key ?? "");
    throw new OperatorInputError(
      `Invalid ${what} request: ${
        fieldLabel(key)
      } is not a known field; remove it${allowedFields(schema)}`,
      null,
    );
  }
  let rule: string;
  if (issue.received === "undefined") rule = "is required";
  else if (!field) rule = "must be an object of fields";
  else rule = issue.message;
  throw new OperatorInputError(
    `Invalid ${what} request: ${field ?? "the body"}: ${rule}`,
    field || null,
  );
}

/** ` (fields: a, b, c)` for an object schema, else nothing. */
function allowedFields(schema: v.GenericSchema): string {
  const entries = (schema as { entries?: Record<string, unknown> }).entries;
  return entries ? ` (fields: ${Object.keys(entries).join(", ")})` : "";
}
