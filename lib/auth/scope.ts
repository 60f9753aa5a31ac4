/**
 * Scope narrowing: the one rule every reader applies before it reads trace
 * evidence for an operator. A request may narrow an account's scope, never
 * widen it: for each key the account binds, the request may repeat the bound
 * value or leave it out (it is then filled in); any other value is refused.
 * Keys the account leaves open pass through as the request gave them.
 *
 * @module
 */

import { TraceError } from "../errors.ts";
import type { TenantScope } from "./roles.ts";

/** The tenant keys a scope may bind, in the order messages name them. */
export const SCOPE_KEYS = ["application_id", "user_id"] as const;
/** One of {@link SCOPE_KEYS}. */
export type ScopeKey = typeof SCOPE_KEYS[number];

/** What a request asks for on the scope keys (a trace filter, a body). */
export interface ScopeRequest {
  /** The application asked for; absent: whatever the scope allows. */
  application_id?: string | undefined;
  /** The user asked for (`null`: anonymous evidence); absent: whatever the scope allows. */
  user_id?: string | null | undefined;
}

/** A request reached outside the account's scope (403, content-free). */
export class ScopeError extends TraceError {
  /** The key that reached outside. */
  readonly key: ScopeKey;

  constructor(key: ScopeKey) {
    super(
      "forbidden",
      `Forbidden: the requested ${
        key === "user_id" ? "user" : "application"
      } is outside this account's scope; leave ${key} out to read within it`,
    );
    this.name = "ScopeError";
    this.key = key;
  }
}

/**
 * `requested` with the account's bound keys filled in; throws a
 * {@link ScopeError} when it asks for another tenant than a bound key allows
 * (`user_id: null`, anonymous only, is a value like any other).
 */
export function narrowScope<T extends ScopeRequest>(
  scope: TenantScope,
  requested: T,
): T {
  const narrowed: T = { ...requested };
  for (const key of SCOPE_KEYS) {
    if (!(key in scope)) continue;
    const bound = scope[key];
    const asked = requested[key];
    if (asked !== undefined && asked !== bound) throw new ScopeError(key);
    Object.assign(narrowed, { [key]: bound });
  }
  return narrowed;
}

/** The tenant keys `request` gives, as a scope (keys it leaves undefined are left out). */
export function tenantOf(request: ScopeRequest): TenantScope {
  const tenant: TenantScope = {};
  if (request.application_id !== undefined) {
    tenant.application_id = request.application_id;
  }
  if (request.user_id !== undefined) tenant.user_id = request.user_id;
  return tenant;
}

/** Whether an event's tenant lies inside `scope`. */
export function inScope(
  scope: TenantScope,
  tenant: { application_id: string; user_id: string | null },
): boolean {
  return SCOPE_KEYS.every((key) =>
    !(key in scope) || scope[key] === tenant[key]
  );
}

/** The scope as words: `application "app-1", anonymous users`. */
export function describeScope(scope: TenantScope): string {
  const parts: string[] = [];
  if ("application_id" in scope) {
    parts.push(`application ${JSON.stringify(scope.application_id)}`);
  }
  if ("user_id" in scope) {
    parts.push(
      scope.user_id === null
        ? "anonymous users"
        : `user ${JSON.stringify(scope.user_id)}`,
    );
  }
  return parts.length === 0 ? "every tenant" : parts.join(", ");
}
