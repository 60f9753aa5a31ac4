/**
 * Sign-in for the UI's pages and JSON twins (the ingest API keeps its own
 * bearer rule, `access.ts`). A request is signed in by
 *
 * - `Authorization: Bearer <token>` of a known operator (scripts), or
 * - a session cookie (`_session.ts`) whose operator still exists with the
 *   credential the session was opened with.
 *
 * Either way the operator's role and scope are read from the directory on
 * this request and set as `c.get("principal")`. Writes made with a session
 * cookie also need the session's CSRF token (`_csrf` form field or
 * `X-CSRF-Token` header); bearer requests carry no ambient credential, so
 * they need none. The origin rules of `_guard.ts` apply to all of them.
 * The access middleware (`access.ts`) signs requests in before any route;
 * {@link requirePrincipal} is the same check for routes mounted without it.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { HTTPException } from "hono/http-exception";
import {
  type AccountBook,
  createOperatorDirectory,
  type OperatorAccount,
  type OperatorDirectory,
} from "../lib/auth/mod.ts";
import { ConfigError } from "../lib/errors.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import {
  checkToken,
  isPublicHost,
  originPort,
  ownOrigin,
  type PublicOrigin,
} from "./_guard.ts";
import { HttpRefusal } from "./_audit_refusals.ts";
import { isFormBody, readFormBody } from "./_body.ts";
import {
  createSessionSigner,
  type SessionClaims,
  type SessionCookie,
  type SessionSigner,
} from "./_session.ts";
import type { OneTimeLogin } from "./one_time_login.ts";
import type { UiEnv } from "./ui/context.ts";
import { clipValue } from "../lib/echo.ts";

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
  /** `TRACE_UI_AUTH_ACCOUNTS`: operator accounts, as a config or a replaceable {@link AccountBook}. */
  accounts?: AccountBook | unknown;
  /** The origin browsers use, as `parsePublicOrigin` returns it (`_guard.ts`). */
  publicOrigin?: PublicOrigin | undefined;
}

/** The UI's sign-in state, made once per app. */
export interface UiAuth {
  signer: SessionSigner;
  directory: OperatorDirectory;
  oneTimeLogin: OneTimeLogin | undefined;
  /** Whether `TRACE_UI_AUTH_TOKEN` is set. */
  adminToken: boolean;
  /** The origin browsers use behind a proxy (`https://…`), or `undefined`. */
  publicOrigin: PublicOrigin | undefined;
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
      `Refusing a one-time login URL on non-loopback host ${
        clipValue(hostname)
      }; set TRACE_UI_AUTH_TOKEN to sign in instead`,
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
    // Validates the accounts against both tokens: a ConfigError names the account.
    directory: createOperatorDirectory({
      adminToken: token,
      ingestToken: options.ingestToken,
      oneTimeLogin: options.oneTimeLogin !== undefined,
      accounts: options.accounts,
    }),
    oneTimeLogin: options.oneTimeLogin,
    adminToken: token !== undefined,
    publicOrigin: options.publicOrigin,
  };
}

/** Whether anyone can sign in with a token (the admin token or an account's). */
export function tokenSignIn(auth: UiAuth): boolean {
  return auth.directory.hasTokens();
}

/**
 * The session cookie's name, `trace_session_<port>`. Cookies ignore ports,
 * so two servers on one host would overwrite each other's sessions under one
 * name: the port is that of the origin the browser is on, which no other
 * server on that host holds. Behind a proxy it is the public origin's (443
 * for `https://trace.example.com`), not the port of the `Host` the proxy
 * passes on (none, read as 80, for nginx's `$host`). A request on a loopback
 * name that is not the public host keeps the listener's port: a browser on
 * this machine reached the listener itself (or the proxy passed on the
 * upstream's address), and two servers cannot share a listener's port.
 */
function sessionCookieName(c: Context, auth: UiAuth): string {
  return cookieNameFor(cookiePort(c, auth.publicOrigin));
}

/** The session cookie's name for browsers that reach the server on `publicOrigin`. */
export function publicSessionCookieName(publicOrigin: PublicOrigin): string {
  return cookieNameFor(publicOrigin.port);
}

function cookieNameFor(port: string): string {
  return `trace_session_${port}`;
}

