/**
 * JUnit XML for CI systems: one test case per assertion family. FAIL is a
 * `<failure type="FAIL">`, INCONCLUSIVE an `<error>`, a cleanup left
 * incomplete after a failed run a `<failure type="cleanup_incomplete">`;
 * nothing is ever `<skipped>`, since an unevaluated check must not look like
 * a passing one. The run's verdict is a suite property, and so is the
 * ledger's head after the run, so a CI log keeps a copy of it.
 *
 * A run that could not start has no report; {@link renderJunitNotStarted}
 * still gives CI one test case, in error, with the reason, so a pipeline
 * shows why instead of "no test results". So does a run that started and
 * then stopped on an error before its report ({@link renderJunitUnfinished}),
 * naming its checkpoint and the command that removes what it may have left.
 *
 * @module
 */

import type { RunReport } from "../runner/report.ts";
import { type FamilyResult, familyResults } from "../runner/families.ts";

/** Escapes text for XML content and attribute values; drops characters XML 1.0 forbids. */
export function xmlEscape(text: string): string {
  return text
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** Options for {@link renderJunit}. */
export interface JunitOptions {
  /** The ledger's head after this run (`SEQ:sha256:…`), kept as a property so CI logs hold a copy; `null` when the run is not in the ledger. */
  ledgerHead?: string | null;
}

/** Renders `report` as a JUnit XML document. */
export function renderJunit(
  report: RunReport,
  options: JunitOptions = {},
): string {
  const results = familyResults(report);
  const failures =
    results.filter((r) => r.status === "fail" || r.status === "incomplete")
      .length;
  const errors = results.filter((r) => r.status === "error").length;
  const suite = `trace.deletion-contract.${report.target.id}`;
  const attrs = (pairs: [string, string | number][]) =>
    pairs.map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`).join("");
  const suiteAttrs: [string, string | number][] = [
    ["name", suite],
    ["tests", results.length],
    ["failures", failures],
    ["errors", errors],
    ["skipped", 0],
    ["time", report.timing.elapsed_seconds.toFixed(3)],
    ["timestamp", report.started_at],
  ];
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs(suiteAttrs.slice(0, 4))}>`,
    `  <testsuite${attrs(suiteAttrs)}>`,
    `    <properties>`,
    ...properties(report, options).map(([name, value]) =>
      `      <property${attrs([["name", name], ["value", value]])}/>`
    ),
    `    </properties>`,
    ...results.flatMap((result) => testcase(result, suite)),
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}

function properties(
  report: RunReport,
  options: JunitOptions,
): [string, string][] {
  const head: [string, string][] = options.ledgerHead === undefined
    ? []
    : [["ledger_head", options.ledgerHead ?? "(not recorded in the ledger)"]];
  return [
    ["run_id", report.run_id],
    ["verdict", report.verdict],
    ["state", report.state],
    ["target_id", report.target.id],
    ["base_url", report.target.base_url],
    ["protocol_revision", report.protocol.revision],
    ["config_digest", report.config_digest],
    ...head,
  ];
}

const PROBLEM_ELEMENT: Record<
  Exclude<FamilyResult["status"], "pass">,
  { element: "failure" | "error"; type: string }
> = {
  fail: { element: "failure", type: "FAIL" },
  error: { element: "error", type: "INCONCLUSIVE" },
  incomplete: { element: "failure", type: "cleanup_incomplete" },
};

function testcase(result: FamilyResult, suite: string): string[] {
  const open = `    <testcase name="${xmlEscape(result.family)}" classname="${
    xmlEscape(suite)
  }" time="0">`;
  const body: string[] = [];
  if (result.status !== "pass") {
    const { element, type } = PROBLEM_ELEMENT[result.status];
    body.push(
      `      <${element} message="${
        xmlEscape(result.problems[0] ?? "")
      }" type="${type}">${xmlEscape(result.problems.join("\n"))}</${element}>`,
    );
  }
  if (result.notes.length > 0) {
    body.push(
      `      <system-out>${xmlEscape(result.notes.join("\n"))}</system-out>`,
    );
  }
  return [open, ...body, `    </testcase>`];
}

/** Why a run did not start: the error's stable code and its one-line message. */
export interface NotStarted {
  code: string;
  message: string;
}

/** The suite a run without a report (it never started, or never finished) is reported under. */
const NOT_STARTED_SUITE = "trace.deletion-contract";

/** Renders a run that did not start as one test case in error (no verdict, nothing skipped). */
export function renderJunitNotStarted(why: NotStarted): string {
  return errorSuite("run did not start", [["state", "not_started"]], why, "");
}

/** Why a run that started stopped before its report, and what it may have left. */
export interface Unfinished extends NotStarted {
  run_id: string;
  /** The checkpoint file that lists every synthetic id the run issued. */
  checkpoint: string;
  /** The command that removes what the run may have left in the staging app. */
  cleanup_command: string;
}

/**
 * Renders a run that started and then stopped on an error before its report
 * as one test case in error: the error, then where its issued ids are
 * listed and how to remove what may remain.
 */
export function renderJunitUnfinished(why: Unfinished): string {
  return errorSuite(
    "run did not finish",
    [
      ["state", "unfinished"],
      ["run_id", why.run_id],
      ["checkpoint", why.checkpoint],
    ],
    why,
    `\nSynthetic records may remain: its checkpoint ${why.checkpoint} lists every id it issued; remove them with: ${why.cleanup_command}`,
  );
}

/** One suite of one test case in error, with `more` after the message in its body. */
function errorSuite(
  testcase: string,
  properties: [string, string][],
  why: NotStarted,
  more: string,
): string {
  const message = xmlEscape(why.message);
  const counts = `tests="1" failures="0" errors="1"`;
  const property = ([name, value]: [string, string]) =>
    `      <property name="${name}" value="${xmlEscape(value)}"/>`;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${NOT_STARTED_SUITE}" ${counts}>`,
    `  <testsuite name="${NOT_STARTED_SUITE}" ${counts} skipped="0" time="0">`,
    `    <properties>`,
    ...[...properties, ["error_code", why.code] as [string, string]].map(
      property,
    ),
    `    </properties>`,
    `    <testcase name="${testcase}" classname="${NOT_STARTED_SUITE}" time="0">`,
    `      <error message="${message}" type="${
      xmlEscape(why.code)
    }">${message}${xmlEscape(more)}</error>`,
    `    </testcase>`,
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}
