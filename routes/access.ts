/**
 * Access control for every route of the app, in one middleware driven by
 * one table. Each route the app registers is listed in {@link ROUTE_ACCESS}
 * under `METHOD path` (as Hono registered it) with the action it performs
 * (`lib/auth/permissions.ts`) and the credentials it takes:
 *
 * - `public`: nobody needs to sign in (liveness, assets, sign-in pages);
 * - `ui`: an operator, by bearer token or session cookie (pages, twins,
 *   operator endpoints), refused by role, tenant binding or read-only mode
 *   with a content-free 403;
 * - `api`: the ingest API's own rule (`TRACE_INGEST_TOKEN`, or open on
 *   loopback without one); on an open API, a request that presents an
 *   operator's session or token is that operator, bound by role and scope,
 *   and one that presents a credential matching nobody is refused (401),
 *   never read as an anonymous client;
 * - `mcp`: `/mcp` authenticates each request itself (`routes/mcp.ts`).
 *
 * A route missing from the table is refused (fail closed), and the matrix
 * test enumerates the app's routes so a new route without an entry fails
 * the suite. A privileged route is decided on before its body is read, and
 * every attempt at it by a signed-in operator leaves an audit entry however
 * it ends: a refusal that the route did not record, this middleware records
 * once the route has answered (`_audit_refusals.ts`, which also says why
 * refusals before sign-in are not recorded).
 *
 * Readers of trace evidence narrow the principal's scope with
 * {@link scopeFilter}; pages ask {@link capabilitiesOf} which controls to
 * enable.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import { timingSafeEqual } from "hono/utils/buffer";
import {
  type Action,
  type ActionCapability,
  actionCapability,
  ACTIONS,
  type Capabilities,
  decide,
  describeCapabilities,
  type HookAvailability,
  narrowScope,
  type Principal,
  type ScopeRequest,
  type TenantScope,
  UNSCOPED,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import type { ServerLog } from "./_errors.ts";
import { HttpRefusal, recordRefusal } from "./_audit_refusals.ts";
import {
  BEARER_REFUSED,
  bearerToken,
  checkCsrf,
  clearStaleCookie,
  hasSessionCookie,
  redirectToLogin,
  refuseUnauthenticated,
  SIGN_IN_FIRST,
  signInBearer,
  signInSession,
  typedOrOwnPage,
  type UiAuth,
  validSession,
} from "./_ui_auth.ts";
import type { UiEnv } from "./ui/context.ts";
import { OPERATIONS } from "../lib/contract/protocol.ts";
import { SELF_STAGING_PATH } from "./self_staging.ts";
import { ERASURE_MAX_BODY_BYTES } from "./erasure.ts";
import { readSmallBody, SMALL_BODY_MAX_BYTES } from "./_body.ts";

/** Which credentials a route takes (see the module doc). */
export type Gate = "public" | "ui" | "api" | "mcp";

/** What a route does and who may ask. */
export interface RouteAccess {
  action: Action;
  gate: Gate;
  /** Largest body of a write to it (default {@link SMALL_BODY_MAX_BYTES}); the API's routes read their own. */
  maxBodyBytes?: number;
}

/** Largest body of a sign-in or sign-out form. */
const SIGN_IN_MAX_BODY_BYTES = 16 * 1024;

const entry = (gate: Gate) => (action: Action): RouteAccess => ({
  action,
  gate,
});
const publicRoute: RouteAccess = { action: "public", gate: "public" };
const ui = entry("ui");
const api = entry("api");

/**
 * Every route of the app: `METHOD path` exactly as registered (twins of
 * parameter pages carry their pattern, `/x/:id{[^/]+\.json}`), or a prefix
 * ending in `/*` for routes whose path is generated (hashed assets).
 */
