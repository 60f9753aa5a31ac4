/**
 * Saved regressions as a table: status, target, the run it was saved
 * from, its latest replay (with a link to compare the two), and a Replay
 * button for roles that may run.
 *
 * @module
 */

import type { Child } from "hono/jsx";
import type { RegressionView } from "../../lib/ledger/regressions.ts";
import { ActionForm, type RunAction } from "./components/action_form.tsx";
import { StatusBadge } from "./components/badge.tsx";
import { type Column, DataTable } from "./components/data_table.tsx";
import { Time } from "./components/time.tsx";
import {
  compareHref,
  regressionReplayAction,
  runHref,
  targetHref,
} from "./links.ts";

/** Options of {@link RegressionTable}. */
export interface RegressionTableProps {
  id: string;
  caption: string;
  regressions: readonly RegressionView[];
  now: number;
  /** The CSRF token and run action for Replay buttons; `undefined`: no buttons. */
  replay?: { csrf: string | null; run: RunAction } | undefined;
  /** Show the target column (off on a target's own page). */
  target?: boolean;
  empty: { title: string; text: string; command?: string };
}

/** Regressions with their source run and latest replay. */
export function RegressionTable(props: RegressionTableProps): Child {
  const { now, replay } = props;
  const columns: Column<RegressionView>[] = [
    { header: "Status", cell: (r) => <StatusBadge status={r.status} /> },
    {
      header: "Regression",
      rowHeader: true,
      cell: (r) => <code class="nowrap">{r.regression_id}</code>,
    },
  ];
  if (props.target !== false) {
    columns.push({
      header: "Target",
      cell: (r) => (
        <a class="nowrap" href={targetHref(r.target_id)}>
          <code>{r.target_id}</code>
        </a>
      ),
    });
  }
  columns.push(
    {
      header: "Saved from",
      cell: (r) => (
        <>
          <StatusBadge status="fail" />{" "}
          <a class="mono" href={runHref(r.source_run_id)}>{r.source_run_id}</a>
          <span class="meta cell-note">
            saved <Time iso={r.saved_at} now={now} />
          </span>
        </>
      ),
    },
    {
      header: "Latest replay",
      cell: (r) =>
        r.last_run_id
          ? (
            <>
              <StatusBadge status={r.last_result ?? "unknown"} />{" "}
              <a class="mono" href={runHref(r.last_run_id)}>{r.last_run_id}</a>
              <span class="meta cell-note">
                {`${r.replays} replay${r.replays === 1 ? "" : "s"}, last `}
                <Time iso={r.last_replayed_at} now={now} />
                {" · "}
                <a href={compareHref(r.source_run_id, r.last_run_id)}>
                  compare the two
                </a>
              </span>
            </>
          )
          : <span class="meta">not replayed yet</span>,
    },
  );
  if (replay) {
    columns.push({
      header: "Action",
      cell: (r) => (
        <ActionForm
          action={regressionReplayAction(r.regression_id)}
          csrf={replay.csrf}
          run={replay.run}
          label="Replay"
          title={`Replay ${r.regression_id} with fresh synthetic data under its pinned contract`}
        />
      ),
    });
  }
  return DataTable({
    id: props.id,
    caption: props.caption,
    captionHidden: true,
    columns,
    rows: props.regressions,
    navigable: true,
    stack: true,
    empty: props.empty,
  });
}
