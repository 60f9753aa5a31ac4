/**
 * What the current principal may do on this server, in one answer: the
 * principal, read-only mode, which host hooks are configured, and for each
 * action whether it is available and, if not, why (its role, its tenant
 * binding, read-only mode, or a missing hook). Pages use it to enable or
 * disable their controls; `/traces/capabilities.json` serves it.
 *
 * @module
 */

import { type Action, ACTION_NAMES, ACTIONS, decide } from "./permissions.ts";
import type { HookAvailability, HookName } from "./hooks.ts";
import { isTenantBound, type Principal, type TenantScope } from "./roles.ts";

/** The hook each hook-backed action needs. */
export const ACTION_HOOKS: Readonly<Partial<Record<Action, HookName>>> = {
  "artifact.lookup": "artifactResolver",
  "replay.plan": "resourceAuthorizer",
  "replay.draft": "resourceAuthorizer",
  "account.resolve": "identityResolver",
};

/** Where each operator action is served. */
export const ACTION_ENDPOINTS: Readonly<Partial<Record<Action, string>>> = {
  "artifact.lookup": "GET /traces/artifact.json",
  "replay.plan": "GET /traces/replay-plan.json",
  "replay.draft": "POST /traces/replays",
  "account.resolve": "POST /traces/account/resolve",
  "content.reveal": "POST /traces/reveal",
};

/** Why an action is unavailable. */
export type Unavailable = "role" | "tenant" | "read_only" | "hook_missing";

/** One action, for the current principal. */
export interface ActionCapability {
  /** The action. */
  action: Action;
  /** Its name for people. */
  label: string;
  /** Whether this principal may take it on this server. */
  allowed: boolean;
  /** Why not, or `null` when allowed. */
  reason: Unavailable | null;
  /** What to tell a person about a refusal, or `null`. */
  message: string | null;
  /** The host hook it needs, if any. */
  hook: HookName | null;
  /** Method and path, for the operator actions. */
  endpoint: string | null;
  /** Whether every attempt at it goes to the audit trail. */
  privileged: boolean;
}

/** Everything the capabilities answer holds. */
export interface Capabilities {
  /** Who is asking: name, role, scope, and whether the scope binds one tenant. */
  principal: {
    name: string;
    role: Principal["role"];
    scope: TenantScope;
    tenant_bound: boolean;
  };
  /** Whether the server refuses every write. */
  read_only: boolean;
  /** Which host hooks the server has. */
  hooks: HookAvailability;
  /** Each operator action, and whether this principal may take it here. */
  actions: ActionCapability[];
}

/** What {@link describeCapabilities} needs besides the principal. */
export interface CapabilityContext {
  /** Which host hooks the server has. */
  hooks: HookAvailability;
  /** Whether the server refuses every write. */
  readOnly: boolean;
}

/** The capabilities of `principal` on a server with `context`. */
export function describeCapabilities(
  principal: Principal,
  context: CapabilityContext,
): Capabilities {
  return {
    principal: {
      name: principal.name,
      role: principal.role,
      scope: principal.scope,
      tenant_bound: isTenantBound(principal.scope),
    },
    read_only: context.readOnly,
    hooks: context.hooks,
    actions: ACTION_NAMES
      .filter((action) => ACTIONS[action].min !== null)
      .map((action) => actionCapability(principal, action, context)),
  };
}

/** One action's capability for `principal`. */
export function actionCapability(
  principal: Principal,
  action: Action,
  context: CapabilityContext,
): ActionCapability {
  const rule = ACTIONS[action];
  const hook = ACTION_HOOKS[action] ?? null;
  const base = {
    action,
    label: rule.label,
    hook,
    endpoint: ACTION_ENDPOINTS[action] ?? null,
    privileged: rule.privileged,
  };
  const decision = decide(principal, action, { readOnly: context.readOnly });
  if (!decision.allowed) {
    return {
      ...base,
      allowed: false,
      reason: decision.reason,
      message: decision.message,
    };
  }
  if (hook !== null && !context.hooks[hook]) {
    return {
      ...base,
      allowed: false,
      reason: "hook_missing",
      message: missingHookMessage(hook),
    };
  }
  return { ...base, allowed: true, reason: null, message: null };
}

/** The 501 answer of an action whose hook the host did not configure. */
export function missingHookMessage(hook: HookName): string {
  return `This server has no ${hook}: the host program passes one to createApp to enable this`;
}
