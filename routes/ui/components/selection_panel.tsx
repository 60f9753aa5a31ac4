/**
 * One selection decision in full: every recorded candidate (up to 64) with
 * its rank, score, whether it was kept, and the reason, in rank order; then
 * the root's other selections as links. Rejections inside a remote provider
 * are not observed and never shown as if they were.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { SelectionCandidate, TraceEvent } from "../../../lib/obs/mod.ts";
import { plural } from "../trace_words.ts";
import { StatusBadge } from "./badge.tsx";
import { DataTable } from "./data_table.tsx";
import { EmptyState } from "./empty_state.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { KindTag, RefLabel } from "./trace_bits.tsx";

/** Most other selections linked. */
const OTHERS_SHOWN = 50;

/** Props of {@link SelectionPanel}. */
export interface SelectionPanelProps {
  /** The selection shown in full (the selected event's, else the root's first). */
  shown: TraceEvent | null;
  /** Every event of the root that recorded a selection, oldest first. */
  all: readonly TraceEvent[];
  selectHref: (eventId: string) => string;
}

function byRank(a: SelectionCandidate, b: SelectionCandidate): number {
  const ra = a.rank ?? Number.POSITIVE_INFINITY;
  const rb = b.rank ?? Number.POSITIVE_INFINITY;
  return ra - rb;
}

/** The selection panel. */
export const SelectionPanel: FC<SelectionPanelProps> = (
  { shown, all, selectHref },
) => {
  if (!shown?.selection) {
    return (
      <EmptyState title="No selection recorded">
        No event of this root records a selection decision (the{" "}
        <code>selection</code>{" "}
        field: candidates with rank, score, selected and reason). The host did
        not record one, so why a record was used or dropped is unknown here.
      </EmptyState>
    );
  }
  const selection = shown.selection;
  const candidates = [...selection.candidates].sort(byRank);
  const kept = candidates.filter((c) => c.selected).length;
  const others = all.filter((e) => e !== shown);
  return (
    <div class="stack">
      <p>
        <KindTag kind={shown.kind} /> event{" "}
        <a href={selectHref(shown.event_id)}>
          <Shown text={shown.event_id} />
        </a>: {plural(candidates.length, "candidate")}, {kept} kept
        {selection.strategy
          ? (
            <>
              , strategy <ShownCode text={selection.strategy} />
            </>
          )
          : null}
        .
        {selection.omitted_candidates
          ? ` ${selection.omitted_candidates} more candidates existed but were not recorded.`
          : ""}
      </p>
      <div class="scroll-y">
        <DataTable
          id="candidates"
          caption={`Candidates of ${shown.event_id}`}
          captionHidden
          filter
          // Not `q`, which the inspection would read as a filter of its events.
          filterParam="candidates"
          columns={[
            {
              header: "Rank",
              numeric: true,
              cell: (c) =>
                c.rank === null || c.rank === undefined ? "–" : String(c.rank),
            },
            {
              header: "Ref",
              rowHeader: true,
              cell: (c) => <RefLabel {...c.ref} />,
            },
            {
              header: "Score",
              numeric: true,
              cell: (c) =>
                c.score === null || c.score === undefined
                  ? "–"
                  : String(c.score),
            },
            {
              header: "Kept",
              cell: (c) => (
                <StatusBadge status={c.selected ? "kept" : "dropped"} />
              ),
            },
            { header: "Reason", cell: (c) => <ShownCode text={c.reason} /> },
          ]}
          rows={candidates}
        />
      </div>
      {others.length > 0
        ? (
          <details class="others">
            <summary>
              {plural(others.length, "other selection")} in this root
            </summary>
            <ul>
              {others.slice(0, OTHERS_SHOWN).map((event) => (
                <li>
                  <a href={selectHref(event.event_id)}>
                    <Shown text={event.event_id} />
                  </a>
                  {": "}
                  {plural(event.selection!.candidates.length, "candidate")},
                  {" "}
                  {event.selection!.candidates.filter((c) => c.selected).length}
                  {" "}
                  kept
                </li>
              ))}
            </ul>
          </details>
        )
        : null}
    </div>
  );
};
