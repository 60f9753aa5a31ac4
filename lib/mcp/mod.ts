/**
 * The MCP tools of Trace, transport-agnostic: nine external tools over
 * registered staging targets, eight reference tools over the reference
 * suite, and `trace.query_traces` (only when enabled) over the
 * observability index. `trace mcp` serves them over stdio and `trace serve`
 * over streamable HTTP at `/mcp`; both build the same server with
 * {@link createTraceMcpServer}. Tools are named with dots (`trace.external_start`),
 * which MCP tool names allow (letters, digits, `_`, `-`, `.`).
 *
 * May import `lib/runs/`, `lib/reference/`, `lib/obs/` (its root,
 * `query/`, and the kinds `otlp/` maps spans to), `lib/auth/` (scope narrowing), `lib/runner/` (plans, rules),
 * `lib/ledger/` (id schemas) and the SDK; nothing imports this folder but
 * entry points.
 *
 * @module
 */

export {
  DEFAULT_MAX_OUTPUT_CHARS,
  localPrincipal,
  type McpPrincipal,
  type McpToolContext,
  OPERATOR_ROLES,
  type OperatorRole,
  ToolCalls,
  TRACE_QUERIES_ENV,
  traceQueriesAllowed,
  type TraceScope,
} from "./context.ts";
export {
  createTraceMcpServer,
  registerTraceTools,
  SERVER_INFO,
  TOOL_NAMES,
  toolListing,
  toolsFor,
} from "./server.ts";
export { looksLikeUrl } from "./_args.ts";
export { type Cut, type Truncation } from "./_bound.ts";
export { type ToolEffects, type TraceTool } from "./_tool.ts";
export { describeScope, scopedFilter } from "./trace_tools.ts";
export {
  type AnalysisFinding,
  analyzeTrace,
  type Lineage,
  LINEAGE_LANES,
  type LineageRef,
  traceLineage,
} from "../obs/query/mod.ts";
export { FINDING_CODE_NAMES, findingGuide } from "../runner/finding_guide.ts";
export { guardToolCalls } from "./tool_call_guard.ts";
export {
  localToolPolicy,
  toolAction,
  type ToolPolicy,
  type ToolPolicyOptions,
  toolRefusal,
} from "./tool_policy.ts";
export {
  type RefusedLine,
  strictStdinLines,
  type StrictStdinOptions,
} from "./stdio_lines.ts";
export {
  INVALID_REQUEST,
  type InvalidRequest,
  invalidRequest,
  type InvalidRequestOptions,
  MCP_MAX_MESSAGE_BYTES,
  PARSE_ERROR,
  type RpcId,
  TOO_LARGE,
} from "./rpc_request.ts";
