/**
 * Lists of runs as the pages show them (runs, overview, target): a table of
 * run summaries with the verdict as a badge, the run id linked, target,
 * kind, state, cleanup, duration and start time, newest first.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { RunJobs, RunSummary } from "../../lib/runs/mod.ts";
import { StatusBadge } from "./components/badge.tsx";
import { type Column, DataTable } from "./components/data_table.tsx";
import { Time } from "./components/time.tsx";
import {
  idWrapClass,
  wrappingId,
  wrappingRunId,
} from "./components/wrapping_id.tsx";
import { formatDuration } from "./format.ts";
import { runHref, targetHref } from "./links.ts";

/**
 * Runs this server's job manager holds: a job that stopped with an error
 * still has a checkpoint whose writer (this process) is alive, so the list
 * would call it running; the job knows it is not, and it never completed.
 */
export async function withJobStates(
  runs: RunSummary[],
  jobs: RunJobs | null,
): Promise<RunSummary[]> {
  if (!jobs || !runs.some((run) => run.state === "running")) return runs;
  return await Promise.all(runs.map(async (run) => {
    if (run.state !== "running") return run;
    const job = await jobs.get(run.run_id).catch(() => null);
    return job?.state === "failed"
      ? { ...run, state: "interrupted", verdict: "INCONCLUSIVE" }
      : run;
  }));
}

/** The badge word of a run in a list: its verdict (RUNNING while it runs). */
export function listStatus(run: RunSummary): string {
  return run.verdict;
}

const CLEANUP_WORD: Record<RunSummary["cleanup"], string> = {
  complete: "complete",
  incomplete: "INCOMPLETE",
  inventories_clear: "inventories clear later (retrieval not checked)",
  gone_with_demo: "gone with the in-process demo",
  unknown: "unknown",
  none: "in memory",
};

/** Columns of a run table; `target: false` drops the target column (a target's own page). */
export function runColumns(
  now: number,
  options: { target?: boolean } = {},
): Column<RunSummary>[] {
  const columns: Column<RunSummary>[] = [
    {
      header: "Verdict",
      cell: (run) => <StatusBadge status={listStatus(run)} />,
    },
    {
      header: "Run",
      rowHeader: true,
      cell: (run) => (
        <a class="mono run-id" href={runHref(run.run_id)}>
          {wrappingRunId(run.run_id)}
        </a>
      ),
    },
  ];
  if (options.target !== false) {
    columns.push({
      header: "Target",
      // A long target id (reference-trace-index-skips-previews) wraps
      // between its words: the column gives way before the table scrolls.
      cell: (run) =>
        run.kind === "reference"
          ? (
            <code class={idWrapClass(run.target_id)}>
              {wrappingId(run.target_id)}
            </code>
          )
          : (
            <a
              class={idWrapClass(run.target_id)}
              href={targetHref(run.target_id)}
            >
              <code>{wrappingId(run.target_id)}</code>
            </a>
          ),
    });
  }
  columns.push(
    { header: "Kind", cell: (run) => run.kind },
    {
      header: "State",
      cell: (run) =>
        run.state !== "completed"
          ? <strong>{run.state}</strong>
          : run.kept_in === "ledger"
          ? "completed"
          : (
            <>
              completed,{" "}
              <strong>
                {run.kept_in === "file"
                  ? "not in the ledger (report kept on disk)"
                  : "not in the ledger (report lost)"}
              </strong>
            </>
          ),
    },
    {
      header: "Cleanup",
      cell: (run) =>
        run.cleanup === "incomplete"
          ? <strong>{CLEANUP_WORD[run.cleanup]}</strong>
          : CLEANUP_WORD[run.cleanup],
    },
    {
      header: "Duration",
      numeric: true,
      cell: (run) =>
        run.duration_seconds === null
          ? "—"
          : formatDuration(run.duration_seconds * 1000),
    },
    {
      header: "Started",
      cell: (run) => <Time iso={run.started_at} now={now} />,
    },
  );
  return columns;
}

/** A table of runs with an explained empty state. */
export const RunTable: FC<{
  id: string;
  caption: string;
  runs: readonly RunSummary[];
  now: number;
  target?: boolean;
  empty: { title: string; text: string; command?: string };
}> = ({ id, caption, runs, now, target, empty }) =>
  DataTable({
    id,
    caption,
    captionHidden: true,
    columns: runColumns(now, target === false ? { target: false } : {}),
    rows: runs,
    navigable: true,
    stack: true,
    empty,
  });
