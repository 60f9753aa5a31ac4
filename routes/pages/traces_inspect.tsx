/**
 * `/traces/inspect` and `/traces/inspect.json`: one task scope (agent +
 * root) read whole, up to 1,000 events, under the finder's thread, turn,
 * run, memory and time selection. The page leads with what the read proves
 * (read completeness, instrumentation coverage and outcome verification,
 * each on its own), then the selected event, refs served after deletion,
 * the analysis, the memory lineage, the selection, the waterfall, and the
 * artifact and contract panels. Kind, status and lane filters narrow what is
 * shown, never what is read.
 *
 * @module
 */

import type { Context } from "hono";
import type { TraceDb } from "../../lib/db.ts";
import { quoteValue } from "../../lib/echo.ts";
import { listCoverageProfiles } from "../../lib/obs/mod.ts";
import {
  analyzeTrace,
  artifactEvidence,
  contractEvidence,
  readRootEvents,
  readThreadEvidence,
  type RootRead,
  type ThreadEvidence,
  traceLineage,
} from "../../lib/obs/query/mod.ts";
import { incompleteSelection, selectionMatches } from "../../lib/auth/mod.ts";
import { capabilityOf } from "../access.ts";
import { noReplayDraft } from "../ui/components/operator_controls.tsx";
import { obsProvisioned } from "./_obs_ready.ts";
import type { UiEnv } from "../ui/context.ts";
import { runOfEvent } from "../ui/links.ts";
import type { PageSpec } from "../ui/page.ts";
import { nextTurn } from "../ui/turn.ts";
import {
  cleanParams,
  INSPECT_PATH,
  type InspectRequest,
  parseInspectParams,
} from "../ui/trace_params.ts";
import { evidenceSentence } from "../ui/trace_words.ts";
import { InspectBody, narrowed, shownEvents } from "./traces_inspect_body.tsx";
import {
  type RefusedInspect,
  RefusedInspectBody,
} from "./traces_inspect_refused.tsx";
import {
  formRefusal,
  namedFields,
  refusalStatus,
} from "../ui/form_refusal.tsx";
import type { InspectData, ReplayChoice } from "./traces_inspect_data.ts";

/** The inspection page over `db`. */
export function inspectPage(
  db: TraceDb,
): PageSpec<InspectData | RefusedInspect> {
  return {
    path: INSPECT_PATH,
    title: (data) =>
      "refused" in data
        ? "Inspect a root"
        : `Root ${data.request.scope.root_trace_id}`,
    load: (c) => loadOrRefuse(db, c),
    render: (data, view) =>
      "refused" in data
        ? <RefusedInspectBody data={data} view={view} />
        : <InspectBody data={data} view={view} />,
    status: (data) => "refused" in data ? refusalStatus(data.refused) : 200,
    notFound: (data) =>
      "refused" in data || !data.provisioned || data.root?.events.length
        ? null
        : nothingInScope(data.request.scope.root_trace_id),
  };
}

/** What the twin says of a root no event in scope holds (as Jaeger, an unknown trace is 404). */
function nothingInScope(root: string): string {
  return `No event of root ${
    quoteValue(root)
  } is in your scope under this selection; check the root id and the application, agent, thread, turn, run and time filters (the finder lists the roots that exist)`;
}

/**
 * The inspection, or for a browser the page's refusal of its query (a value
 * it cannot read, a missing root id, a root id two applications share, a
 * tenant outside the account's scope). The twin gets the error thrown.
 */
async function loadOrRefuse(
  db: TraceDb,
  c: Context<UiEnv>,
): Promise<InspectData | RefusedInspect> {
  try {
    return await loadInspect(db, c);
  } catch (error) {
    const params = cleanParams(new URL(c.req.url).searchParams);
    return {
      refused: formRefusal(
        c,
        error,
        (message) => namedFields(message, [...new Set(params.keys())]),
      ),
    };
  }
}