export const ROUTE_ACCESS: Readonly<Record<string, RouteAccess>> = {
  // Liveness, hashed assets and signing in.
  "GET /healthz": publicRoute,
  "GET /ui/*": publicRoute,
  "GET /favicon.ico": publicRoute,
  "GET /login": publicRoute,
  // Sign-in forms hold a token and a path: a few KiB is plenty.
  "POST /login": { ...publicRoute, maxBodyBytes: SIGN_IN_MAX_BODY_BYTES },
  // Sign-out checks the session and its CSRF token itself, and sends an expired one to /login.
  "POST /logout": { ...publicRoute, maxBodyBytes: SIGN_IN_MAX_BODY_BYTES },
  // The start page and its twin: a tenant-bound account sees only what it may (see overview.tsx).
  "GET /": ui("session"),
  "GET /index.json": ui("session"),

  // The ingest and query API.
  "GET /api": api("trace.read"),
  "POST /api/events": api("index.write"),
  "GET /api/events": api("trace.read"),
  "ALL /api/events": api("trace.read"),
  "GET /api/events/summary": api("trace.read"),
  "ALL /api/events/summary": api("trace.read"),
  "GET /api/health": api("index.health"),
  "ALL /api/health": api("index.health"),
  "POST /v1/traces": api("index.write"),
  "ALL /v1/traces": api("index.write"),
  "ALL /mcp": { action: "session", gate: "mcp" },

  // Pages and their twins.
  "GET /traces/health": ui("index.health"),
  "GET /traces/health.json": ui("index.health"),
  "GET /traces/events/:id": ui("trace.read"),
  "GET /traces/events/:id/": ui("trace.read"),
  "GET /traces/events/:id{[^/]+\\.json}": ui("trace.read"),
  "GET /traces/find": ui("trace.read"),
  "GET /traces/find.json": ui("trace.read"),
  "GET /traces/inspect": ui("trace.read"),
  "GET /traces/inspect.json": ui("trace.read"),
  "GET /traces/compare": ui("trace.read"),
  "GET /traces/compare.json": ui("trace.read"),
  "GET /traces/events.json": ui("trace.read"),
  "GET /traces/capabilities.json": ui("session"),

  // The run pages and their twins, downloads, and the run actions.
  ...Object.fromEntries(
    [
      "/runs",
      "/runs/:id",
      "/targets",
      "/targets/:id",
      "/regressions",
      "/compare",
      "/reference",
    ].flatMap((path) => [
      [`GET ${path}`, ui("runs.read")],
      // The page of an id ending in ".json" (see pageIdPath).
      ...(path.endsWith("/:id") ? [[`GET ${path}/`, ui("runs.read")]] : []),
      [
        `GET ${
          path.endsWith("/:id")
            ? `${path.slice(0, -3)}:id{[^/]+\\.json}`
            : `${path}.json`
        }`,
        ui("runs.read"),
      ],
    ]),
  ),
  "GET /runs/:id/report.json": ui("runs.read"),
  "GET /runs/:id/junit.xml": ui("runs.read"),
  "GET /runs/:id/summary.md": ui("runs.read"),
  "GET /runs/:id/report.html": ui("runs.read"),
  "GET /reference/assessments/mem0": ui("runs.read"),
  "GET /reference/assessments/mem0.json": ui("runs.read"),
  "POST /targets/:id/run": ui("runs.write"),
  "POST /regressions/:id/replay": ui("runs.write"),

  // Operator endpoints.
  "POST /traces/reveal": ui("content.reveal"),
  "ALL /traces/reveal": ui("content.reveal"),
  "POST /traces/account/resolve": ui("account.resolve"),
  "ALL /traces/account/resolve": ui("account.resolve"),
  "GET /traces/artifact.json": ui("artifact.lookup"),
  "GET /traces/replay-plan.json": ui("replay.plan"),
  "POST /traces/replays": ui("replay.draft"),
  "GET /traces/replays.json": ui("replay.read"),

  // Subject erasure, for administrators only (never the ingest token); up to 10,000 event ids.
  "POST /api/erasures": {
    ...ui("subject.erase"),
    maxBodyBytes: ERASURE_MAX_BODY_BYTES,
  },
  "ALL /api/erasures": ui("subject.erase"),

  // The staging adapter over the index (`trace serve --staging-adapter`, loopback only).
  ...Object.fromEntries(
    OPERATIONS.flatMap((op) => [
      [`POST ${SELF_STAGING_PATH}/${op}`, api("index.write")],
      [`ALL ${SELF_STAGING_PATH}/${op}`, api("index.write")],
    ]),
  ),
};

/** The access rule of a registered route, or `undefined` when the table has none. */
export function routeAccess(
  method: string,
  path: string,
): RouteAccess | undefined {
  const exact = ROUTE_ACCESS[`${method} ${path}`];
  if (exact) return exact;
  for (const [key, access] of Object.entries(ROUTE_ACCESS)) {
    if (!key.endsWith("/*")) continue;
    const [keyMethod, prefix] = key.slice(0, -1).split(" ") as [string, string];
    if (keyMethod === method && path.startsWith(prefix)) return access;
  }
  return undefined;
}

