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
import {
  listCoverageProfiles,
  ObsNotInitializedError,
  requireObs,
  type TraceEvent,
} from "../../lib/obs/mod.ts";
import {
  type AnalysisFinding,
  analyzeTrace,
  type ArtifactEvidence,
  artifactEvidence,
  type ContractEvidence,
  contractEvidence,
  type Lineage,
  readRootEvents,
  readThreadEvidence,
  type RootRead,
  type ThreadEvidence,
  traceLineage,
} from "../../lib/obs/query/mod.ts";
import { capabilityOf } from "../access.ts";
import type { UiEnv } from "../ui/context.ts";
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

/** The data of the inspection page and its JSON twin. */
export interface InspectData {
  request: InspectRequest;
  /** False when the database has no observability index yet. */
  provisioned: boolean;
  /** The read, its events oldest first (all of them, whatever the view shows). */
  root: RootRead | null;
  /** "All stored events loaded; end-to-end coverage unknown." and its kin. */
  statement: string | null;
  /** Ids of the events the view shows, when a kind, status or lane filter narrows it. */
  shown_event_ids: string[] | null;
  selected: TraceEvent | null;
  lineage: Lineage | null;
  analysis: AnalysisFinding[];
  /** Refs this root served after an event of its thread deleted them. */
  deletion_evidence: ThreadEvidence | null;
  artifact: ArtifactEvidence | null;
  contract: ContractEvidence | null;
  /** Why the current state of an artifact cannot be looked up here, or `null` when it can. */
  artifact_lookup: string | null;
}

/** The inspection page over `db`. */
export function inspectPage(db: TraceDb): PageSpec<InspectData> {
  return {
    path: INSPECT_PATH,
    title: (data) => `Root ${data.request.scope.root_trace_id}`,
    load: (c) => loadInspect(db, c),
    render: (data, view) => <InspectBody data={data} view={view} />,
  };
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
    artifact_lookup: capabilityOf(c, "artifact.lookup").message,
  };
  try {
    await requireObs(db);
  } catch (error) {
    if (error instanceof ObsNotInitializedError) {
      return { ...empty, provisioned: false };
    }
    throw error;
  }
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
  };
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
