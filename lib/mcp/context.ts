/**
 * What every tool call runs with: the data it reads and writes, the
 * process's job manager, and the principal who called. The principal comes
 * from the transport (the local user over stdio, the authenticated operator
 * over HTTP), never from tool arguments.
 *
 * @module
 */

import { type Role, ROLES, type TenantScope } from "../auth/roles.ts";
import type { TraceDb } from "../db.ts";
import { TraceError } from "../errors.ts";
import type { RunJobs } from "../runs/mod.ts";
import { readEnvSwitch } from "../env_switch.ts";

/** Operator roles, weakest first: the roles of the trace UI's accounts. */
export const OPERATOR_ROLES: typeof ROLES = ROLES;

/** One of {@link OPERATOR_ROLES}. */
export type OperatorRole = Role;

/**
 * The tenant scope a principal may read trace events in, as for the trace
 * UI's accounts. A present key binds (`user_id: null` binds anonymous events
 * only); an absent key leaves that dimension open, for arguments to narrow.
 */
export type TraceScope = TenantScope;

/** Who is calling: a name for messages, a role, and the trace scope bound to them. */
export interface McpPrincipal {
  /** The caller's name, for messages. */
  name: string;
  /** What the caller may do. */
  role: OperatorRole;
  /** The tenants the caller may read trace events of. */
  scope: TraceScope;
}

/** Everything the tools need; one per connection (or per HTTP request). */
export interface McpToolContext {
  /** The database holding the ledger and the observability index. */
  db: TraceDb;
  /** The data directory of the runs' checkpoints. */
  dataDir: string;
  /** The process's job manager (one external run at a time per process). */
  jobs: RunJobs;
  /** The caller. */
  principal: McpPrincipal;
  /** Whether `trace.query_traces` is offered (`TRACE_MCP_ALLOW_TRACE_QUERIES=true`). */
  allowTraceQueries: boolean;
  /** Most characters of JSON one answer may carry (default {@link DEFAULT_MAX_OUTPUT_CHARS}); a smaller bound than 250 (`MIN_OUTPUT_CHARS`) is raised to it. */
  maxOutputChars?: number;
  /**
   * Whether the caller is on another machine (`/mcp` over HTTP): answers and
   * refusals then name neither this machine's paths nor CLI flags meant for
   * its shell. Absent: a local caller (`trace mcp`).
   */
  remote?: boolean;
  /** Counts the tool calls still running, for a server that must not close under one. */
  calls?: ToolCalls;
  /** Where the detail of unexpected failures goes, one line each (default: nowhere). */
  log?: (line: string) => void;
  /**
   * Why the caller may not use a tool (its role, tenant binding or the
   * server's read-only mode), or `null`; refused tools are not listed and
   * their calls answer this message. Absent: every tool is offered.
   */
  refuseTool?: (tool: ToolIdentity) => string | null;
}

/** What a tool policy sees of a tool: its name and declared effects. */
export interface ToolIdentity {
  /** The tool's name, e.g. `trace.external_start`. */
  name: string;
  /** Whether it only reads. */
  annotations: { readOnlyHint: boolean };
}

/** Default bound of one answer, in characters of JSON. */
export const DEFAULT_MAX_OUTPUT_CHARS = 60_000;

/** The environment variable that turns `trace.query_traces` on. */
export const TRACE_QUERIES_ENV = "TRACE_MCP_ALLOW_TRACE_QUERIES";

/**
 * Reads {@link TRACE_QUERIES_ENV}: only `true` enables, unset or `false`
 * disables; empty or anything else is refused (`env_switch.ts`).
 */
export function traceQueriesAllowed(value: string | undefined): boolean {
  return readEnvSwitch(TRACE_QUERIES_ENV, value, "offer trace.query_traces");
}

/** The local principal of a stdio server: the machine's user, bound to `scope` for trace queries. */
export function localPrincipal(scope: TraceScope): McpPrincipal {
  return { name: "local", role: "admin", scope };
}

const RUNNING_ROLES: ReadonlySet<OperatorRole> = new Set(["operator", "admin"]);

/** Refuses a principal whose role may not start runs or write to the ledger. */
export function requireRunningRole(
  principal: McpPrincipal,
  tool: string,
): void {
  if (!RUNNING_ROLES.has(principal.role)) {
    throw new TraceError(
      "forbidden",
      `${tool} needs the operator or admin role; ${principal.name} is ${principal.role}`,
    );
  }
}

/**
 * The tool calls still running. `trace mcp` ends when its client closes
 * stdin, and a call may still be writing (a reference run appends to the
 * ledger and the index); it waits for {@link ToolCalls.idle} before closing
 * the database. Work is counted, not answers: a cancelled call gets no
 * answer but runs to its end. A call counts from the moment its request is
 * read ({@link ToolCalls.arrived}): the SDK starts the handler a few
 * microtasks later, and stdin's end can be seen in between, when the last
 * line was the call.
 */
export class ToolCalls {
  /** Calls read or running. */
  #count = 0;
  /** Requests read whose handler has not started, by request id. */
  #waiting = new Map<string | number, number>();
  #idle = Promise.withResolvers<void>();

  constructor() {
    this.#idle.resolve();
  }

  /** Calls read or running. */
  get running(): number {
    return this.#count;
  }

  /** Resolves once no call is read or running. */
  idle(): Promise<void> {
    return this.#idle.promise;
  }

  /** A `tools/call` request with `id` was read; it counts until its handler starts or it is answered. */
  arrived(id: string | number): void {
    this.#enter();
    this.#waiting.set(id, (this.#waiting.get(id) ?? 0) + 1);
  }

  /** An answer to `id` was sent: a call answered without running (refused) stops counting. */
  answered(id: string | number): void {
    if (this.#take(id)) this.#leave();
  }

  /** Runs `call` (the handler of request `id`), counted while it runs. */
  async track<T>(call: () => Promise<T>, id?: string | number): Promise<T> {
    // A call counted since it was read keeps that count while it runs.
    if (id === undefined || !this.#take(id)) this.#enter();
    try {
      return await call();
    } finally {
      this.#leave();
    }
  }

  #enter(): void {
    if (this.#count++ === 0) this.#idle = Promise.withResolvers<void>();
  }

  #leave(): void {
    if (--this.#count === 0) this.#idle.resolve();
  }

  #take(id: string | number): boolean {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return false;
    if (waiting === 1) this.#waiting.delete(id);
    else this.#waiting.set(id, waiting - 1);
    return true;
  }
}
