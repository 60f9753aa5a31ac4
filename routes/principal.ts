/**
 * Who is asking: the authenticated principal of a request, and the
 * directory that turns an operator name or a token into one.
 *
 * A session names an operator and nothing else; the role and the tenant
 * scope are looked up in the directory on every request, so an account that
 * is removed or downgraded takes effect at once. The directory holds the two
 * built-in administrators (the one-time login and `TRACE_UI_AUTH_TOKEN`) and
 * the configured accounts (`TRACE_UI_AUTH_ACCOUNTS`); the domain side lives
 * in `lib/auth/`.
 *
 * @module
 */

export {
  type AuthMethod,
  LOCAL_OPERATOR,
  type OperatorAccount,
  type OperatorDirectory,
  type Principal,
  type Role,
  ROLES,
  type TenantScope,
  TOKEN_OPERATOR,
  UNSCOPED,
} from "../lib/auth/mod.ts";
