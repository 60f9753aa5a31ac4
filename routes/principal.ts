/**
 * Who is asking: the authenticated principal of a UI request, and the
 * directory that turns an operator name into one.
 *
 * A session names an operator and nothing else; the role and the tenant scope
 * are looked up in the directory on every request, so an account that is
 * removed or downgraded takes effect at once. Today the directory holds the
 * two built-in administrators (the one-time login and `TRACE_UI_AUTH_TOKEN`);
 * configured accounts (`TRACE_UI_AUTH_ACCOUNTS`) slot in as more entries.
 *
 * @module
 */

import { timingSafeEqual } from "hono/utils/buffer";

/** Operator roles, weakest first. */
export const ROLES = ["viewer", "analyst", "operator", "admin"] as const;
/** One of {@link ROLES}. */
export type Role = typeof ROLES[number];

/**
 * The tenants a principal may read. An absent key is unscoped; a present
 * `user_id: null` binds anonymous evidence only.
 */
export interface TenantScope {
  application_id?: string;
  user_id?: string | null;
}

/** Every tenant. */
export const UNSCOPED: TenantScope = Object.freeze({});

/** How the request proved who it is. */
export type AuthMethod = "session" | "bearer";

/** The authenticated principal of a request (`c.get("principal")`). */
export interface Principal {
  /** The operator name (built-in: `local` for the one-time login, `token` for `TRACE_UI_AUTH_TOKEN`). */
  name: string;
  role: Role;
  scope: TenantScope;
  via: AuthMethod;
}

/** What the directory knows of one operator. */
export interface OperatorAccount {
  name: string;
  role: Role;
  scope: TenantScope;
}

/** Operator name of sessions opened with the one-time login URL. */
export const LOCAL_OPERATOR = "local";
/** Operator name of `TRACE_UI_AUTH_TOKEN` (sessions and bearer requests). */
export const TOKEN_OPERATOR = "token";

/** Resolves operator names and tokens to accounts, from the current configuration. */
export interface OperatorDirectory {
  /** The account of `name` now, or `null` when it no longer exists. */
  resolve(name: string): OperatorAccount | null;
  /** The account a bearer or login token belongs to, or `null`. */
  byToken(token: string): Promise<OperatorAccount | null>;
}

/** The built-in directory: `local` while a one-time login exists, `token` while the admin token is set. */
export function builtinDirectory(options: {
  adminToken: string | undefined;
  oneTimeLogin: boolean;
}): OperatorDirectory {
  const admin = (name: string): OperatorAccount => ({
    name,
    role: "admin",
    scope: UNSCOPED,
  });
  return {
    resolve(name) {
      if (name === LOCAL_OPERATOR && options.oneTimeLogin) return admin(name);
      if (name === TOKEN_OPERATOR && options.adminToken !== undefined) {
        return admin(name);
      }
      return null;
    },
    async byToken(token) {
      const expected = options.adminToken;
      if (expected === undefined) return null;
      return await timingSafeEqual(token, expected)
        ? admin(TOKEN_OPERATOR)
        : null;
    },
  };
}