function cookiePort(
  c: Context,
  publicOrigin: PublicOrigin | undefined,
): string {
  const url = new URL(c.req.url);
  if (publicOrigin !== undefined) {
    const host = c.req.header("host") ?? url.host;
    if (isPublicHost(host, publicOrigin) || !isLoopbackHost(url.hostname)) {
      return publicOrigin.port;
    }
  }
  return originPort(url);
}

/**
 * The request's session cookie, named and read on the first call and kept
 * on the request's context (`sessionCookie`) for every later one: the
 * access middleware, the sign-in pages and sign-out all ask.
 */
export function sessionCookie(c: Context, auth: UiAuth): SessionCookie {
  const context = c as Context<UiEnv>;
  const read = context.get("sessionCookie");
  if (read !== undefined) return read;
  const name = sessionCookieName(c, auth);
  const cookie = { name, value: getCookie(c, name) };
  context.set("sessionCookie", cookie);
  return cookie;
}

/** Opens a session for `account`: sets the cookie. */
export async function startSession(
  c: Context,
  auth: UiAuth,
  account: OperatorAccount,
): Promise<void> {
  const { value } = await auth.signer.issue(account.name, account.credential);
  setCookie(c, sessionCookie(c, auth).name, value, {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    maxAge: auth.signer.ttlSeconds,
    secure: secureCookie(c, auth),
  });
}

/**
 * Whether the session cookie is `Secure`: when browsers reach the server over
 * https. Behind a TLS proxy the request itself arrives as plain http, so the
 * public origin says it.
 */
function secureCookie(c: Context, auth: UiAuth): boolean {
  return new URL(c.req.url).protocol === "https:" ||
    auth.publicOrigin?.https === true;
}

/** Ends the request's session, if any: revokes it and clears the cookie. */
export async function endSession(c: Context, auth: UiAuth): Promise<void> {
  const { name, value } = sessionCookie(c, auth);
  const claims = value ? await auth.signer.verify(value) : null;
  if (claims) auth.signer.revoke(claims);
  if (value !== undefined) {
    deleteCookie(c, name, { path: "/", secure: secureCookie(c, auth) });
  }
}

/** Whether the request carries this server's session cookie, valid or not. */
export function hasSessionCookie(c: Context, auth: UiAuth): boolean {
  return sessionCookie(c, auth).value !== undefined;
}

/** The account of the request's valid session, or `null`. */
export async function sessionAccount(
  c: Context,
  auth: UiAuth,
): Promise<OperatorAccount | null> {
  return (await validSession(c, auth))?.account ?? null;
}

/** A session cookie that still opens an account. */
export interface ValidSession {
  claims: SessionClaims;
  account: OperatorAccount;
}

/**
 * The request's session when its cookie is valid, its operator still exists
 * and still holds the credential the session was opened with; else `null`.
 */
export async function validSession(
  c: Context,
  auth: UiAuth,
): Promise<ValidSession | null> {
  const { value } = sessionCookie(c, auth);
  const claims = value ? await auth.signer.verify(value) : null;
  if (!claims) return null;
  const account = auth.directory.resolve(claims.op);
  if (!account) return null;
  if (!(await auth.signer.checkCredential(claims, account.credential))) {
    return null;
  }
  return { claims, account };
}

/**
 * Whether the browser says the request was typed, pasted or bookmarked
 * (`Sec-Fetch-Site: none`) or came from this origin. The origin guard lets
 * a GET navigation from another site through (a link to a page), and from a
 * page on another port of this host (`same-site`) the session cookie goes
 * with it, `SameSite=Strict` notwithstanding; a request this decides is not
 * the operator's own must not act for them. `Sec-Fetch-Site` is set by the
 * browser (no page can forge it), so when present it decides; a browser
 * without it still sends the page a link was followed from as `Referer`: one
 * from another origin (or one that does not parse) is refused as
 * `cross-site` is (the public origin, behind a proxy, is this origin). A
 * request with neither header (a typed URL in such a browser, a script) is
 * trusted.
 */
export function typedOrOwnPage(
  c: Context,
  publicOrigin: PublicOrigin | undefined,
): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined) return site === "none" || site === "same-origin";
  const referer = c.req.header("referer");
  return referer === undefined ||
    ownOrigin(referer, c.req.header("host"), publicOrigin);
}

/** The bearer token of the request: `undefined` without an `Authorization` header, `""` when it is not a bearer token. */
export function bearerToken(c: Context): string | undefined {
  const header = c.req.header("authorization");
  if (header === undefined) return undefined;
  return /^Bearer /i.test(header) ? header.slice(7) : "";
}

