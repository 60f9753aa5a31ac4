/** Turns valibot issues into the one-line messages users see. */

import type * as v from "valibot";

/** Dotted path of an issue (`timeout_seconds.query`), or `(root)`. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  const keys = issue.path?.map((item) => String(item.key)) ?? [];
  return keys.length > 0 ? keys.join(".") : "(root)";
}

// A key that is only a name: letters, digits and underscores. Any other
// unknown key is not repeated, since it may itself be a value (an email
// address or a token pasted in the wrong place).
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** First issue as `field: message`, the form every boundary reports. */
export function describeIssues(
  issues: readonly v.BaseIssue<unknown>[],
): string {
  const first = issues[0];
  if (!first) return "invalid value";
  const keys = first.path?.map((item) => String(item.key)) ?? [];
  const key = keys.at(-1);
  if (
    first.expected === "never" && key !== undefined && !FIELD_NAME.test(key)
  ) {
    const parent = keys.slice(0, -1).join(".") || "(root)";
    return `${parent}: ${
      first.message.replace(/^unknown key/, "a key that is not a field name")
    }`;
  }
  return `${issuePath(first)}: ${first.message}`;
}

/** Message for object-schema issues: unknown key, missing key, or not an object. */
export function objectIssueMessage(hint = "") {
  return (issue: v.BaseIssue<unknown>): string => {
    if (issue.expected === "never") {
      return `unknown key; remove it${hint ? ` (${hint})` : ""}`;
    }
    if (issue.received === "undefined") return "is required";
    return "must be a JSON object";
  };
}
