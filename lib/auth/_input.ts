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

// deno-lint-ignore no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]+$/;
const EMAIL_LIKE = /[^\s@]+@[^\s@]+\.[^\s@]+/;

/** An opaque identifier: 1 to 256 characters, no control characters. */
export const OpaqueId = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(256, "must be at most 256 characters"),
  v.regex(NO_CONTROL, "must not contain control characters"),
);

/** Why an operator acts: required, short, and never an email address. */
export const Reason = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(3, "must say why, in at least 3 characters"),
  v.maxLength(500, "must be at most 500 characters"),
  v.regex(NO_CONTROL, "must be one line without control characters"),
  v.check(
    (text) => !EMAIL_LIKE.test(text),
    "must not contain an email address; name a ticket or case instead",
  ),
);

/** An email address, held only for the length of one request. */
export const Email = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(3, "must be an email address"),
  v.maxLength(320, "must be at most 320 characters"),
  v.regex(/^[^\s@]+@[^\s@]+$/, "must be an email address"),
);

/**
 * Parses `input` with `schema`; throws a `ConfigError` (400) whose message
 * names the field and the rule broken, never the value.
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
  let rule: string;
  if (issue.expected === "never") rule = "unknown field; remove it";
  else if (issue.received === "undefined") rule = "is required";
  else if (!field) rule = "must be an object of fields";
  else rule = issue.message;
  // An unknown field's name is not repeated: it may itself carry a value.
  const named = issue.expected === "never" ? "a field" : field ?? "the body";
  throw new ConfigError(`Invalid ${what} request: ${named}: ${rule}`);
}
