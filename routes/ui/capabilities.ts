/**
 * What the signed-in operator can do on the trace pages, and which host
 * hooks this server has: the one place that says so, for
 * `/traces/capabilities.json` and for pages that offer (or explain the
 * absence of) a control.
 *
 * Host hooks are functions an embedding application hands to the server:
 * an identity resolver (transient email to an opaque user id), an artifact
 * resolver (current state of a typed ref) and a resource authorizer (may
 * this principal use this ref now). Trace never reaches into an account
 * directory or an artifact store on its own, so without a hook its action
 * is unavailable (its endpoint answers 501 once it is served).
 *
 * @module
 */

import { type Principal, type Role, ROLES } from "../principal.ts";

/** The host hooks, by name. */
export const HOST_HOOKS = [
  "identity_resolver",
  "artifact_resolver",
  "resource_authorizer",
] as const;
/** One of {@link HOST_HOOKS}. */
export type HostHookName = typeof HOST_HOOKS[number];

/** The hooks a server was given; none today, so every hooked action reports the hook absent. */
export type HostHooks = Partial<
  Record<HostHookName, (...args: never[]) => unknown>
>;

/** No hooks. */
export const NO_HOOKS: HostHooks = Object.freeze({});

/** One thing an operator may do on the trace pages. */
export interface TraceAction {
  action: string;
  description: string;
  endpoints: string[];
  minimum_role: Role;
  /** The hook the action needs, if any. */
  hook: HostHookName | null;
}

/** Every trace action, weakest role first. */
export const TRACE_ACTIONS: readonly TraceAction[] = [
  {
    action: "metadata_read",
    description: "Find, inspect, compare and export metadata-only trace events",
    endpoints: [
      "GET /traces/find.json",
      "GET /traces/inspect.json",
      "GET /traces/compare.json",
      "GET /traces/events.json",
      "GET /traces/health.json",
    ],
    minimum_role: "viewer",
    hook: null,
  },
  {
    action: "artifact_lookup",
    description: "Look up the current state of an artifact a trace names",
    endpoints: ["GET /traces/artifact.json"],
    minimum_role: "analyst",
    hook: "artifact_resolver",
  },
  {
    action: "replay_draft",
    description: "Freeze a trace's refs into an inert replay draft",
    endpoints: ["GET /traces/replay-plan.json", "POST /traces/replays"],
    minimum_role: "analyst",
    hook: "resource_authorizer",
  },
  {
    action: "account_resolution",
    description: "Resolve a transient email to an opaque user id",
    endpoints: ["POST /traces/account/resolve"],
    minimum_role: "operator",
    hook: "identity_resolver",
  },
  {
    action: "reveal",
    description: "Reveal one event's content preview (audited)",
    endpoints: ["POST /traces/reveal"],
    minimum_role: "admin",
    hook: null,
  },
];

/** Actions this server serves; the others report `not served`. */
export const SERVED_ACTIONS: ReadonlySet<string> = new Set(["metadata_read"]);

/** An action as the current principal has it. */
export interface ActionAvailability extends TraceAction {
  role_allows: boolean;
  hook_configured: boolean | null;
  served: boolean;
  available: boolean;
  /** Why it is unavailable, or `null`. */
  reason: string | null;
}

/** The answer of `/traces/capabilities.json`. */
export interface TraceCapabilities {
  principal: Pick<Principal, "name" | "role" | "scope" | "via">;
  hooks: Record<HostHookName, { configured: boolean }>;
  actions: ActionAvailability[];
}

function atLeast(role: Role, minimum: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(minimum);
}

/** What `principal` can do with `hooks`. */
export function traceCapabilities(
  principal: Principal,
  hooks: HostHooks = NO_HOOKS,
): TraceCapabilities {
  const configured = (name: HostHookName) => typeof hooks[name] === "function";
  return {
    principal: {
      name: principal.name,
      role: principal.role,
      scope: principal.scope,
      via: principal.via,
    },
    hooks: Object.fromEntries(
      HOST_HOOKS.map((name) => [name, { configured: configured(name) }]),
    ) as TraceCapabilities["hooks"],
    actions: TRACE_ACTIONS.map((action) => {
      const roleAllows = atLeast(principal.role, action.minimum_role);
      const hook = action.hook === null ? null : configured(action.hook);
      const served = SERVED_ACTIONS.has(action.action);
      const reason = !roleAllows
        ? `needs role ${action.minimum_role} or above; you are ${principal.role}`
        : hook === false
        ? `needs the ${action.hook} host hook, which this server was not given`
        : !served
        ? "not served by this server"
        : null;
      return {
        ...action,
        endpoints: [...action.endpoints],
        role_allows: roleAllows,
        hook_configured: hook,
        served,
        available: reason === null,
        reason,
      };
    }),
  };
}

/** Why `action` is unavailable to `principal`, or `null` when it is available. */
export function unavailableBecause(
  principal: Principal,
  action: string,
  hooks: HostHooks = NO_HOOKS,
): string | null {
  return traceCapabilities(principal, hooks).actions.find((a) =>
    a.action === action
  )?.reason ?? "unknown action";
}