async function loadInspect(
  db: TraceDb,
  c: Context<UiEnv>,
): Promise<InspectData> {
  const params = cleanParams(new URL(c.req.url).searchParams);
  const request = parseInspectParams(params, c.get("principal").scope);
  const empty: InspectData = {
    request,
    provisioned: true,
    root: null,
    statement: null,
    shown_event_ids: null,
    selected: null,
    lineage: null,
    analysis: [],
    deletion_evidence: null,
    artifact: null,
    contract: null,
    controls: {
      reveal: capabilityOf(c, "content.reveal"),
      replay_draft: capabilityOf(c, "replay.draft"),
      replay_plan: capabilityOf(c, "replay.plan"),
      artifact_lookup: capabilityOf(c, "artifact.lookup"),
    },
    replay: null,
    run_page: null,
  };
  if (!(await obsProvisioned(db))) return { ...empty, provisioned: false };
  const root = await readRootEvents(db, request.scope);
  const events = root.events;
  await nextTurn();
  const profiles = await listCoverageProfiles(db);
  const deletion = await rootDeletionEvidence(db, request, root);
  await nextTurn();
  return {
    ...empty,
    root,
    statement: evidenceSentence(root, "the first 1,000 events"),
    shown_event_ids: narrowed(request)
      ? shownEvents(events, request).map((e) => e.event_id)
      : null,
    selected: events.find((e) => e.event_id === request.selected) ?? null,
    lineage: traceLineage(events),
    analysis: analyzeTrace(events),
    deletion_evidence: deletion,
    artifact: artifactEvidence(events, root.read_completeness),
    contract: contractEvidence(events, profiles, root.read_completeness),
    replay: replayChoice(request, root),
    run_page: runPage(c, root),
  };
}

/**
 * The replay selection of what this page reads: its agent, root, and the
 * turn or run it is narrowed to. A selection names one agent, so a read of
 * several agents (or of memories only) names none and says so.
 */
export function replayChoice(
  request: InspectRequest,
  root: RootRead,
): ReplayChoice {
  const scope = request.scope;
  const label = [
    scope.turn_id === undefined ? null : `turn ${scope.turn_id}`,
    scope.run_id === undefined ? null : `run ${scope.run_id}`,
  ].filter((part) => part !== null).join(", ") || "the whole root";
  const agents = new Set(root.events.map((e) => e.agent_id));
  const [only] = agents;
  const agent = scope.agent_ids?.length === 1
    ? scope.agent_ids[0]!
    : agents.size === 1 && only
    ? only
    : null;
  if (agent === null || root.application_id === null) {
    return {
      target: null,
      label,
      unavailable:
        "A replay draft covers one agent's events: this read holds several agents' events or a memory's only; inspect the root for one agent to draft its replay.",
    };
  }
  const target = {
    agent_id: agent,
    root_trace_id: scope.root_trace_id,
    application_id: root.application_id,
    turn_id: scope.turn_id,
    run_id: scope.run_id,
    user_id: scope.user_id,
  };
  // The events read here that the selection holds: what makes them
  // unplannable makes the whole selection unplannable, so the control says so
  // now instead of answering 400 when used.
  const why = incompleteSelection(
    root.events.filter((e) => selectionMatches(e, target)),
  );
  return {
    target,
    label,
    unavailable: why === null ? null : noReplayDraft(label, why),
  };
}

/** The run page of a deletion run's own root, when this operator may open it. */
function runPage(c: Context<UiEnv>, root: RootRead): string | null {
  const first = root.events[0];
  if (!first || !capabilityOf(c, "runs.read").allowed) return null;
  return runOfEvent(first);
}

/** Deletion evidence of the root's one thread, counting only this root's uses. */
async function rootDeletionEvidence(
  db: TraceDb,
  request: InspectRequest,
  root: RootRead,
): Promise<ThreadEvidence | null> {
  const threads = new Set(
    root.events.flatMap((e) => e.thread_id === null ? [] : [e.thread_id]),
  );
  const [thread] = threads;
  if (threads.size !== 1 || thread === undefined || !root.application_id) {
    return null;
  }
  const scope = request.scope;
  return await readThreadEvidence(db, thread, {
    ...(scope.application_id === undefined
      ? {}
      : { application_id: scope.application_id }),
    ...(scope.user_id === undefined ? {} : { user_id: scope.user_id }),
  }, {
    root: {
      application_id: root.application_id,
      root_trace_id: root.root_trace_id,
    },
  });
}
