/**
 * The lineage and deterministic analysis `trace.query_traces` adds with
 * `explain`. Both are read-path functions of the observability index and
 * live there (`lib/obs/query/lineage.ts`), shared with the trace UI's
 * inspection page; this module names them for the MCP tools.
 *
 * @module
 */

export {
  type AnalysisFinding,
  type AnalysisSeverity,
  analyzeTrace,
  type Lineage,
  LINEAGE_LANES,
  type LineageLane,
  type LineageRef,
  MAX_LANE_REFS,
  type RejectedCandidate,
  traceLineage,
} from "../obs/query/mod.ts";
