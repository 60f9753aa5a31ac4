/**
 * Saved regressions as a table: status, target, the run it was saved
 * from, its latest replay (with a link to compare the two), and a Replay
 * button for roles that may run. Three ids and a button side by side need
 * more than a laptop's width, so each id may wrap before its random suffix
 * (a target id between its words) and the button stays in sight.
 *
 * @module
 */

import type { Child } from "hono/jsx";
import {
  recurrenceSentence,
  type ReplayRecurrence,
} from "../../lib/ledger/recurrence.ts";
import type { ListedRegression } from "../../lib/runs/mod.ts";
import { asSentence } from "./components/findings_list.tsx";
import { ActionForm, type RunAction } from "./components/action_form.tsx";
import { StatusBadge } from "./components/badge.tsx";
import { type Column, DataTable } from "./components/data_table.tsx";
import { Time } from "./components/time.tsx";
import {
  idWrapClass,
  wrappingId,
  wrappingRunId,
} from "./components/wrapping_id.tsx";
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
  regressions: readonly ListedRegression[];
  now: number;
  /** The CSRF token and run action for Replay buttons; `undefined`: no buttons. */
  replay?: { csrf: string | null; run: RunAction } | undefined;
  /**
   * What a regression's latest recorded replay showed of its saved failure,
   * in a sentence (`null`: nothing to say, as after a PASS).
   */
  recurrence?: (regression: ListedRegression) => string | null;
  /** Show the target column (off on a target's own page). */
  target?: boolean;
  empty: { title: string; text: string; command?: string };
}

/**
 * The {@link RegressionTableProps.recurrence} of a page that holds, by
 * regression id, what each latest recorded replay showed of its saved failure.
 */
export function recurrenceFrom(
  latest: Readonly<Record<string, ReplayRecurrence>>,
): (regression: ListedRegression) => string | null {
  return (r) => {
    const shown = latest[r.regression_id];
    return shown ? asSentence(recurrenceSentence(shown, r.definition)) : null;
  };
}

/** Regressions with their source run and latest replay. */
export function RegressionTable(props: RegressionTableProps): Child {
  const { now, replay } = props;
  const columns: Column<ListedRegression>[] = [
    { header: "Status", cell: (r) => <StatusBadge status={r.status} /> },
    {
      header: "Regression",
      rowHeader: true,
      cell: (r) => (
        <code class="suffix-wrap">{wrappingRunId(r.regression_id)}</code>
      ),
    },
  ];
  if (props.target !== false) {
    columns.push({
      header: "Target",
      cell: (r) => (
        <a class={idWrapClass(r.target_id)} href={targetHref(r.target_id)}>
          <code>{wrappingId(r.target_id)}</code>
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
          <a class="mono suffix-wrap" href={runHref(r.source_run_id)}>
            {wrappingRunId(r.source_run_id)}
          </a>
          <span class="meta cell-note">
            saved <Time iso={r.saved_at} now={now} />
          </span>
        </>
      ),
    },
    {
      header: "Latest replay",
      cell: (r) =>
        r.unfinished_replay
          ? <UnfinishedReplayCell regression={r} now={now} />
          : r.last_run_id
          ? (
            <>
              <StatusBadge status={r.last_result ?? "unknown"} />{" "}
              <a class="mono suffix-wrap" href={runHref(r.last_run_id)}>
                {wrappingRunId(r.last_run_id)}
              </a>
              <RecurrenceNote sentence={props.recurrence?.(r) ?? null} />
              <RecordedReplayNote regression={r} now={now} />
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

/**
 * A latest replay that never finished, as the gate judges it: its state,
 * its run and what to do, then the latest replay the ledger holds.
 */
function UnfinishedReplayCell(
  { regression: r, now }: { regression: ListedRegression; now: number },
): Child {
  const replay = r.unfinished_replay!;
  return (
    <>
      <StatusBadge status={replay.running ? "running" : "interrupted"} />{" "}
      <a class="mono suffix-wrap" href={runHref(replay.run_id)}>
        {wrappingRunId(replay.run_id)}
      </a>
      <span class="meta cell-note">
        {replay.running ? "is running, started " : "did not finish, started "}
        <Time iso={replay.started_at} now={now} />
        {replay.running ? "; it has not passed yet" : (
          <>
            {"; it did not pass: remove what it left with "}
            <code>{`trace external-cleanup ${replay.run_id}`}</code>
            {", then replay again"}
          </>
        )}
      </span>
      {r.last_run_id
        ? (
          <span class="meta cell-note">
            {"latest recorded: "}
            <StatusBadge status={r.last_result ?? "unknown"} />{" "}
            <a class="mono suffix-wrap" href={runHref(r.last_run_id)}>
              {wrappingRunId(r.last_run_id)}
            </a>
          </span>
        )
        : null}
      {r.last_run_id ? <RecordedReplayNote regression={r} now={now} /> : null}
    </>
  );
}

function RecurrenceNote({ sentence }: { sentence: string | null }): Child {
  return sentence === null
    ? null
    : <span class="cell-note recurrence">{sentence}</span>;
}

/** How many replays the ledger holds, when the latest was, and the comparison link. */
function RecordedReplayNote(
  { regression: r, now }: { regression: ListedRegression; now: number },
): Child {
  return (
    <span class="meta cell-note">
      {`${r.replays} replay${r.replays === 1 ? "" : "s"}, last `}
      <Time iso={r.last_replayed_at} now={now} />
      {" · "}
      <a href={compareHref(r.source_run_id, r.last_run_id!)}>
        compare the two
      </a>
    </span>
  );
}