/** Refuses a request as not signed in: 401 with `WWW-Authenticate`. */
export function refuseUnauthenticated(c: Context, message: string): never {
  c.header("WWW-Authenticate", 'Bearer realm="trace"');
  throw new HTTPException(401, { message });
}

/** Sets the principal of a bearer request. */
export function signInBearer(
  c: Context<UiEnv>,
  account: OperatorAccount,
): void {
  c.set("principal", { ...toPrincipal(account), via: "bearer" });
  c.set("session", null);
  c.set("csrf", null);
}

/** Sets the principal of a session request, with the session's CSRF token. */
export async function signInSession(
  c: Context<UiEnv>,
  auth: UiAuth,
  session: ValidSession,
): Promise<void> {
  c.set("principal", { ...toPrincipal(session.account), via: "session" });
  c.set("session", session.claims);
  c.set("csrf", await auth.signer.csrfToken(session.claims.sid));
}

function toPrincipal(account: OperatorAccount) {
  return { name: account.name, role: account.role, scope: account.scope };
}

/** Clears a session cookie that no longer opens anything. */
export function clearStaleCookie(c: Context, auth: UiAuth): void {
  const { name, value } = sessionCookie(c, auth);
  if (value !== undefined) {
    deleteCookie(c, name, { path: "/", secure: secureCookie(c, auth) });
  }
}

/** The refusal of a bearer token no account holds. */
export const BEARER_REFUSED =
  "Missing or wrong bearer token; send Authorization: Bearer with TRACE_UI_AUTH_TOKEN or your operator token";
/** The refusal of a JSON request without sign-in. */
export const SIGN_IN_FIRST =
  "Sign in first: open the login URL trace serve printed, or send Authorization: Bearer with TRACE_UI_AUTH_TOKEN or your operator token";

/**
 * Requires a signed-in principal. Without one, a page redirects to the
 * login page (which returns here afterwards) and a JSON twin answers 401.
 */
export function requirePrincipal(
  auth: UiAuth,
  kind: "page" | "json",
): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    // The access middleware of `createApp` has already signed the request in.
    if (c.get("principal")) return await next();
    const token = bearerToken(c);
    if (token !== undefined) {
      const account = token ? await auth.directory.byToken(token) : null;
      if (!account) refuseUnauthenticated(c, BEARER_REFUSED);
      signInBearer(c, account);
      return await next();
    }
    const session = await validSession(c, auth);
    if (!session) {
      // A cookie that no longer opens anything is cleared, not kept around.
      clearStaleCookie(c, auth);
      if (kind === "json") refuseUnauthenticated(c, SIGN_IN_FIRST);
      return redirectToLogin(c);
    }
    await signInSession(c, auth, session);
    await next();
  };
}

/** Sends a browser to the login page, which returns to this page afterwards. */
export function redirectToLogin(c: Context): Response {
  const here = new URL(c.req.url);
  return c.redirect(
    `/login?next=${encodeURIComponent(here.pathname + here.search)}`,
    303,
  );
}

/**
 * Requires the session's CSRF token on a write made with a session cookie
 * (after {@link requirePrincipal}). Reads the `X-CSRF-Token` header, else the
 * `_csrf` field of a form body.
 */
export function requireCsrf(auth: UiAuth): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    await checkCsrf(c, auth, c.get("session"));
    await next();
  };
}

/** Throws 403 unless a session request carries its session's CSRF token (bearer requests need none). */
export async function checkCsrf(
  c: Context,
  auth: UiAuth,
  session: SessionClaims | null,
  options: { form: boolean } = { form: true },
): Promise<void> {
  if (session === null) return;
  const header = c.req.header("x-csrf-token");
  const given = header ?? (options.form ? await formField(c, "_csrf") : "");
  if (!(await auth.signer.checkCsrf(session.sid, given))) {
    throw new HttpRefusal(
      403,
      header === undefined && options.form && isFormBody(c)
        ? "The form's CSRF token is missing or out of date; reload the page and try again"
        : "The request's CSRF token is missing or out of date (send it in the X-CSRF-Token header); reload the page for a new one and try again",
      "csrf",
    );
  }
}

/** A string field of a URL-encoded or multipart body (`""` when absent). */
export async function formField(c: Context, name: string): Promise<string> {
  if (!isFormBody(c)) return "";
  const body = await readFormBody(c);
  const value = body[name];
  return typeof value === "string" ? value : "";
}
