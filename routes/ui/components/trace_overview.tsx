/**
 * The finder's agent/thread overview: a closed-by-default disclosure (always
 * closed while an incident is selected, so the incident stays on the first
 * screen) holding a filterable table that scrolls inside itself, however
 * many busy threads there are.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type {
  OverviewGroup,
  TraceOverview,
} from "../../../lib/obs/query/mod.ts";
import { formatCount } from "../format.ts";
import { FIND_PATH, hrefOf, withParams } from "../trace_params.ts";
import { plural } from "../trace_words.ts";
import { DataTable } from "./data_table.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { Time } from "./time.tsx";

/** Props of {@link TraceOverviewPanel}. */
export interface OverviewProps {
  overview: TraceOverview;
  params: URLSearchParams;
  /** Open the disclosure (never while an incident is selected). */
  open: boolean;
  now: number;
}

/** The agent/thread overview of the current selection. */
export const TraceOverviewPanel: FC<OverviewProps> = (
  { overview, params, open, now },
) => {
  const counted = `${overview.events_truncated ? "the newest " : ""}${
    plural(overview.events_counted, "event")
  }`;
  const scan = overview.scan_limit
    ? ` (among the newest ${formatCount(overview.scan_limit)} of the index)`
    : "";
  return (
    <details class="overview" id="overview" open={open}>
      <summary>
        Agents and threads: {plural(overview.groups.length, "group")}
        {overview.groups_truncated ? " (the first 1,000)" : ""}, counted over
        {" "}
        {counted}
        {scan}
      </summary>
      <p class="meta">
        Counted separately from the results above, which read their own window
        of events. Choose a group to narrow the finder to it.
      </p>
      <div class="overview__table">
        <DataTable
          id="overview-table"
          caption="Agents and threads"
          captionHidden
          filter
          filterNoun="agent or thread"
          // Not `q`, the finder's own search for an exact id.
          filterParam="groups"
          navigable
          columns={[
            {
              header: "Agent or memory",
              rowHeader: true,
              cell: (g) => actor(g),
            },
            {
              header: "Thread",
              cell: (g) =>
                g.thread_id === null
                  ? <span class="meta">no thread</span>
                  : (
                    <a href={narrowTo(params, g)}>
                      <Shown text={g.thread_id} />
                    </a>
                  ),
            },
            {
              header: "Events",
              numeric: true,
              cell: (g) => formatCount(g.events),
            },
            {
              header: "Errors",
              numeric: true,
              cell: (g) => formatCount(g.errors),
            },
            {
              header: "Latest",
              cell: (g) => <Time iso={g.last_ts} now={now} />,
            },
          ]}
          rows={overview.groups}
          empty={{
            title: "Nothing to count",
            text: "No event matches the current filters.",
          }}
        />
      </div>
    </details>
  );
};

function actor(group: OverviewGroup) {
  if (group.agent_id !== null) return <ShownCode text={group.agent_id} />;
  if (group.memory_id !== null) {
    return (
      <>
        memory <ShownCode text={group.memory_id} />
      </>
    );
  }
  return <span class="meta">none</span>;
}

function narrowTo(params: URLSearchParams, group: OverviewGroup): string {
  return hrefOf(
    FIND_PATH,
    withParams(params, {
      cursor: null,
      thread_id: group.thread_id,
      agent_id: group.agent_id,
      memory_id: group.agent_id === null ? group.memory_id : null,
    }),
  );
}
