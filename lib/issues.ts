/** Turns valibot issues into the one-line messages users see. */

import type * as v from "valibot";

/** Dotted path of an issue (`timeout_seconds.query`), or `(root)`. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  const keys = issue.path?.map((item) => String(item.key)) ?? [];
  return keys.length > 0 ? keys.join(".") : "(root)";
}

/** First issue as `field: message`, the form every boundary reports. */
export function describeIssues(
  issues: readonly v.BaseIssue<unknown>[],
): string {
  const first = issues[0];
  if (!first) return "invalid value";
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
