/**
 * Which tools a caller may use, decided by the permission matrix of the
 * trace UI (`lib/auth/`): a tool that only reads is `runs.read`, one that
 * writes is `runs.write`, and the trace query is `trace.read`. Read-only
 * mode (`TRACE_UI_READ_ONLY=true`) refuses every tool that writes, over
 * stdio as over HTTP. A refused tool is not listed, its calls answer the
 * refusal, and the server's instructions say why it is missing.
 *
 * @module
 */

import { type Action, decide, type Principal, UNSCOPED } from "../auth/mod.ts";
import type { McpToolContext, ToolIdentity } from "./context.ts";

/** The server-wide mode tools are offered in. */
export interface ToolPolicyOptions {
  /** `TRACE_UI_READ_ONLY=true`: every tool that writes is refused. */
  readOnly: boolean;
}

/** A context's `refuseTool`. */
export type ToolPolicy = NonNullable<McpToolContext["refuseTool"]>;

/** The action a tool performs in the permission matrix. */
export function toolAction(tool: ToolIdentity): Action {
  if (tool.name === "trace.query_traces") return "trace.read";
  return tool.annotations.readOnlyHint ? "runs.read" : "runs.write";
}

/** Why `principal` may not use `tool` (role, tenant binding, read-only mode), or `null`. */
export function toolRefusal(
  principal: Principal,
  tool: ToolIdentity,
  options: ToolPolicyOptions,
): string | null {
  const decision = decide(principal, toolAction(tool), options);
  return decision.allowed ? null : `${tool.name}: ${decision.message}`;
}

/**
 * The policy of `trace mcp`: its caller is the machine's user, who may take
 * every action (the trace scope of its flags narrows trace queries, it
 * grants nothing), so only the server's mode refuses a tool.
 */
export function localToolPolicy(options: ToolPolicyOptions): ToolPolicy {
  const machineUser: Principal = {
    name: "local",
    role: "admin",
    scope: UNSCOPED,
    via: "session",
  };
  return (tool) => toolRefusal(machineUser, tool, options);
}
