/**
 * The permission matrix as data: each action an operator can take, the
 * weakest role that may take it, whether an account bound to one tenant may
 * take it, whether it writes (refused in read-only mode) and whether it is
 * privileged (every attempt goes to the audit trail, and the action fails
 * closed when the entry cannot be written).
 *
 * | role     | metadata reads | artifact lookup, replay drafts | account resolution | content reveal |
 * | -------- | -------------- | ------------------------------ | ------------------ | -------------- |
 * | viewer   | yes            | no                             | no                 | no             |
 * | analyst  | yes            | yes                            | no                 | no             |
 * | operator | yes            | yes                            | yes                | no             |
 * | admin    | yes            | yes                            | yes                | yes            |
 *
 * A tenant-bound account reaches trace actions only (`tenant: true`), always
 * inside its scope; everything else (runs, targets, whole-index health,
 * ingest) needs an unscoped account.
 *
 * @module
 */

import {
  isTenantBound,
  type Principal,
  type Role,
  roleAtLeast,
} from "./roles.ts";
import { readEnvSwitch } from "../env_switch.ts";

/** One row of the matrix. */
export interface ActionRule {
  /** The weakest role allowed, or `null` for actions that need no sign-in. */
  min: Role | null;
  /** Whether a tenant-bound account may take it (inside its scope). */
  tenant: boolean;
  /** Refused in read-only mode. */
  write: boolean;
  /** Audited; fails closed when the audit entry cannot be written. */
  privileged: boolean;
  /** What the action is, in words (capabilities, refusals). */
  label: string;
}

/** Every action, with its rule. */
export const ACTIONS = {
  /** Liveness, hashed assets, sign-in and sign-out pages. */
  public: {
    min: null,
    tenant: true,
    write: false,
    privileged: false,
    label: "public pages",
  },
  /** What a signed-in operator may know about their own session. */
  session: {
    min: "viewer",
    tenant: true,
    write: false,
    privileged: false,
    label: "your session and capabilities",
  },
  /** Metadata-only trace events, lineage, summaries, replay plans' inputs. */
  "trace.read": {
    min: "viewer",
    tenant: true,
    write: false,
    privileged: false,
    label: "reading trace metadata",
  },
  /** Whole-index health: counts and parity across every tenant. */
  "index.health": {
    min: "viewer",
    tenant: false,
    write: false,
    privileged: false,
    label: "index health across every tenant",
  },
  /** Runs, targets, regressions, comparisons and the reference suite. */
  "runs.read": {
    min: "viewer",
    tenant: false,
    write: false,
    privileged: false,
    label: "reading runs, targets and regressions",
  },
  /** Starting runs and replays, saving regressions, reference runs. */
  "runs.write": {
    min: "operator",
    tenant: false,
    write: true,
    privileged: false,
    label: "starting runs and saving regressions",
  },
  /** Writing events into the index as an operator (the ingest token does this for collectors). */
  "index.write": {
    min: "admin",
    tenant: false,
    write: true,
    privileged: false,
    label: "writing to the trace index",
  },
  /** Current state of a host artifact, through the artifact resolver. */
  "artifact.lookup": {
    min: "analyst",
    tenant: true,
    write: false,
    privileged: true,
    label: "looking up current artifacts",
  },
  /** The inert replay plan of a selection, through the resource authorizer. */
  "replay.plan": {
    min: "analyst",
    tenant: true,
    write: false,
    privileged: true,
    label: "planning replays",
  },
  /** Reviewing stored replay drafts. */
  "replay.read": {
    min: "analyst",
    tenant: true,
    write: false,
    privileged: false,
    label: "reviewing replay drafts",
  },
  /** Storing an inert replay draft. */
  "replay.draft": {
    min: "analyst",
    tenant: true,
    write: true,
    privileged: true,
    label: "creating replay drafts",
  },
  /** Resolving an email to a user id, through the identity resolver. */
  "account.resolve": {
    min: "operator",
    tenant: true,
    write: false,
    privileged: true,
    label: "resolving accounts",
  },
  /** Showing one event's content preview, once, with a stated reason. */
  "content.reveal": {
    min: "admin",
    tenant: true,
    write: false,
    privileged: true,
    label: "revealing content",
  },
  /** Erasing a subject from the index (`POST /api/erasures`), dry run or applied. */
  "subject.erase": {
    min: "admin",
    tenant: false,
    write: true,
    privileged: true,
    label: "erasing a subject from the index",
  },
} as const satisfies Record<string, ActionRule>;

/** One of the {@link ACTIONS}. */
export type Action = keyof typeof ACTIONS;

/** Every action name, in matrix order. */
export const ACTION_NAMES = Object.keys(ACTIONS) as Action[];

/** The actions every attempt at which goes to the audit trail, in matrix order. */
export const AUDITED_ACTIONS: readonly Action[] = ACTION_NAMES.filter((name) =>
  ACTIONS[name].privileged
);

/** Why an action is refused. */
export type Refusal = "role" | "tenant" | "read_only";

/** The decision on one action. */
export type Decision =
  | { allowed: true }
  | { allowed: false; reason: Refusal; message: string };

/** The server-wide mode a decision is made in. */
export interface AccessMode {
  /** `TRACE_UI_READ_ONLY=true`: every write is refused. */
  readOnly: boolean;
}

/** Whether `principal` may take `action` in `mode` (read-only refuses writes). */
export function can(
  principal: Principal | null,
  action: Action,
  mode: AccessMode = { readOnly: false },
): boolean {
  return decide(principal, action, mode).allowed;
}

/**
 * The decision on `action` for `principal` (`null`: not signed in, allowed
 * only public actions), with a content-free message when refused.
 */
export function decide(
  principal: Principal | null,
  action: Action,
  mode: AccessMode = { readOnly: false },
): Decision {
  const rule: ActionRule = ACTIONS[action];
  if (rule.write && mode.readOnly) {
    return refuse(
      "read_only",
      `This server is read-only (TRACE_UI_READ_ONLY=true): ${rule.label} is refused`,
    );
  }
  if (rule.min === null) return { allowed: true };
  if (principal === null) {
    return refuse("role", `Sign in first: ${rule.label} needs an account`);
  }
  if (!roleAtLeast(principal.role, rule.min)) {
    return refuse(
      "role",
      `Forbidden: ${rule.label} needs the ${rule.min} role or above; this account is ${principal.role}`,
    );
  }
  if (!rule.tenant && isTenantBound(principal.scope)) {
    return refuse(
      "tenant",
      `Forbidden: this account is bound to one tenant and reaches the traces of that tenant only; ${rule.label} needs an unscoped account`,
    );
  }
  return { allowed: true };
}

function refuse(reason: Refusal, message: string): Decision {
  return { allowed: false, reason, message };
}

/** The environment variable that turns read-only mode on. */
export const READ_ONLY_ENV = "TRACE_UI_READ_ONLY";

/**
 * Reads {@link READ_ONLY_ENV}: `true` turns read-only mode on, unset or
 * `false` leaves it off. Set but empty is refused, as an empty credential
 * is: a CI variable that did not expand must not turn read-only mode off.
 */
export function readOnlyFromEnv(value: string | undefined): boolean {
  return readEnvSwitch(READ_ONLY_ENV, value, "refuse every write");
}
