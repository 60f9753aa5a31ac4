/**
 * The run report: one JSON object per run, the same in the ledger, in
 * `--output` files and in `--json` output. Counts, flags and the run's own
 * random markers only: never answer text or raw error bodies. Documented
 * field by field in docs/report.md.
 *
 * @module
 */

import type {
  Inventory,
  Operation,
  RequestFailure,
} from "../contract/protocol.ts";
import type { MarkerForm, RenderingTrait } from "./marker/mod.ts";

export type { MarkerForm, RenderingTrait } from "./marker/mod.ts";

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
  /** The registered target id, a config-derived `cfg-…` id, or a reference system's id. */
  id: string;
  /** The adapter the run talked to (never contacted for a reference system). */
  base_url: string;
  /** `registered` when named with `--target`, `config` when derived from a config file. */
  source: "registered" | "config" | "reference";
}

/**
 * The run's two markers: random synthetic strings Trace made (never user
 * data), kept so a later cleanup can query retrieval as the run's own does.
 */
export interface RunMarkers {
  /** The marker every canary document carries. */
  test: string;
  /** The control record's marker. */
  control: string;
}

/** A request that produced no usable answer (content-free). */
export interface RequestErrorRecord {
  /** The operation that failed. */
  op: Operation;
  /** The namespace the request was about. */
  namespace: "test" | "control";
  /** The class of failure (`timeout`, `schema`, `http_status`, …). */
  failure: RequestFailure;
  /** One line about what went wrong; never the answer's body. */
  message: string;
  /** The HTTP status, when one was received. */
  status?: number;
}

/** An inventory reading reduced to counts (the same shape as an {@link Inventory} answer). */
export type InventoryCounts = Inventory;

/** Where a sample saw the test marker: the namespace whose answer carried it, and the field. */
export interface MarkerPlace {
  /** `test`, or `control` when the control namespace's answer carried the deleted canary's marker. */
  query: "test" | "control";
  /**
   * `inventory` when it was that namespace's /inventory answer (the adapter
   * still holds the text); absent for its /query answer.
   */
  answer?: "inventory";
  /** `text`, or the path of another field of the answer (key names only, never answer text). */
  field: string;
}

/** One observation of the test and control namespaces. */
export interface Sample {
  /** Position in the window, from 0. */
  index: number;
  /** Seconds since the deletion acknowledgement when the sample began. */
  started_at_seconds: number;
  /** Seconds since the deletion acknowledgement when the sample ended. */
  ended_at_seconds: number;
  /** Test namespace inventory, `null` when the request failed. */
  inventory: Inventory | null;
  /** Whether the marker query's answer contained the marker, exactly or rendered; `null` when it failed. */
  marker_seen: boolean | null;
  /** How the marker appeared when seen; `null` when it was not seen or the query failed. */
  marker_form: MarkerForm | null;
  /** What a rendered marker changed (`case`, `markdown_escapes`, …); empty otherwise. */
  marker_rendering: RenderingTrait[];
  /**
   * Which query's answer carried the marker and in which field (`text`, or a
   * path such as `sources.0.content`); `null` when it was not seen. Absent
   * from reports of rules revisions before `trace-assertions/4`, which read
   * only the test query's `text`.
   */
  marker_found_in?: MarkerPlace | null;
  /** Whether the control document is still counted in the control inventory. */
  control_present: boolean | null;
  /**
   * Control namespace inventory, `null` when the request failed; what
   * `control_grew` compares with the baseline's. Absent from reports of
   * rules revisions before `trace-assertions/8`.
   */
  control_inventory?: Inventory | null;
  /** Whether the control query's answer contained the control marker, exactly or rendered. */
  control_seen: boolean | null;
  /** How the control marker appeared when seen. */
  control_form: MarkerForm | null;
  /** The requests of this sample that gave no usable answer. */
  errors: RequestErrorRecord[];
}

/** State before deletion. */
export interface Baseline {
  /** Whether the baseline held: every document counted, marker retrievable, control present and retrievable. */
  ok: boolean;
  /** Test namespace inventory, `null` when the request failed. */
  inventory: Inventory | null;
  /** Whether the marker query's answer contained the marker, exactly or rendered; `null` when it failed. */
  marker_seen: boolean | null;
  /** How the marker appeared when seen. */
  marker_form: MarkerForm | null;
  /** Control namespace inventory, `null` when the request failed. */
  control_inventory: Inventory | null;
  /** Whether the control query's answer contained the control marker. */
  control_seen: boolean | null;
  /** How the control marker appeared when seen. */
  control_form: MarkerForm | null;
  /** Human-readable reasons the baseline was not established. */
  problems: string[];
  /** The baseline requests that gave no usable answer. */
  errors: RequestErrorRecord[];
}

/** How the deletion request went. */
export interface DeletionRecord {
  /** Whether the adapter answered `{"acknowledged": true}`. */
  acknowledged: boolean;
  /** Seconds since the run started when the acknowledgement arrived. */
  acknowledged_at_seconds: number | null;
  /** The request error, or `null`. */
  error: RequestErrorRecord | null;
}

