/**
 * What every page handler and the page shell know: the Hono environment of
 * UI routes (the principal and session set by the sign-in middleware) and
 * the facts about this server the shell prints.
 *
 * @module
 */

import type { HookAvailability } from "../../lib/auth/mod.ts";
import type { Principal } from "../principal.ts";
import type { SessionClaims, SessionCookie } from "../_session.ts";

/** The server's access settings every request knows (set by the access middleware). */
export interface AccessSettings {
  /** `TRACE_UI_READ_ONLY=true`: every write is refused. */
  readOnly: boolean;
  /** Which host hooks `createApp` was given. */
  hooks: HookAvailability;
}

/** The Hono environment of UI routes: `c.get("principal")` and friends. */
export interface UiEnv {
  Variables: {
    /** Who is asking (set on every signed-in page and JSON twin). */
    principal: Principal;
    /** The cookie session, or `null` for a bearer request. */
    session: SessionClaims | null;
    /** The session's CSRF token for forms, or `null` for a bearer request. */
    csrf: string | null;
    /** Read-only mode and host hooks (`routes/access.ts`). */
    access: AccessSettings;
    /** The session cookie the request carries, once read (`sessionCookie` in `_ui_auth.ts`). */
    sessionCookie: SessionCookie | undefined;
  };
}

/** Facts about this server that the shell shows on every page. */
export interface SiteInfo {
  version: string;
  /** Where the data lives: the database file or a redacted URL. */
  dataLocation: string;
  /** The `--data-dir` / `--db` flags that reach the same data, for printed commands. */
  dataFlags: string;
  /** The origin browsers use behind a proxy (`--public-origin`), for printed commands; absent: the request's `Host`. */
  publicOrigin?: string | undefined;
}

/** Everything the page shell needs besides the page body. */
export interface PageFrame {
  title: string;
  /** The request path, for the current navigation entry. */
  path: string;
  principal: Principal | null;
  csrf: string | null;
  site: SiteInfo;
  /** The page's JSON twin, linked from the head and the footer. */
  jsonHref?: string;
}
