/**
 * The memory lineage of a root in four lanes: refs expected, retrieved,
 * supplied to the model and bound to the output, each with the events that
 * placed it there, then the candidates a selection dropped. Only explicit
 * refs count; an empty lane says which field would fill it and that the host
 * did not record it.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { ActionCapability } from "../../../lib/auth/mod.ts";
import {
  type Lineage,
  LINEAGE_LANES,
  type LineageLane,
} from "../../../lib/obs/query/mod.ts";
import { plural } from "../trace_words.ts";
import { DataTable } from "./data_table.tsx";
import { EmptyState } from "./empty_state.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { ArtifactLookup, CapabilityNote } from "./operator_controls.tsx";
import { RefLabel } from "./trace_bits.tsx";

/** What each lane is called. */
export const LANE_TITLES: Readonly<Record<LineageLane, string>> = {
  expected: "Expected",
  retrieved: "Retrieved",
  supplied: "Supplied",
  output_bound: "Output-bound",
};

/** What fills each lane, for its empty state. */
export const LANE_FIELDS: Readonly<Record<LineageLane, string>> = {
  expected:
    'a resource with role "expected" (usually on the intent event): what the task should have used',
  retrieved:
    'a resource with role "retrieved", or a selection candidate: what retrieval returned',
  supplied:
    'a resource with role "supplied", or a selected candidate: what reached the model',
  output_bound:
    'a resource with role "output_bound": what the answer or artifact is bound to',
};

/** Props of {@link LineagePanel}. */
export interface LineagePanelProps {
  lineage: Lineage;
  /** Show only this lane (the others stay reachable through the chips). */
  lane: LineageLane | undefined;
  selectHref: (eventId: string) => string;
  /** The artifact lookup each ref row offers (or says why not). */
  lookup?: RefLookup | undefined;
}

/** What a ref row needs to offer the current state of its resource. */
export interface RefLookup {
  capability: ActionCapability;
  /** The application the root belongs to (lookups are scoped to it). */
  application_id: string | undefined;
}

/** The four lanes and the dropped candidates. */
export const LineagePanel: FC<LineagePanelProps> = (
  { lineage, lane, selectHref, lookup },
) => {
  const lanes = lane ? [lane] : LINEAGE_LANES;
  const rejected = lineage.rejected_candidates;
  return (
    <div class="stack">
      <div class="lanes">
        {lanes.map((name) => (
          <LaneColumn
            name={name}
            lineage={lineage}
            selectHref={selectHref}
            lookup={lookup}
          />
        ))}
      </div>
      {lookup && LINEAGE_LANES.some((name) => lineage.lanes[name].length > 0)
        ? (
          <CapabilityNote
            capability={lookup.capability}
            lead="The current state of these refs is not looked up here"
          />
        )
        : null}
      {lineage.lanes_truncated
        ? (
          <p class="meta">
            A lane held more than 64 refs; the first 64 of each are listed.
          </p>
        )
        : null}
      {lane === undefined || lane === "retrieved"
        ? (
          <details class="others">
            <summary>
              Candidates a selection dropped ({rejected.length})
            </summary>
            <DataTable
              id="rejected"
              caption="Candidates a selection dropped"
              captionHidden
              columns={[
                {
                  header: "Ref",
                  rowHeader: true,
                  cell: (c) => <RefLabel {...c} />,
                },
                {
                  header: "Reason",
                  cell: (c) => <ShownCode text={c.reason} />,
                },
                {
                  header: "Rank",
                  numeric: true,
                  cell: (c) => c.rank === null ? "–" : String(c.rank),
                },
                {
                  header: "Score",
                  numeric: true,
                  cell: (c) => c.score === null ? "–" : String(c.score),
                },
                {
                  header: "Selection event",
                  cell: (c) => (
                    <a href={selectHref(c.event_id)}>
                      <Shown text={c.event_id} />
                    </a>
                  ),
                },
              ]}
              rows={rejected}
              empty={{
                title: "No candidate was dropped",
                text:
                  "No selection of this root recorded a candidate with selected: false.",
              }}
            />
          </details>
        )
        : null}
    </div>
  );
};

const LaneColumn: FC<{
  name: LineageLane;
  lineage: Lineage;
  selectHref: (eventId: string) => string;
  lookup: RefLookup | undefined;
}> = ({ name, lineage, selectHref, lookup }) => {
  const refs = lineage.lanes[name];
  return (
    <section class="panel lane" aria-labelledby={`lane-${name}`}>
      <h3 id={`lane-${name}`}>
        {LANE_TITLES[name]} <span class="meta">({refs.length})</span>
      </h3>
      {refs.length === 0
        ? (
          <EmptyState title="Not recorded">
            No event records{" "}
            {LANE_FIELDS[name]}. The host did not record it, and Trace does not
            infer lineage from content.
          </EmptyState>
        )
        : <RefList refs={refs} selectHref={selectHref} lookup={lookup} />}
    </section>
  );
};

/** Refs listed before the rest fold away. */
const REFS_SHOWN = 8;

const RefList: FC<{
  refs: Lineage["lanes"][LineageLane];
  selectHref: (eventId: string) => string;
  lookup: RefLookup | undefined;
}> = ({ refs, selectHref, lookup }) => {
  const items = (list: typeof refs) => (
    <ul class="lane__refs">
      {list.map((ref) => (
        <li>
          <RefLabel type={ref.type} id={ref.id} />
          {ref.versions.length > 0
            ? (
              <span class="meta">
                <Shown text={`@${ref.versions.join(", @")}`} />
              </span>
            )
            : null}
          {lookup
            ? (
              <ArtifactLookup
                ref={{
                  type: ref.type,
                  id: ref.id,
                  // One recorded version is the one to ask about; several leave it to the host.
                  ...(ref.versions.length === 1
                    ? { version: ref.versions[0] }
                    : {}),
                }}
                capability={lookup.capability}
                application_id={lookup.application_id}
              />
            )
            : null}
          <span class="meta">
            {plural(ref.events, "event")}: {ref.event_ids.map((id, i) => (
              <>
                {i > 0 ? ", " : ""}
                <a href={selectHref(id)}>
                  <Shown text={id} />
                </a>
              </>
            ))}
          </span>
        </li>
      ))}
    </ul>
  );
  if (refs.length <= REFS_SHOWN) return items(refs);
  return (
    <>
      {items(refs.slice(0, REFS_SHOWN))}
      <details class="others">
        <summary>{refs.length - REFS_SHOWN} more</summary>
        {items(refs.slice(REFS_SHOWN))}
      </details>
    </>
  );
};
