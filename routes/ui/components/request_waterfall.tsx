/**
 * A run's requests as a waterfall, one collapsible group per phase (as in
 * a trace viewer): each group's summary shows the phase's extent on the
 * run's time axis, and inside, a table row per request with its operation,
 * namespace, start, duration and outcome, and a bar on the phase's own
 * axis (a 5 ms phase next to a 3 s window would otherwise be a sliver).
 * The table is the text; the bars only repeat its numbers.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { RunPhaseSpan, RunRequest, RunRequests } from "../run_requests.ts";
import { formatDuration } from "../format.ts";
import { StatusBadge } from "./badge.tsx";
import { STACK_TABLE, stackLabel } from "./data_table.tsx";

/** Requests drawn per phase; the rest are counted. */
export const MAX_ROWS_PER_PHASE = 300;
/** Phases with at most this many requests start open. */
const OPEN_UP_TO = 20;
const BAR_WIDTH = 240;
const BAR_HEIGHT = 14;

/** The waterfall of `requests` (which has `status: "recorded"`). */
export const RequestWaterfall: FC<{ requests: RunRequests }> = (
  { requests },
) => {
  const span = Math.max(1, requests.span_ms);
  return (
    // Not `waterfall`: that class draws the inspection's bordered waterfall
    // box, which here would frame the phases' own boxes with no padding.
    <div class="request-waterfall stack">
      <p class="meta">
        {`${requests.total} request${
          requests.total === 1 ? "" : "s"
        }, ${requests.failed} failed, over ${
          formatDuration(requests.span_ms)
        }. A phase's bar places it in the whole run; request bars place each request in its phase. Start times count from the run's first event.`}
        {requests.truncated
          ? " The run has more events than one page shows; the first ones are missing here."
          : ""}
      </p>
      {requests.phases.map((phase) => PhaseGroup({ phase, span }))}
    </div>
  );
};

const PhaseGroup: FC<{ phase: RunPhaseSpan; span: number }> = (
  { phase, span },
) => {
  const end = phase.end_ms ?? lastEnd(phase);
  const shown = phase.requests.slice(0, MAX_ROWS_PER_PHASE);
  const open = phase.requests.length <= OPEN_UP_TO || phase.failed > 0;
  return (
    <details class="phase" open={open}>
      <summary>
        <span class="phase__name">{phase.name}</span>
        <span class="meta">
          {`${phase.requests.length} request${
            phase.requests.length === 1 ? "" : "s"
          }${phase.failed > 0 ? `, ${phase.failed} failed` : ""}, ${
            formatDuration(Math.max(0, end - phase.start_ms))
          }`}
        </span>
        <Bar start={phase.start_ms} end={end} span={span} kind="phase" />
      </summary>
      {phase.requests.length === 0
        ? <p class="meta">No requests in this phase.</p>
        : (
          <div class="table-wrap">
            <table class={`waterfall-table ${STACK_TABLE}`}>
              <caption class="sr-only">
                {`Requests of the ${phase.name} phase`}
              </caption>
              <thead>
                <tr>
                  <th scope="col" class="num">#</th>
                  <th scope="col">Operation</th>
                  <th scope="col">Namespace</th>
                  <th scope="col" class="num">Start</th>
                  <th scope="col" class="num">Duration</th>
                  <th scope="col">Outcome</th>
                  <th scope="col" class="waterfall-bar-col">
                    <span class="sr-only">Timeline</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((r) => (
                  <RequestRow
                    request={r}
                    origin={phase.start_ms}
                    span={Math.max(1, end - phase.start_ms)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      {phase.requests.length > shown.length
        ? (
          <p class="meta">
            {`${
              phase.requests.length - shown.length
            } more requests of this phase are not drawn; the run's events hold them all.`}
          </p>
        )
        : null}
    </details>
  );
};

const RequestRow: FC<
  { request: RunRequest; origin: number; span: number }
> = ({ request, origin, span }) => (
  <tr class={request.outcome === "ok" ? undefined : "is-failed"}>
    <th scope="row" class="num">{request.n}</th>
    <td>
      <code>{`/${request.op}`}</code>
    </td>
    <td>{request.namespace ?? ""}</td>
    <td class="num" {...stackLabel("Start")}>
      {formatDuration(request.start_ms)}
    </td>
    <td class="num" {...stackLabel("Duration")}>
      {formatDuration(request.duration_ms)}
    </td>
    <td>
      {request.outcome === "ok"
        ? "ok"
        : <StatusBadge status={request.outcome} />}
    </td>
    <td class="waterfall-bar-col">
      <Bar
        start={request.start_ms - origin}
        end={request.start_ms - origin + request.duration_ms}
        span={span}
        kind={request.outcome === "ok" ? "ok" : "error"}
      />
    </td>
  </tr>
);

const Bar: FC<
  { start: number; end: number; span: number; kind: "phase" | "ok" | "error" }
> = ({ start, end, span, kind }) => {
  const x = Math.max(0, Math.min(BAR_WIDTH, (start / span) * BAR_WIDTH));
  const width = Math.max(1.5, ((end - start) / span) * BAR_WIDTH);
  return (
    <svg
      class={`bar bar--${kind}`}
      width={BAR_WIDTH}
      height={BAR_HEIGHT}
      viewBox={`0 0 ${BAR_WIDTH} ${BAR_HEIGHT}`}
      // Stretched to its column's width where the stylesheet fixes the columns.
      preserveAspectRatio="none"
      aria-hidden="true"
    >
      <rect
        class="bar__track"
        x={0}
        y={BAR_HEIGHT / 2 - 0.5}
        width={BAR_WIDTH}
        height={1}
      />
      <rect
        class="bar__fill"
        x={x}
        y={2}
        width={Math.min(width, BAR_WIDTH - x)}
        height={BAR_HEIGHT - 4}
        rx={2}
      />
    </svg>
  );
};

function lastEnd(phase: RunPhaseSpan): number {
  return Math.max(
    phase.start_ms,
    ...phase.requests.map((r) => r.start_ms + r.duration_ms),
  );
}
