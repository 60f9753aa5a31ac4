/**
 * The run report: one JSON object per run, the same in the ledger, in
 * `--output` files and in `--json` output. Counts and flags only: never answer
 * text or raw error bodies. Documented field by field in docs/report.md.
 *
 * @module
 */

import type {
  Inventory,
  Operation,
  RequestFailure,
} from "../contract/protocol.ts";
import type { MarkerForm, RenderingTrait } from "./marker.ts";

export type { MarkerForm, RenderingTrait } from "./marker.ts";

/** Report format identifier; bump on incompatible changes. */
export const REPORT_SCHEMA = "trace.run-report/1" as const;

/** Final outcome of a run. */
export const VERDICTS = ["PASS", "FAIL", "INCONCLUSIVE"] as const;

/** One of {@link VERDICTS}. */
export type Verdict = typeof VERDICTS[number];

/**
 * Lifecycle state of a run record: `running`; `completed` (the window ran to
 * its final sample); `interrupted` (stopped early: either a finished report
 * with the samples taken and its cleanup, or a checkpoint whose writer is gone).
 */
export type RunState = "running" | "completed" | "interrupted";

/** What a report says about the system under test. */
export interface TargetRef {
  id: string;
  base_url: string;
  /** `registered` when named with `--target`, `config` when derived from a config file. */
  source: "registered" | "config" | "reference";
}

/** A request that produced no usable answer (content-free). */
export interface RequestErrorRecord {
  op: Operation;
  namespace: "test" | "control";
  failure: RequestFailure;
  message: string;
  status?: number;
}

/** An inventory reading reduced to counts. */
export type InventoryCounts = Inventory;

/** One observation of the test and control namespaces. */
export interface Sample {
  index: number;
  /** Seconds since the deletion acknowledgement when the sample began. */
  started_at_seconds: number;
  ended_at_seconds: number;
  /** Test namespace inventory, `null` when the request failed. */
  inventory: InventoryCounts | null;
  /** Whether the marker query's answer contained the marker, exactly or rendered; `null` when it failed. */
  marker_seen: boolean | null;
  /** How the marker appeared when seen; `null` when it was not seen or the query failed. */
  marker_form: MarkerForm | null;
  /** What a rendered marker changed (`case`, `markdown_escapes`, …); empty otherwise. */
  marker_rendering: RenderingTrait[];
  /** Whether the control document is still counted in the control inventory. */
  control_present: boolean | null;
  /** Whether the control query's answer contained the control marker, exactly or rendered. */
  control_seen: boolean | null;
  /** How the control marker appeared when seen. */
  control_form: MarkerForm | null;
  errors: RequestErrorRecord[];
}

/** State before deletion. */
export interface Baseline {
  ok: boolean;
  inventory: InventoryCounts | null;
  marker_seen: boolean | null;
  /** How the marker appeared when seen. */
  marker_form: MarkerForm | null;
  control_inventory: InventoryCounts | null;
  control_seen: boolean | null;
  /** How the control marker appeared when seen. */
  control_form: MarkerForm | null;
  /** Human-readable reasons the baseline was not established. */
  problems: string[];
  errors: RequestErrorRecord[];
}

/** How the deletion request went. */
export interface DeletionRecord {
  acknowledged: boolean;
  /** Seconds since the run started when the acknowledgement arrived. */
  acknowledged_at_seconds: number | null;
  error: RequestErrorRecord | null;
}

/** Severity of a finding. */
export type FindingSeverity = "fail" | "inconclusive" | "transient" | "note";

/** One human-readable conclusion with the evidence that supports it. */
export interface Finding {
  severity: FindingSeverity;
  /** Stable code, e.g. `residual_store`, `marker_retrievable`, `control_lost`. */
  code: string;
  /** Store or check the finding is about (`cache_records`, `retrieval`, `control`, …). */
  subject: string;
  message: string;
  /** Indexes into `samples` that show the evidence. */
  sample_indexes: number[];
  /** Retrieval findings only: the forms the marker was seen in, in those samples. */
  marker_forms?: MarkerForm[];
}

/** One cleanup deletion request. */
export interface CleanupDelete {
  namespace: "test" | "control";
  ids: number;
  acknowledged: boolean;
  error: RequestErrorRecord | null;
}

/** Cleanup outcome; `cleanup_complete` only when every store of both namespaces reads zero. */
export interface Cleanup {
  cleanup_complete: boolean;
  deletes: CleanupDelete[];
  polls: number;
  /**
   * How long polling could last: the deletion window, or after an interrupt
   * the smaller of the window and 30 s (counted from the interrupt when it
   * came during cleanup).
   */
  limit_seconds: number;
  /** Whether an interrupt shortened the polling. */
  interrupted: boolean;
  remaining: { test: InventoryCounts | null; control: InventoryCounts | null };
  /** Whether each namespace's marker was still retrievable at the last poll (`null`: query failed). */
  marker_seen: { test: boolean | null; control: boolean | null };
  elapsed_seconds: number;
  problems: string[];
}

/** Timing the run was configured with and what it took. */
export interface Timing {
  document_count: number;
  deletion_window_seconds: number;
  sample_interval_seconds: number;
  timeout_seconds: {
    ingest: number;
    query: number;
    inventory: number;
    delete: number;
  };
  elapsed_seconds: number;
  final_sample_started_at_seconds: number | null;
}

/** The complete report of one deletion contract run. */
export interface RunReport {
  schema: typeof REPORT_SCHEMA;
  run_id: string;
  kind: "external" | "reference";
  verdict: Verdict;
  state: RunState;
  target: TargetRef;
  protocol: { revision: string; operations: Operation[] };
  config_digest: string;
  started_at: string;
  finished_at: string | null;
  timing: Timing;
  namespaces: { test: string; control: string };
  issued: { test: string[]; control: string[] };
  baseline: Baseline;
  deletion: DeletionRecord | null;
  samples: Sample[];
  findings: Finding[];
  cleanup: Cleanup;
  requests: { total: number; failed: number };
}
