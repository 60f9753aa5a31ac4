/**
 * What the server tells an assistant when it connects, written for the
 * caller's principal. A client shows the tool list without reasons, so an
 * account offered fewer tools (a viewer, a tenant-bound account, a
 * read-only server) or none at all would otherwise read a short or empty
 * list as a broken server; the instructions say which tools it has, why the
 * others are missing, and how an operator turns trace queries on.
 *
 * @module
 */

import { isTenantBound } from "../auth/mod.ts";
import type { TraceTool } from "./_tool.ts";
import { type McpToolContext, TRACE_QUERIES_ENV } from "./context.ts";
import { EXTERNAL_TOOLS } from "./external_tools.ts";
import { REFERENCE_TOOLS } from "./reference_tools.ts";
import { describeScope, TRACE_TOOLS } from "./trace_tools.ts";

const INTRO =
  "Trace proves that an AI-memory or RAG application really forgets.";

const TARGETS =
  "Staging targets are registered locally with the trace CLI; here they are named by id only.";

const FULL_FLOW =
  "Typical flow: trace.external_targets, trace.external_plan, trace.external_start (returns a run_id at once), poll trace.external_get until state is completed, failed or interrupted, read findings and cleanup, trace.external_save a FAIL, and after a fix trace.external_replay the regression, poll, then trace.external_compare the two runs. trace.external_runs and trace.external_regressions list earlier runs and saved regressions. The reference tools run and rank in-process systems with known deletion behaviour; trace.reference_explain says what a finding code means and what to check.";

/** What the instructions read of a context. */
export type InstructionsContext = Pick<
  McpToolContext,
  "allowTraceQueries" | "refuseTool" | "principal" | "remote"
>;

/** The tools that run, list and explain runs: every tool but the trace query. */
const RUN_TOOLS: readonly TraceTool[] = [...EXTERNAL_TOOLS, ...REFERENCE_TOOLS];

/** A run tool the context refuses, and why. */
interface Refused {
  name: string;
  reason: string;
}

/** The instructions for the principal of `context`, naming what it may use and why the rest is missing. */
export function serverInstructions(context: InstructionsContext): string {
  const refused = RUN_TOOLS.flatMap((tool) => {
    const reason = refusalOf(context, tool);
    return reason === null ? [] : [{ name: tool.name, reason }];
  });
  return [
    INTRO,
    runToolsText(context, refused),
    traceQueriesText(context, refused.length === RUN_TOOLS.length),
  ].join(" ");
}

function refusalOf(
  context: InstructionsContext,
  tool: TraceTool,
): string | null {
  const message = context.refuseTool?.(tool) ?? null;
  // Refusals name their tool first (`trace.external_start: Forbidden: …`);
  // the sentence names them itself, and a reason is read inside it.
  return message === null ? null : message
    .replace(`${tool.name}: `, "")
    .replace(/^Forbidden: /, "")
    .replace(/^This server /, "this server ");
}

function runToolsText(
  context: InstructionsContext,
  refused: readonly Refused[],
): string {
  if (refused.length === 0) return `${TARGETS} ${FULL_FLOW}`;
  const { name, scope } = context.principal;
  if (refused.length === RUN_TOOLS.length) {
    const why = isTenantBound(scope)
      ? `${name} is bound to one tenant (${
        describeScope(scope)
      }), and runs, targets, regressions and the reference suite span every tenant`
      : `${name} is refused them (${refused[0]!.reason})`;
    return `${why}, so none of the external or reference tools is offered here.`;
  }
  const offered = RUN_TOOLS
    .filter((tool) => !refused.some((entry) => entry.name === tool.name))
    .map((tool) => tool.name);
  return `${TARGETS} ${name} may use ${offered.join(", ")}. Not offered: ${
    reasonGroups(refused)
  }.`;
}

/** The refused tools grouped by reason: `a, b (reason); c (other reason)`. */
function reasonGroups(refused: readonly Refused[]): string {
  const byReason = new Map<string, string[]>();
  for (const { name, reason } of refused) {
    byReason.set(reason, [...(byReason.get(reason) ?? []), name]);
  }
  return [...byReason].map(([reason, names]) =>
    `${names.join(", ")} (${reason})`
  ).join("; ");
}

/** The trace query's sentence; `noOtherTool`: every run tool is refused. */
function traceQueriesText(
  context: InstructionsContext,
  noOtherTool: boolean,
): string {
  const tool = TRACE_TOOLS[0]!;
  if (!context.allowTraceQueries) {
    const restart = context.remote
      ? "an operator restarts trace serve"
      : "whoever configures this client starts trace mcp";
    const empty = noOtherTool ? ", so tools/list is empty" : "";
    return `${tool.name} (metadata-only trace events) is off on this server${empty}: to offer it, ${restart} with ${TRACE_QUERIES_ENV}=true.`;
  }
  const refusal = refusalOf(context, tool);
  if (refusal !== null) {
    const empty = noOtherTool ? "; tools/list is empty" : "";
    return `${tool.name} is not offered (${refusal})${empty}.`;
  }
  return `${tool.name} reads metadata-only trace events in the caller's scope (${
    describeScope(context.principal.scope)
  }); its arguments can only narrow that scope.`;
}
