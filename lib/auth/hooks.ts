/**
 * Host hooks: functions a host program passes to `createApp` so Trace can
 * ask the host what only the host knows. Each may be sync or async.
 *
 * | hook                 | input                                         | required result                                                          |
 * | -------------------- | --------------------------------------------- | ------------------------------------------------------------------------ |
 * | `identityResolver`   | a transient email, the authorized scope        | `{user_id}` (opaque, bounded) and optionally `application_id`, in scope; `null` for no such account |
 * | `artifactResolver`   | a typed resource ref, the authorized scope     | `{ownership_verified: true}`; optional `exists`, `version`, `title_fingerprint` |
 * | `resourceAuthorizer` | a frozen typed ref with version, trace tenant | exactly `true`, after checking current access                            |
 *
 * Results are validated here; anything else, a throw or a hook that takes
 * too long is a {@link HookError} whose message says which hook failed and
 * nothing of what it was asked or answered (the host's own message may hold
 * an email or content, so it is never repeated). An identity resolution
 * that gives no account in scope (`null`, an account outside the scope, or
 * a throw) is one not-found answer, whichever it was.
 *
 * @module
 */

import * as v from "valibot";
import { type ErrorCode, TraceError } from "../errors.ts";
import type { TenantScope } from "./roles.ts";
import { settleWithin } from "../settle_within.ts";

/** A typed opaque resource ref, as trace events carry them. */
export interface ResourceRef {
  /** What it is (`document`, `artifact`, …). */
  type: string;
  /** The host's id for it. */
  id: string;
  /** Which version, when the host versions it. */
  version?: string | undefined;
}

/** What the identity resolver is asked. */
export interface IdentityRequest {
  /** Transient: never stored, logged or echoed by Trace. */
  email: string;
  /** The scope the operator may read in. */
  scope: TenantScope;
}

/** What the identity resolver answers. */
export interface IdentityResolution {
  /** The opaque user id (1 to 256 characters); it must lie inside the operator's scope. */
  user_id: string;
  /** The application the user belongs to, when the host knows it. */
  application_id?: string | undefined;
}

/** What the artifact resolver is asked. */
export interface ArtifactRequest {
  /** The ref an event in the operator's scope names. */
  ref: ResourceRef;
  /** The scope the operator may read in. */
  scope: TenantScope;
}

/** What the artifact resolver answers. */
export interface ArtifactState {
  /** Exactly `true`: the host checked that the ref belongs to the scope. */
  ownership_verified: true;
  /** Whether the artifact still exists. */
  exists?: boolean | undefined;
  /** Its current version. */
  version?: string | undefined;
  /** A digest of its title, so a change shows without the title itself. */
  title_fingerprint?: string | undefined;
}

/** What the resource authorizer is asked: a ref frozen into a replay, and the trace's tenant. */
export interface AuthorizationRequest {
  /** The ref the replay plan would freeze. */
  ref: ResourceRef;
  /** The single tenant of the selected trace. */
  tenant: { application_id: string; user_id: string | null };
}

/** Maps an email to a user id; `null` when the host has no account for it. */
export type IdentityResolver = (
  request: IdentityRequest,
) => IdentityResolution | null | Promise<IdentityResolution | null>;
/** Reports the current state of an artifact the host owns. */
export type ArtifactResolver = (
  request: ArtifactRequest,
) => ArtifactState | Promise<ArtifactState>;
/** Says whether the trace's tenant may still use a resource: exactly `true` means yes. */
export type ResourceAuthorizer = (
  request: AuthorizationRequest,
) => unknown | Promise<unknown>;

/** The hooks a host passes to `createApp`; each is optional. */
export interface HostHooks {
  /** Maps an email to an opaque user id (`POST /traces/account/resolve`). */
  identityResolver?: IdentityResolver | undefined;
  /** Reports the current state of an artifact (`GET /traces/artifact.json`). */
  artifactResolver?: ArtifactResolver | undefined;
  /** Confirms each ref a replay plan freezes. */
  resourceAuthorizer?: ResourceAuthorizer | undefined;
}

/** Names of the hooks. */
export const HOOK_NAMES = [
  "identityResolver",
  "artifactResolver",
  "resourceAuthorizer",
] as const;
/** One of {@link HOOK_NAMES}. */
export type HookName = typeof HOOK_NAMES[number];

/** Which hooks are configured. */
export type HookAvailability = Readonly<Record<HookName, boolean>>;

/** Which of `hooks` are present. */
export function hookAvailability(hooks: HostHooks): HookAvailability {
  return {
    identityResolver: typeof hooks.identityResolver === "function",
    artifactResolver: typeof hooks.artifactResolver === "function",
    resourceAuthorizer: typeof hooks.resourceAuthorizer === "function",
  };
}

/** How long a hook may take before the request gives up on it. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;

/**
 * Why a hook call did not give a usable answer. `no_match`: the identity
 * resolver answered `null` (no account for the email). `out_of_scope`: it
 * named a user the operator may not read. Both are answered as a throw of
 * the identity resolver is, so the answer does not tell an email of another
 * tenant from an unknown one, whether the host says "unknown" with `null`
 * or with a throw; the audit trail records which.
 */
export type HookFailure =
  | "threw"
  | "invalid_result"
  | "timed_out"
  | "refused"
  | "out_of_scope"
  | "no_match";

/** A hook failed; the message names the hook and the failure only. */
export class HookError extends TraceError {
  readonly hook: HookName;
  readonly failure: HookFailure;

