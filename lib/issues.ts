/** Turns valibot issues into the one-line messages users see. */

import type * as v from "valibot";

// A key that is only a name: letters, digits and underscores. Any other
// unknown key is not repeated, since it may itself be a value (an email
// address or a token pasted in the wrong place).
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
// A key a path may show: a name as attribute keys spell them
// (`gen_ai.operation.name`, `app:tier`) or an array index.
const PATH_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;
const HIDDEN_KEY = "(a key that is not a name)";

/** Whether `key` reads as a plain field name, which a message may repeat without repeating a value. */
export function isFieldName(key: string): boolean {
  return FIELD_NAME.test(key);
}

/**
 * Where an issue is and what it says, repeating no key that may be a value:
 * an unknown key is named only when it is a plain field name (else the
 * issue is placed at its parent), and a path shows only keys that read as
 * names.
 */
export function issueParts(
  issue: v.BaseIssue<unknown>,
  style: PathStyle = "dotted",
): { field: string; message: string } {
  const items = issue.path ?? [];
  const keys = items.map((item) => String(item.key));
  const key = keys.at(-1);
  const path = (list: string[]) =>
    list.map((k, i) => {
      const shown = PATH_KEY.test(k) ? k : HIDDEN_KEY;
      if (i === 0) return shown;
      return style === "indexed" && items[i]!.type === "array"
        ? `[${shown}]`
        : `.${shown}`;
    }).join("") || "(root)";
  if (
    issue.expected === "never" && key !== undefined && !isFieldName(key)
  ) {
    return {
      field: path(keys.slice(0, -1)),
      message: issue.message.replace(
        /^unknown key/,
        "a key that is not a field name",
      ),
    };
  }
  return { field: path(keys), message: issue.message };
}

/**
 * How a path shows an array index: `spans.0.name` (the form Trace's own
 * inputs use) or `spans[0].name` (OTLP's, as its decoder names the fields
 * it checks itself).
 */
export type PathStyle = "dotted" | "indexed";

/** First issue as `field: message`, the form every boundary reports. */
export function describeIssues(
  issues: readonly v.BaseIssue<unknown>[],
  style: PathStyle = "dotted",
): string {
  const first = issues[0];
  if (!first) return "invalid value";
  const { field, message } = issueParts(first, style);
  return `${field}: ${message}`;
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
