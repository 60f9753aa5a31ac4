/**
 * Sign-in for the UI's pages and JSON twins (the ingest API keeps its own
 * bearer rule in `_guard.ts`). A request is signed in by
 *
 * - `Authorization: Bearer <token>` of a known operator (scripts), or
 * - a session cookie (`_session.ts`) whose operator still exists.
 *
 * Either way the operator's role and scope are read from the directory on
 * this request and set as `c.get("principal")`. Writes made with a session
 * cookie also need the session's CSRF token (`_csrf` form field or
 * `X-CSRF-Token` header); bearer requests carry no ambient credential, so
 * they need none. The origin rules of `_guard.ts` apply to all of them.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { HTTPException } from "hono/http-exception";
import { ConfigError } from "../lib/errors.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import { checkToken } from "./_guard.ts";
import {
  builtinDirectory,
  type OperatorAccount,
  type OperatorDirectory,
} from "./principal.ts";
import { createSessionSigner, type SessionSigner } from "./_session.ts";
import type { OneTimeLogin } from "./one_time_login.ts";
import type { UiEnv } from "./ui/context.ts";

/** Options that decide how people sign in to the UI. */
export interface UiAuthOptions {
  /** The address the server listens on (default `127.0.0.1`). */
  hostname?: string | undefined;
  /** `TRACE_UI_AUTH_TOKEN`: an unscoped administrator token. */
  uiAuthToken?: string | undefined;
  /** `TRACE_INGEST_TOKEN`, which the admin token must not equal. */
  ingestToken?: string | undefined;
  /** A one-time login URL's token (loopback only). */
  oneTimeLogin?: OneTimeLogin | undefined;
  /** Session lifetime in seconds (default 12 hours). */
  sessionTtlSeconds?: number | undefined;
}

/** The UI's sign-in state, made once per app. */
export interface UiAuth {
  signer: SessionSigner;
  directory: OperatorDirectory;
  oneTimeLogin: OneTimeLogin | undefined;
  /** Whether `TRACE_UI_AUTH_TOKEN` is set. */
  adminToken: boolean;
}

/**
 * Checks the UI sign-in options: throws a `ConfigError` for a malformed
 * admin token, an admin token equal to the ingest token (every ingest
 * client would be an administrator), or a one-time login on a non-loopback
 * address (its URL would cross the network in the clear to anyone who can
 * reach the port).
 */
export function checkUiAuthOptions(options: UiAuthOptions): void {
  const token = options.uiAuthToken;
  if (token !== undefined) {
    checkToken(token, "TRACE_UI_AUTH_TOKEN");
    if (token === options.ingestToken) {
      throw new ConfigError(
        "TRACE_UI_AUTH_TOKEN must differ from TRACE_INGEST_TOKEN; give the UI administrator its own secret",
      );
    }
  }
  const hostname = options.hostname ?? "127.0.0.1";
  if (options.oneTimeLogin && !isLoopbackHost(hostname)) {
    throw new ConfigError(
      `Refusing a one-time login URL on non-loopback host ${hostname}; set TRACE_UI_AUTH_TOKEN to sign in instead`,
    );
  }
}

/** Builds the sign-in state after {@link checkUiAuthOptions}. */
export function createUiAuth(options: UiAuthOptions): UiAuth {
  checkUiAuthOptions(options);
  const token = options.uiAuthToken;
  return {
    signer: createSessionSigner(
      options.sessionTtlSeconds === undefined
        ? {}
        : { ttlSeconds: options.sessionTtlSeconds },
    ),
    directory: builtinDirectory({
      adminToken: token,
      oneTimeLogin: options.oneTimeLogin !== undefined,
    }),
    oneTimeLogin: options.oneTimeLogin,
    adminToken: token !== undefined,
  };
}

/**
 * The session cookie's name. Cookies ignore ports, so two servers on one
 * host would overwrite each other's sessions under one name.
 */
export function sessionCookieName(c: Context): string {
  const url = new URL(c.req.url);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `trace_session_${port}`;
}

