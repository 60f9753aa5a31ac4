/**
 * URLs of the run pages, built in one place so pages link to each other
 * the same way everywhere (and a route can move with one edit). Query
 * values are encoded; ids are encoded as path segments.
 *
 * @module
 */

import { runRootEventId } from "../../lib/runs/mod.ts";
import { pageIdPath } from "./page_path.ts";
import { runEvidenceHref } from "./trace_params.ts";

/** `/runs/RUN_ID`. */
export function runHref(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

/** A sample of a run's timeline: the row of its sample table. */
export function sampleAnchor(index: number): string {
  return `sample-${index}`;
}

/** `/targets/TARGET_ID` (a slash after an id ending in ".json"). */
export function targetHref(targetId: string): string {
  return `/targets/${pageIdPath(targetId)}`;
}

/** `/runs?target=…&verdict=…` (only the filters given). */
export function runsHref(filters: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value !== undefined && value !== "") params.set(key, value);
  }
  const query = params.toString();
  return query ? `/runs?${query}` : "/runs";
}

/** `/compare?a=RUN_A&b=RUN_B`. */
export function compareHref(runA: string, runB: string): string {
  return `/compare?${new URLSearchParams({ a: runA, b: runB })}`;
}

/** The downloads of a run: its report and renderings; `keptIn` says where the report came from. */
export function runDownloads(
  runId: string,
  keptIn: "ledger" | "file" | "checkpoint" = "ledger",
): {
  label: string;
  href: string;
  hint: string;
}[] {
  const base = runHref(runId);
  return [
    {
      label: "Report (JSON)",
      href: `${base}/report.json`,
      hint: keptIn === "ledger"
        ? "the run's record as the ledger keeps it"
        : "the report kept on disk, not a ledger record",
    },
    {
      label: "JUnit XML",
      href: `${base}/junit.xml`,
      hint: "one test case per assertion family",
    },
    {
      label: "Summary (Markdown)",
      href: `${base}/summary.md`,
      hint: "for a CI step summary or a pull request",
    },
    {
      label: "This page (HTML)",
      href: `${base}/report.html`,
      hint: "one self-contained file: no script, no network",
    },
  ];
}

/**
 * Where a run's trace events are shown: the incident finder on the run's
 * test namespace (the thread both the runner's requests and a traced
 * application's answers carry), with the run itself selected.
 */
export function runEventsHref(runId: string, testNamespace: string): string {
  return runEvidenceHref(runId, testNamespace);
}

/** Where the form that runs the contract on a registered target posts. */
export function targetRunAction(targetId: string): string {
  // The id alone: the slash a page link adds after a ".json" id is not part of it.
  return `/targets/${encodeURIComponent(targetId)}/run`;
}

/** Where the form that replays a saved regression posts. */
export function regressionReplayAction(regressionId: string): string {
  return `/regressions/${encodeURIComponent(regressionId)}/replay`;
}

/** The application a deletion run files its own trace events under. */
export const RUN_TRACE_APPLICATION = "trace";

/**
 * The run page of a root, when the root is a deletion run's own trace
 * (application `trace`, root id = run id, root event `<run id>:run` of kind
 * `run`); `null` otherwise. The way back from a run's evidence to its page.
 */
export function runOfRoot(
  applicationId: string,
  rootTraceId: string,
  rootEvent: { event_id: string; kind: string } | null,
): string | null {
  if (applicationId !== RUN_TRACE_APPLICATION || rootEvent === null) {
    return null;
  }
  const isRun = rootEvent.kind === "run" &&
    rootEvent.event_id === runRootEventId(rootTraceId);
  return isRun ? runHref(rootTraceId) : null;
}

/** The run page of an event of a deletion run's own trace (its run id is its root id), else `null`. */
export function runOfEvent(
  event: {
    application_id: string;
    root_trace_id: string;
    run_id: string | null;
  },
): string | null {
  return event.application_id === RUN_TRACE_APPLICATION &&
      event.run_id === event.root_trace_id
    ? runHref(event.run_id)
    : null;
}