/** Whether a registered route is middleware (`app.use`), not an endpoint. */
export function isMiddlewareRoute(path: string): boolean {
  return path.endsWith("*");
}

/** What the access middleware needs. */
export interface AccessOptions {
  auth: UiAuth;
  db: TraceDb;
  /** `TRACE_INGEST_TOKEN`, the API's own credential. */
  ingestToken: string | undefined;
  readOnly: boolean;
  hooks: HookAvailability;
  log: ServerLog;
  /** Time the body of a UI or sign-in write may take to arrive (default 60 s). */
  bodyTimeoutMs?: number | undefined;
}

/** The refusal of a privileged request another site's page sent. */
const NOT_OWN_PAGE =
  "Forbidden: this action runs only from Trace's own pages, a URL typed into the address bar, or a script; open it from Trace's pages";

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The one access middleware: mount it on `*` before every route. The body
 * of every write but the API's is read here, within its route's bound and
 * the body deadline, before the CSRF check may read a form, so no route
 * reads an unbounded or trickled body.
 */
export function accessControl(
  options: AccessOptions,
): MiddlewareHandler<UiEnv> {
  const settings = { readOnly: options.readOnly, hooks: options.hooks };
  return async (c, next) => {
    c.set("access", settings);
    const route = matchedRoutes(c).find((r) => !isMiddlewareRoute(r.path));
    // Nothing but middleware matched: the app answers 404.
    if (!route) return await next();
    const access = routeAccess(route.method, route.path);
    if (!access) {
      options.log(
        `access: no rule for ${route.method} ${route.path}; add it to ROUTE_ACCESS in routes/access.ts`,
      );
      throw new HTTPException(403, {
        message: "Forbidden: no access rule covers this route",
      });
    }
    if (access.gate === "mcp") return await next();
    const maxBodyBytes = access.maxBodyBytes ?? SMALL_BODY_MAX_BYTES;
    const writes = !SAFE_METHODS.has(c.req.method);
    if (access.gate === "public") {
      if (writes) await readSmallBody(c, maxBodyBytes, options.bodyTimeoutMs);
      return await next();
    }
    // A link on another site, or on another port of this host, must not make
    // the visitor's browser act (and be audited) as them: refused before
    // sign-in, so no such page can append entries in their name.
    if (
      ACTIONS[access.action].privileged &&
      !typedOrOwnPage(c, options.auth.publicOrigin)
    ) {
      throw new HTTPException(403, { message: NOT_OWN_PAGE });
    }
    const kind = !writes && !route.path.includes(".json") ? "page" : "json";
    const signedIn = access.gate === "api"
      ? await apiCaller(c, options)
      : await uiCaller(c, options, kind);
    if (signedIn instanceof Response) return signedIn;
    const admit = async () => {
      authorize(options, access, signedIn);
      // The body is read only for a caller the matrix lets in.
      if (access.gate === "ui" && writes) {
        await readSmallBody(c, maxBodyBytes, options.bodyTimeoutMs);
      }
      if (writes) await requireCsrf(c, options, access);
    };
    if (signedIn === null || !ACTIONS[access.action].privileged) {
      await admit();
      return await next();
    }
    // A privileged attempt leaves an entry however it ends (_audit_refusals.ts).
    const attempt = { principal: signedIn, action: access.action };
    try {
      await admit();
    } catch (error) {
      await recordRefusal(c, options, attempt, error);
      throw error;
    }
    await next();
    if (c.error !== undefined) {
      await recordRefusal(c, options, attempt, c.error);
    }
  };
}

/** Who an API request is: an operator, or an ingest client (`null`). */
async function apiCaller(
  c: Context<UiEnv>,
  options: AccessOptions,
): Promise<Principal | null> {
  const token = bearerToken(c);
  if (options.ingestToken !== undefined) {
    if (!(await timingSafeEqual(token ?? "", options.ingestToken))) {
      refuseUnauthenticated(
        c,
        "Missing or wrong bearer token; send Authorization: Bearer $TRACE_INGEST_TOKEN",
      );
    }
    return null;
  }
  // An open loopback API: a request that names an operator is that operator,
  // and one that names nobody known is refused: read as an anonymous client,
  // a mistyped or revoked token would see every tenant without a word.
  if (token !== undefined) {
    const account = token ? await options.auth.directory.byToken(token) : null;
    if (!account) refuseUnauthenticated(c, UNKNOWN_CREDENTIAL);
    signInBearer(c, account);
    return c.get("principal");
  }
  if (!hasSessionCookie(c, options.auth)) return null;
  const session = await validSession(c, options.auth);
  if (!session) {
    clearStaleCookie(c, options.auth);
    refuseUnauthenticated(c, STALE_SESSION);
  }
  await signInSession(c, options.auth, session);
  return c.get("principal");
}