/** Opens a session for `account`: sets the cookie. */
export async function startSession(
  c: Context,
  auth: UiAuth,
  account: OperatorAccount,
): Promise<void> {
  const { value } = await auth.signer.issue(account.name);
  setCookie(c, sessionCookieName(c), value, {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    maxAge: auth.signer.ttlSeconds,
    secure: new URL(c.req.url).protocol === "https:",
  });
}

/** Ends the request's session, if any: revokes it and clears the cookie. */
export async function endSession(c: Context, auth: UiAuth): Promise<void> {
  const name = sessionCookieName(c);
  const value = getCookie(c, name);
  const claims = value ? await auth.signer.verify(value) : null;
  if (claims) auth.signer.revoke(claims);
  if (value !== undefined) deleteCookie(c, name, { path: "/" });
}

/** The account of the request's valid session, or `null`. */
export async function sessionAccount(
  c: Context,
  auth: UiAuth,
): Promise<OperatorAccount | null> {
  const value = getCookie(c, sessionCookieName(c));
  const claims = value ? await auth.signer.verify(value) : null;
  return claims ? auth.directory.resolve(claims.op) : null;
}

const BEARER_REFUSED =
  "Missing or wrong bearer token; send Authorization: Bearer $TRACE_UI_AUTH_TOKEN";
const SIGN_IN_FIRST =
  "Sign in first: open the login URL trace serve printed, or send Authorization: Bearer $TRACE_UI_AUTH_TOKEN";

/**
 * Requires a signed-in principal. Without one, a page redirects to the
 * login page (which returns here afterwards) and a JSON twin answers 401.
 */
export function requirePrincipal(
  auth: UiAuth,
  kind: "page" | "json",
): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const token = /^Bearer /i.test(header) ? header.slice(7) : "";
      const account = token ? await auth.directory.byToken(token) : null;
      if (!account) {
        c.header("WWW-Authenticate", 'Bearer realm="trace"');
        throw new HTTPException(401, { message: BEARER_REFUSED });
      }
      c.set("principal", { ...account, via: "bearer" });
      c.set("session", null);
      c.set("csrf", null);
      return await next();
    }
    const name = sessionCookieName(c);
    const value = getCookie(c, name);
    const claims = value ? await auth.signer.verify(value) : null;
    const account = claims ? auth.directory.resolve(claims.op) : null;
    if (!claims || !account) {
      // A cookie that no longer opens anything is cleared, not kept around.
      if (value !== undefined) deleteCookie(c, name, { path: "/" });
      if (kind === "json") {
        c.header("WWW-Authenticate", 'Bearer realm="trace"');
        throw new HTTPException(401, { message: SIGN_IN_FIRST });
      }
      const here = new URL(c.req.url);
      return c.redirect(
        `/login?next=${encodeURIComponent(here.pathname + here.search)}`,
        303,
      );
    }
    c.set("principal", { ...account, via: "session" });
    c.set("session", claims);
    c.set("csrf", await auth.signer.csrfToken(claims.sid));
    await next();
  };
}

/**
 * Requires the session's CSRF token on a write made with a session cookie
 * (after {@link requirePrincipal}). Reads the `X-CSRF-Token` header, else the
 * `_csrf` field of a form body.
 */
export function requireCsrf(auth: UiAuth): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const session = c.get("session");
    if (session !== null) {
      const given = c.req.header("x-csrf-token") ?? await formField(c, "_csrf");
      if (!(await auth.signer.checkCsrf(session.sid, given))) {
        throw new HTTPException(403, {
          message:
            "The form's CSRF token is missing or out of date; reload the page and try again",
        });
      }
    }
    await next();
  };
}

/** A string field of a URL-encoded or multipart body (`""` when absent). */
export async function formField(c: Context, name: string): Promise<string> {
  const type = c.req.header("content-type") ?? "";
  if (
    !type.startsWith("application/x-www-form-urlencoded") &&
    !type.startsWith("multipart/form-data")
  ) return "";
  // parseBody caches, so the handler can read the same body again.
  const body = await c.req.parseBody();
  const value = body[name];
  return typeof value === "string" ? value : "";
}
