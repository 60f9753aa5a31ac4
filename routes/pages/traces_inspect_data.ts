/**
 * What `/traces/inspect` and its JSON twin hold: the loader fills it, the
 * body renders it.
 *
 * @module
 */

import type { ActionCapability } from "../../lib/auth/mod.ts";
import type { TraceEvent } from "../../lib/obs/mod.ts";
import type {
  AnalysisFinding,
  ArtifactEvidence,
  ContractEvidence,
  Lineage,
  RootRead,
  ThreadEvidence,
} from "../../lib/obs/query/mod.ts";
import type { ReplayTarget } from "../ui/components/operator_controls.tsx";
import type { InspectRequest } from "../ui/trace_params.ts";

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
  /** The operator controls of the page, enabled or disabled with the reason (`capabilityOf`). */
  controls: InspectControls;
  /** The replay selection this inspection names (the root, or the turn or run it reads). */
  replay: ReplayChoice | null;
  /** The run page of a deletion run's own root, when the operator may read runs. */
  run_page: string | null;
}

/** What the inspection's controls may do for this principal. */
export interface InspectControls {
  reveal: ActionCapability;
  replay_draft: ActionCapability;
  replay_plan: ActionCapability;
  artifact_lookup: ActionCapability;
}

/** The replay selection of an inspection, or why it names none. */
export interface ReplayChoice {
  /** `null` when the read names no single agent (a selection needs one). */
  target: ReplayTarget | null;
  /** What the selection covers, in words. */
  label: string;
  /** Why there is no target, or `null`. */
  unavailable: string | null;
}