  constructor(hook: HookName, failure: HookFailure, message: string) {
    super(hookErrorCode(failure), message);
    this.name = "HookError";
    this.hook = hook;
    this.failure = failure;
  }
}

const FAILURE_WORDS: Record<HookFailure, string> = {
  threw: "failed",
  invalid_result: "answered something other than the required result",
  timed_out: "did not answer in time",
  refused: "did not confirm access",
  out_of_scope: "named an account outside the operator's scope",
  no_match: "has no account for the email",
};

function hookErrorCode(failure: HookFailure): ErrorCode {
  if (failure === "refused" || failure === "out_of_scope") return "forbidden";
  return failure === "no_match" ? "not_found" : "protocol";
}

/**
 * The one answer of an identity resolution that gave no user in scope:
 * whether the host has no account for the email (`null`, or a throw) or the
 * account belongs to another tenant, the operator reads the same words.
 */
const UNRESOLVED =
  "No account in your scope matches this email; check the address, or ask an administrator: the audit trail records what the host's identityResolver answered";

const UNRESOLVED_FAILURES: ReadonlySet<HookFailure> = new Set([
  "no_match",
  "out_of_scope",
  "threw",
]);

/**
 * Whether `error` is an identity resolution that gave no account in scope,
 * answered as not found whichever kind it was (see {@link HookFailure}).
 */
export function isUnresolvedIdentity(error: HookError): boolean {
  return error.hook === "identityResolver" &&
    UNRESOLVED_FAILURES.has(error.failure);
}

function hookError(hook: HookName, failure: HookFailure): HookError {
  return new HookError(
    hook,
    failure,
    `The host's ${hook} ${
      FAILURE_WORDS[failure]
    }; the host program's own log has the detail`,
  );
}

/** Calls `fn` with `input`, bounded in time; any throw becomes a content-free {@link HookError}. */
async function callHook<I>(
  hook: HookName,
  fn: (input: I) => unknown,
  input: I,
  timeoutMs: number,
): Promise<unknown> {
  try {
    return await settleWithin(
      Promise.resolve().then(() => fn(input)),
      timeoutMs,
      () => {
        throw hookError(hook, "timed_out");
      },
    );
  } catch (error) {
    if (error instanceof HookError) throw error;
    throw hookError(hook, "threw");
  }
}

// deno-lint-ignore no-control-regex
const OPAQUE = /^[^\u0000-\u001f\u007f]{1,256}$/;
const Opaque = v.pipe(v.string(), v.regex(OPAQUE));
const Version = v.pipe(v.string(), v.regex(OPAQUE), v.maxLength(128));

const IdentitySchema = v.object({
  user_id: Opaque,
  application_id: v.optional(Opaque),
});

const ArtifactSchema = v.object({
  ownership_verified: v.literal(true),
  exists: v.optional(v.boolean()),
  version: v.optional(Version),
  title_fingerprint: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9:_-]{1,128}$/)),
  ),
});

/** Options of the hook callers. */
export interface HookCallOptions {
  timeoutMs?: number;
}

/** Asks the identity resolver; the answer must be a bounded opaque user id inside `scope`. */
export async function resolveIdentity(
  resolver: IdentityResolver,
  request: IdentityRequest,
  options: HookCallOptions = {},
): Promise<IdentityResolution> {
  let answer: unknown;
  try {
    answer = await callHook(
      "identityResolver",
      resolver,
      request,
      options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
    );
  } catch (error) {
    // Hosts written before `null` existed throw for an email they do not know: answered as `null` is.
    if (error instanceof HookError && error.failure === "threw") {
      throw new HookError("identityResolver", "threw", UNRESOLVED);
    }
    throw error;
  }
  if (answer === null) {
    throw new HookError("identityResolver", "no_match", UNRESOLVED);
  }
  const parsed = v.safeParse(IdentitySchema, answer);
  if (!parsed.success) throw hookError("identityResolver", "invalid_result");
  const { user_id, application_id } = parsed.output;
  const scope = request.scope;
  // A resolver may not answer outside what the operator may read.
  if (
    ("application_id" in scope && application_id !== undefined &&
      application_id !== scope.application_id) ||
    ("user_id" in scope && scope.user_id !== user_id)
  ) {
    throw new HookError("identityResolver", "out_of_scope", UNRESOLVED);
  }
  return application_id === undefined
    ? { user_id }
    : { user_id, application_id };
}

/** Asks the artifact resolver; the answer must verify ownership. */
export async function resolveArtifact(
  resolver: ArtifactResolver,
  request: ArtifactRequest,
  options: HookCallOptions = {},
): Promise<ArtifactState> {
  const answer = await callHook(
    "artifactResolver",
    resolver,
    request,
    options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
  );
  const parsed = v.safeParse(ArtifactSchema, answer);
  if (!parsed.success) throw hookError("artifactResolver", "invalid_result");
  const state: ArtifactState = { ownership_verified: true };
  for (const key of ["exists", "version", "title_fingerprint"] as const) {
    if (parsed.output[key] !== undefined) {
      Object.assign(state, { [key]: parsed.output[key] });
    }
  }
  return state;
}

/** Asks the resource authorizer; anything but exactly `true` refuses. */
export async function authorizeResource(
  authorizer: ResourceAuthorizer,
  request: AuthorizationRequest,
  options: HookCallOptions = {},
): Promise<void> {
  const answer = await callHook(
    "resourceAuthorizer",
    authorizer,
    request,
    options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
  );
  if (answer !== true) throw hookError("resourceAuthorizer", "refused");
}