/** The refusal of an `Authorization` header no operator holds, on an open API. */
const UNKNOWN_CREDENTIAL =
  "The Authorization header matches no credential of this server; send Authorization: Bearer with TRACE_UI_AUTH_TOKEN or your operator token, or leave the header out (this API is open on loopback)";

/** The refusal of a session cookie that no longer opens anything, on an open API. */
const STALE_SESSION =
  "The session cookie is no longer valid (signed out, expired or the server restarted); sign in again at /login, or send the request without the cookie";

/** The operator of a UI request, or the answer for a visitor who is not signed in. */
async function uiCaller(
  c: Context<UiEnv>,
  options: AccessOptions,
  kind: "page" | "json",
): Promise<Principal | Response> {
  const token = bearerToken(c);
  if (token !== undefined) {
    const account = token ? await options.auth.directory.byToken(token) : null;
    if (!account) refuseUnauthenticated(c, BEARER_REFUSED);
    signInBearer(c, account);
    return c.get("principal");
  }
  const session = await validSession(c, options.auth);
  if (!session) {
    clearStaleCookie(c, options.auth);
    if (kind === "json") refuseUnauthenticated(c, SIGN_IN_FIRST);
    return redirectToLogin(c);
  }
  await signInSession(c, options.auth, session);
  return c.get("principal");
}

/**
 * Applies the matrix: an ingest client (`null` on the API) may take every
 * API action but writes in read-only mode; an operator is decided by role,
 * tenant binding and mode (the refusal's `detail` names which).
 */
function authorize(
  options: AccessOptions,
  access: RouteAccess,
  principal: Principal | null,
): void {
  const action = access.action;
  const mode = { readOnly: options.readOnly };
  if (principal === null) {
    if (ACTIONS[action].write && options.readOnly) {
      throw new HTTPException(403, {
        message:
          "This server is read-only (TRACE_UI_READ_ONLY=true): writing to the trace index is refused",
      });
    }
    return;
  }
  const decision = decide(principal, action, mode);
  if (!decision.allowed) {
    throw new HttpRefusal(403, decision.message, decision.reason);
  }
}

/** Session writes need their CSRF token; the API reads its own bodies, so there it travels in the header only. */
async function requireCsrf(
  c: Context<UiEnv>,
  options: AccessOptions,
  access: RouteAccess,
): Promise<void> {
  const session = c.get("session");
  if (session === undefined) return;
  await checkCsrf(c, options.auth, session, { form: access.gate === "ui" });
}

/**
 * `requested` narrowed to the request's principal: its bound scope keys
 * filled in, a wider request refused (403, `ScopeError`). An ingest client
 * of the API (no principal) reads unscoped, as the API documents.
 */
export function scopeFilter<T extends ScopeRequest>(
  c: Context,
  requested: T,
): T {
  return narrowScope(principalScope(c), requested);
}

/** The tenant scope of the request's principal (every tenant for an ingest client). */
export function principalScope(c: Context): TenantScope {
  const principal = (c as Context<UiEnv>).get("principal") as
    | Principal
    | undefined;
  return principal?.scope ?? UNSCOPED;
}

/** What the request's principal may do here: `/traces/capabilities.json` and page controls. */
export function capabilitiesOf(c: Context<UiEnv>): Capabilities {
  return describeCapabilities(c.get("principal"), accessSettings(c));
}

/** One action's capability for the request's principal (a control's enabled state). */
export function capabilityOf(
  c: Context<UiEnv>,
  action: Action,
): ActionCapability {
  return actionCapability(c.get("principal"), action, accessSettings(c));
}

function accessSettings(c: Context<UiEnv>) {
  // Routes mounted without the middleware (tests of one sub-app) see a plain server.
  return c.get("access") ?? {
    readOnly: false,
    hooks: {
      identityResolver: false,
      artifactResolver: false,
      resourceAuthorizer: false,
    },
  };
}