/** Severity of a finding. */
export type FindingSeverity = "fail" | "inconclusive" | "transient" | "note";

/** One human-readable conclusion with the evidence that supports it. */
export interface Finding {
  /** `fail` decides a FAIL, `inconclusive` an INCONCLUSIVE; `transient` and `note` are recorded only. */
  severity: FindingSeverity;
  /** Stable code, e.g. `residual_store`, `marker_retrievable`, `control_lost`. */
  code: string;
  /** Store or check the finding is about (`cache_records`, `retrieval`, `control`, …). */
  subject: string;
  /** The conclusion in one sentence. */
  message: string;
  /** Indexes into `samples` that show the evidence. */
  sample_indexes: number[];
  /** Retrieval findings only: the forms the marker was seen in, in those samples. */
  marker_forms?: MarkerForm[];
}

/** One cleanup deletion request. */
export interface CleanupDelete {
  /** The namespace this request cleaned. */
  namespace: "test" | "control";
  /** How many ids the request named (a count, not the ids). */
  ids: number;
  /** Whether the adapter acknowledged the deletion. */
  acknowledged: boolean;
  /** The request error, or `null`. */
  error: RequestErrorRecord | null;
}

/** Cleanup outcome; `cleanup_complete` only when every store of both namespaces reads zero. */
export interface Cleanup {
  /** Every cleanup deletion acknowledged and both namespaces read zero in every store, late enough to trust. */
  cleanup_complete: boolean;
  /**
   * One deletion request per namespace, then one more each time a
   * namespace's records came back after a clean poll (at most three more per
   * namespace, none after an interrupt).
   */
  deletes: CleanupDelete[];
  /** Polls of both namespaces (inventory and marker query). */
  polls: number;
  /**
   * How long polling could last: the deletion window, or after an interrupt
   * the smaller of the window and 30 s (counted from the interrupt when it
   * came during cleanup).
   */
  limit_seconds: number;
  /** Whether an interrupt shortened the polling. */
  interrupted: boolean;
  /** The last inventory of each namespace (`null`: request failed). */
  remaining: { test: Inventory | null; control: Inventory | null };
  /** Whether each namespace's marker was still retrievable at the last poll (`null`: query failed). */
  marker_seen: { test: boolean | null; control: boolean | null };
  /** Seconds spent cleaning up. */
  elapsed_seconds: number;
  /** What is left, one sentence each. */
  problems: string[];
}

/** Timing the run was configured with and what it took. */
export interface Timing {
  /** Canary documents ingested, as configured. */
  document_count: number;
  /** How long deletion may take to propagate, as configured. */
  deletion_window_seconds: number;
  /** Seconds between samples, as configured. */
  sample_interval_seconds: number;
  /** Per-operation request budgets in seconds, as configured. */
  timeout_seconds: {
    ingest: number;
    query: number;
    inventory: number;
    delete: number;
  };
  /** Seconds the whole run took. */
  elapsed_seconds: number;
  /** When the sample that decided the verdict began, in seconds after the acknowledgement; `null` without one (no window, or an interrupted one). */
  final_sample_started_at_seconds: number | null;
}

/** The complete report of one deletion contract run. */
export interface RunReport {
  /** Format identifier, `trace.run-report/1`. */
  schema: typeof REPORT_SCHEMA;
  /** `run-<UTC timestamp>-<random>`: unique and sortable. */
  run_id: string;
  /** A staging target, or a reference system run in process. */
  kind: "external" | "reference";
  /** The outcome (exit code 0, 1 or 2). */
  verdict: Verdict;
  /** `completed` when the window ran to its final sample, `interrupted` when it stopped early. */
  state: RunState;
  /** The system under test. */
  target: TargetRef;
  /** The adapter contract revision and the operations it has. */
  protocol: { revision: string; operations: Operation[] };
  /** `sha256:` of the canonical JSON of the validated config. */
  config_digest: string;
  /** Wall-clock start, ISO 8601. */
  started_at: string;
  /** Wall-clock end, ISO 8601; `null` while running. */
  finished_at: string | null;
  /** The configured timing and what the run took. */
  timing: Timing;
  /** The random namespaces this run used. */
  namespaces: { test: string; control: string };
  /** The run's markers; absent from reports stored before they were kept. */
  markers?: RunMarkers;
  /** Every id issued, also ones whose ingest failed. */
  issued: { test: string[]; control: string[] };
  /** State before deletion. */
  baseline: Baseline;
  /** The deletion request; `null` when the baseline failed and nothing was deleted. */
  deletion: DeletionRecord | null;
  /** Observations through the deletion window. */
  samples: Sample[];
  /** Conclusions, each with the samples that prove it. */
  findings: Finding[];
  /** What cleanup deleted and what it left. */
  cleanup: Cleanup;
  /** Requests sent, and how many gave no usable answer. */
  requests: { total: number; failed: number };
}
