/**
 * Refs served after their deletion, as a callout: which ref, which event
 * deleted it, how often it was supplied or bound to an output afterwards,
 * and what served the first such use (e.g. an answer-cache entry), one
 * click from that use's inspection.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type {
  DeletionUse,
  ThreadEvidence,
} from "../../../lib/obs/query/mod.ts";
import { inspectEventHref } from "../trace_params.ts";
import { plural } from "../trace_words.ts";
import { StatusBadge } from "./badge.tsx";
import { EmptyState } from "./empty_state.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { Time } from "./time.tsx";
import { KindTag, RefLabel } from "./trace_bits.tsx";

/** Most deleted refs spelled out (the JSON twin lists them all). */
const SHOWN = 5;

/** Props of {@link DeletionEvidence}. */
export interface DeletionEvidenceProps {
  evidence: ThreadEvidence;
  /** The finder's query string, kept in links. */
  params: URLSearchParams;
  now: number;
  /** The event the page already shows selected (an inspection): no link leads back to it. */
  selected?: { root_trace_id: string; event_id: string } | null;
}

/** The callout of a thread's refs served after their deletion. */
export const DeletionEvidence: FC<DeletionEvidenceProps> = (
  { evidence, params, now, selected },
) => {
  const uses = evidence.served_after_deletion;
  const scope = `the newest ${
    plural(evidence.events_read, "event")
  } with refs of thread ${evidence.thread_id}`;
  if (evidence.events_read === 0) {
    return (
      <EmptyState title="No event of this thread records refs">
        Nothing here says which records were deleted or what served an answer:
        the events of this thread carry no resource refs or selection
        candidates. A traced staging app records them (for example{" "}
        <code>trace demo --trace-to URL</code>); the runner's own events never
        do.
      </EmptyState>
    );
  }
  if (uses.length === 0) {
    return (
      <p class="callout callout--ok" role="status">
        No ref was supplied or bound to an output after an event deleted it, in
        {" "}
        <Shown text={scope} />.
      </p>
    );
  }
  return (
    <div
      class="callout callout--danger"
      role="status"
      id="served-after-deletion"
    >
      <p class="callout__title">
        <StatusBadge status="fail" /> {plural(uses.length, "deleted ref")}{" "}
        {uses.length === 1 ? "was" : "were"} served after deletion
      </p>
      <ol class="deletion-uses">
        {uses.slice(0, SHOWN).map((use) => (
          <UseItem
            use={use}
            rootOnly={evidence.uses_counted_in !== null}
            params={params}
            now={now}
            here={selected?.root_trace_id === use.first_use.root_trace_id &&
              selected.event_id === use.first_use.event_id}
          />
        ))}
      </ol>
      {uses.length > SHOWN
        ? (
          <p class="meta">
            {uses.length - SHOWN} more in the JSON twin. Read from{" "}
            <Shown text={scope} />.
          </p>
        )
        : (
          <p class="meta">
            Read from <Shown text={scope} />.
          </p>
        )}
    </div>
  );
};

const UseItem: FC<
  {
    use: DeletionUse;
    /** Whether only the inspected root's events count as uses. */
    rootOnly: boolean;
    params: URLSearchParams;
    now: number;
    /** Whether the first use is the event this page shows selected. */
    here: boolean;
  }
> = (
  { use, rootOnly, params, now, here },
) => {
  const first = use.first_use;
  const href = inspectEventHref(first, params);
  const direct = first.lanes.includes("supplied");
  const via = first.served_by.filter((ref) =>
    ref.type !== use.ref.type || ref.id !== use.ref.id
  );
  return (
    <li class="deletion-use">
      <p>
        <RefLabel {...use.ref} /> was deleted by{" "}
        <KindTag kind={use.deleted_by.kind} /> event{" "}
        <ShownCode text={use.deleted_by.event_id} />{" "}
        (<Time iso={use.deleted_by.ts} now={now} />), then{" "}
        {direct ? "supplied to the model" : "bound to an output"} by{" "}
        {usesCounted(use, rootOnly)}.
      </p>
      <p>
        {direct
          ? (
            <>
              The first was event <ShownCode text={first.event_id} />{" "}
              (<Time iso={first.ts} now={now} />).{" "}
            </>
          )
          : via.length > 0
          ? (
            <>
              The first (event <ShownCode text={first.event_id} />,{" "}
              <Time iso={first.ts} now={now} />) was served by{" "}
              {via.map((ref, i) => (
                <>
                  {i > 0 ? ", " : ""}
                  <RefLabel {...ref} />
                </>
              ))}.{" "}
            </>
          )
          : (
            <>
              The first (event{" "}
              <ShownCode text={first.event_id} />) records nothing it was served
              from.{" "}
            </>
          )}
        {here
          ? <span class="meta">That answer is the selected event above.</span>
          : (
            <a href={href} class="callout__action">
              Inspect that answer
            </a>
          )}
      </p>
    </li>
  );
};

/** How many later events used the ref, naming the scope they were counted in. */
function usesCounted(use: DeletionUse, rootOnly: boolean): string {
  if (!rootOnly) return `${plural(use.uses, "later event")} of this thread`;
  const root = `${plural(use.uses, "later event")} of this root`;
  return use.thread_uses === use.uses
    ? root
    : `${root} (${
      use.thread_uses.toLocaleString("en-US")
    } in the whole thread)`;
}
