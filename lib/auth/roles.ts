/**
 * Who an operator is to Trace: a role, and the tenants they may read.
 *
 * Roles are ordered: each one may do everything the weaker ones may. A
 * tenant scope binds the keys it holds (`user_id: null` binds anonymous
 * evidence only) and leaves the others open.
 *
 * @module
 */

/** Operator roles, weakest first. */
export const ROLES = ["viewer", "analyst", "operator", "admin"] as const;
/** One of {@link ROLES}. */
export type Role = typeof ROLES[number];

/**
 * The tenants a principal may read. An absent key is unscoped; a present
 * `user_id: null` binds anonymous evidence only.
 */
export interface TenantScope {
  /** The one application it may read; absent: every application. */
  application_id?: string;
  /** The one user it may read (`null`: anonymous evidence only); absent: every user. */
  user_id?: string | null;
}

/** Every tenant. */
export const UNSCOPED: TenantScope = Object.freeze({});

/** How a request proved who it is. */
export type AuthMethod = "session" | "bearer";

/** What the directory knows of one operator. */
export interface OperatorAccount {
  /** The operator's name. */
  name: string;
  /** What the operator may do. */
  role: Role;
  /** The tenants the operator may read. */
  scope: TenantScope;
  /**
   * A digest of the account's current credential, kept in memory: sessions
   * opened under another credential (a rotated token) no longer resolve.
   */
  credential: string;
}

/** The authenticated principal of a request. */
export interface Principal {
  /** The operator name (built-in: `local` for the one-time login, `token` for `TRACE_UI_AUTH_TOKEN`). */
  name: string;
  /** What the principal may do. */
  role: Role;
  /** The tenants it may read. */
  scope: TenantScope;
  /** A browser session or a bearer token. */
  via: AuthMethod;
}

/** Position of `role` in {@link ROLES} (higher may do more). */
export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** Whether `role` is `minimum` or stronger. */
export function roleAtLeast(role: Role, minimum: Role): boolean {
  return roleRank(role) >= roleRank(minimum);
}

/** Whether a scope binds any tenant key (the account is tenant-bound). */
export function isTenantBound(scope: TenantScope): boolean {
  return "application_id" in scope || "user_id" in scope;
}
