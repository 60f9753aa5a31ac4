/**
 * Refusals come from the use-case layer in the CLI user's words, which name
 * commands (`list them with trace external-regressions`). An assistant
 * reaches the same answers through tools, so where a command has a tool
 * twin its name is replaced by the tool's. Commands without a twin
 * (`external-register`, `external-cleanup`, the ledger's) stay: the
 * assistant can hand them to its user, who runs them in a shell.
 *
 * @module
 */

/**
 * An id as refusals give it after a command (`run-…`, `cfg-…`, `NAME`, or
 * shell-quoted), not the sentence's closing `.` or `:`; then the data
 * flags a command may carry, which mean nothing to a tool.
 */
const ID = String
  .raw`('[^']*'|[\w.:-]*\w)(?: --(?:data-dir|db) (?:'[^']*'|\S+))*`;

/** A command as refusals name it, the tool an assistant calls instead, and the argument the command's id becomes. */
const TOOL_TWINS: readonly [RegExp, string][] = [
  [
    /\btrace external-targets --all\b/g,
    "trace.external_targets with all: true",
  ],
  [/\btrace external-targets\b/g, "trace.external_targets"],
  [
    new RegExp(String.raw`\btrace external-runs --target ${ID}`, "g"),
    "trace.external_runs with target_id $1",
  ],
  [/\btrace external-runs\b/g, "trace.external_runs"],
  [/\btrace external-regressions\b/g, "trace.external_regressions"],
  [
    new RegExp(String.raw`\btrace external-run --target ${ID}`, "g"),
    "trace.external_start with target_id $1",
  ],
  [/\btrace external-run(?![\w-])/g, "trace.external_start"],
  // "see trace external-show on that run id": the tool, without an id.
  [/\btrace external-show(?= on\b)/g, "trace.external_get"],
  [
    new RegExp(String.raw`\btrace external-show ${ID}`, "g"),
    "trace.external_get with run_id $1",
  ],
  [
    new RegExp(String.raw`\btrace reference show ${ID}`, "g"),
    "trace.reference_get with run_id $1",
  ],
  [/\btrace reference run\b/g, "trace.reference_run"],
];

/** `text` with every command that has a tool twin named as that tool. */
export function toolAdvice(text: string): string {
  return TOOL_TWINS.reduce(
    (advice, [command, tool]) => advice.replace(command, tool),
    text,
  );
}
