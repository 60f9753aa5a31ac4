/**
 * The Trace server app: the observability ingest and query API, OTLP/HTTP
 * trace ingest, health and liveness, and the trace UI (pages with JSON
 * twins, `routes/pages.ts`). `createApp` returns a Hono app without
 * listening; `trace serve` listens.
 *
 * The app owns its security rules (`routes/_guard.ts`, `routes/_ui_auth.ts`,
 * `routes/access.ts`): it refuses to be built for a non-loopback address
 * without a token, with a one-time login there, or with a bad account
 * configuration, so a library caller cannot make an open server by accident.
 * Request lifecycle: the request log (when asked for), the Host guard, the
 * origin guard, the Content-Type rule, then the one access middleware (the
 * route's action from its table: the ingest token on the API, the UI sign-in
 * by operator token or session cookie elsewhere, the role matrix, tenant
 * binding, read-only mode, the CSRF token on session writes), then the route.
 * Routes throw domain errors or `HTTPException`;
 * `onError` below answers them through `routes/_errors.ts` (the OTLP
 * receiver uses the same mapping, encoded as OTLP requires), as an HTML page
 * when a browser asked for one.
 *
 * @module
 */

import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { UiEnv } from "./ui/context.ts";
import {
  type AccountBook,
  type ArtifactResolver,
  hookAvailability,
  type IdentityResolver,
  type ResourceAuthorizer,
} from "../lib/auth/mod.ts";
import {
  assertTraceDb,
  dataFlagsOfDb,
  dbLocation,
  type TraceDb,
} from "../lib/db.ts";
import { ConfigError } from "../lib/errors.ts";
import { HealthMonitor } from "../lib/obs/maint/mod.ts";
import type { BodyLimits } from "./_body.ts";
import {
  methodNotAllowed,
  reportError,
  type ServerLog,
  stderrLog,
} from "./_errors.ts";
import {
  loopbackHostOnly,
  requireContentType,
  sameOriginOnly,
  serverSecurity,
} from "./_guard.ts";
import { createUiAuth } from "./_ui_auth.ts";
import { accessControl } from "./access.ts";
import {
  appendAudit,
  ERASURE_AUDIT_ACTION,
  formatErasureDetail,
} from "../lib/auth/mod.ts";
import { createEventsApi } from "./events.ts";
import {
  createErasureApi,
  type ErasureAudit,
  type ErasureAuditEntry,
} from "./erasure.ts";
import { createMcpApi, type McpRouteOptions } from "./mcp.ts";
import type { OneTimeLogin } from "./one_time_login.ts";
import { createOperatorRoutes } from "./operator.ts";
import { requestLogger } from "./_request_log.ts";
import { createOtlpApi, OTLP_TRACES_PATH, otlpErrorAnswer } from "./otlp.ts";
import { createPages, type RunPagesOptions } from "./pages.ts";
import { createSelfStagingApi } from "./self_staging.ts";
import type { SelfStagingAdapter } from "../lib/obs/self_contract/mod.ts";
import { isApiPath } from "./_error_codes.ts";
import { renderErrorPage, wantsHtml } from "./ui/error_page.tsx";
import { uiHeaders } from "./ui/headers.ts";

/** Options for {@link createApp}. */
export interface AppOptions {
  /** The database the server reads and writes: ledger, index, accounts' audit trail. */
  db: TraceDb;
  /** Bearer token required by `/api/*` and `/v1/*`; none means open (loopback only). */
  ingestToken?: string | undefined;
  /**
   * The address the server listens on (default `127.0.0.1`). A loopback
   * address enables the Host check; any other address requires `ingestToken`.
   */
  hostname?: string | undefined;
  /**
   * The origin browsers reach the server at through a TLS reverse proxy, e.g.
   * `https://trace.example.com` (an absolute http(s) origin, https unless its
   * host is loopback). Its host passes the Host check and its `Origin` the
   * origin check; an https one makes the session cookie `Secure`; pages print
   * it in commands that name this server.
   */
  publicOrigin?: string | undefined;
  /** Tenant used for OTLP spans that name none. */
  defaultApplicationId?: string;
  /** Version string reported by `/api`. */
  version?: string;
  /** Body size bounds of both ingest routes (default 8 MiB on the wire, 32 MiB inflated). */
  bodyLimits?: BodyLimits;
  /** Where details of server-side failures go, one line each (default: stderr). */
  log?: ServerLog;
  /** Where one content-free line per request goes (method, route, status, duration, items, refusal); none by default. */
  requestLog?: ServerLog;
  /**
   * Answers `GET /api/health` (default: one for `db` with this process's
   * counters). Pass one to warm it up or to wait for it before closing `db`.
   */
  health?: HealthMonitor;
  /** Serves the MCP tools at `/mcp` (streamable HTTP, bearer-authenticated); absent: no `/mcp`. */
  mcp?: McpRouteOptions;
  /**
   * `TRACE_UI_AUTH_TOKEN`: an unscoped administrator token for the UI, as
   * `Authorization: Bearer` or as a reusable login token.
   */
  uiAuthToken?: string | undefined;
  /** A one-time login for the UI (loopback only; see `createOneTimeLogin`). */
  oneTimeLogin?: OneTimeLogin | undefined;
  /** How long a UI session lasts, in seconds (default 12 hours). */
  sessionTtlSeconds?: number | undefined;
  /** The data directory's erasure key, for `POST /api/erasures` (absent: it answers 501). */
  erasureKey?: Uint8Array | undefined;
  /** Why there is no erasure key (a lost key file), for that 501 to say. */
  erasureKeyProblem?: string | undefined;
  /** Records every erasure request before it runs; a throw refuses the request. */
  erasureAudit?: ErasureAudit | undefined;
  /** Serves this staging adapter over the index at `/staging/*` (loopback only). */
  stagingAdapter?: SelfStagingAdapter | undefined;
  /**
   * `TRACE_UI_AUTH_ACCOUNTS`: operator names to `{token, role,
   * application_id?, user_id?}`, or an `AccountBook` the host can replace
   * while the server runs. Validated here: a bad entry throws a
   * `ConfigError` naming the account, never its token.
   */
  accounts?: AccountBook | Record<string, unknown> | undefined;
  /** `TRACE_UI_READ_ONLY=true`: refuse every write (ingest, drafts, runs); reads and replay plans still work. */
  readOnly?: boolean | undefined;
  /** Host hook: a transient email to an opaque user id (`POST /traces/account/resolve`); absent: 501. */
  identityResolver?: IdentityResolver | undefined;
  /** Host hook: the current state of a resource ref (`GET /traces/artifact.json`); absent: 501. */
  artifactResolver?: ArtifactResolver | undefined;
  /** Host hook: confirms (exactly `true`) each ref a replay plan freezes; absent: 501. */
  resourceAuthorizer?: ResourceAuthorizer | undefined;
  /** How long a host hook may take before its request fails (default 10 s). */
  hookTimeoutMs?: number | undefined;
  /**
   * The data directory and the process's job manager for the run pages
   * (the same `RunJobs` the MCP routes get, so both share one run at a
   * time); absent: run pages read the ledger only and cannot start runs.
   */
  runs?: RunPagesOptions | undefined;
}

/**
 * Builds the server app; throws a `ConfigError` when the options would make
 * an unsafe server (see {@link serverSecurity}).
 */
export function createApp(options: AppOptions): Hono {
  assertTraceDb(options?.db, "createApp(options)");
  const security = serverSecurity(options);
  const uiAuthToken = adminTokenOf(options);
  const auth = createUiAuth({
    ...options,
    uiAuthToken,
    publicOrigin: security.publicOrigin,
  });
  const hooks = {
    identityResolver: options.identityResolver,
    artifactResolver: options.artifactResolver,
    resourceAuthorizer: options.resourceAuthorizer,
  };
  const readOnly = options.readOnly ?? false;
  const version = options.version ?? "0.1.0";
  const site = {
    version,
    dataLocation: dbLocation(options.db),
    dataFlags: dataFlagsOfDb(options.db, options.runs?.dataDir),
    publicOrigin: security.publicOrigin?.origin,
  };
  const log = options.log ?? stderrLog;
  const limits = options.bodyLimits ? { limits: options.bodyLimits } : {};
  const app = new Hono();
  if (options.requestLog) app.use("*", requestLogger(options.requestLog));
  app.use(
    "*",
    loopbackHostOnly(security.loopbackBind, security.publicOrigin),
  );
  app.use("*", sameOriginOnly(security.publicOrigin));
  app.use("*", requireContentType());
  app.use("*", uiHeadersOutsideApi());
  app.use(
    "*",
    accessControl({
      auth,
      db: options.db,
      ingestToken: security.ingestToken,
      readOnly,
      hooks: hookAvailability(hooks),
      log,
      bodyTimeoutMs: options.bodyLimits?.timeoutMs,
    }) as MiddlewareHandler,
  );

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/api", (c) =>
    c.json({
      name: "trace",
      version,
      endpoints: [
        "POST /api/events (JSON array, object or NDJSON; gzip accepted)",
        "GET /api/events (scoped query with cursor)",
        "GET /api/events/summary",
        "GET /api/health (index health and this server's counters)",
        "POST /v1/traces (OTLP/HTTP, JSON or protobuf)",
        "POST /api/erasures (subject erasure: dry run, or apply with its confirmation; admin sign-in)",
      ],
      auth: security.ingestToken ? "bearer" : "none (loopback only)",
    }));
  // The server is the writing process, so its counters are the ones worth reading.
  const health = options.health ??
    new HealthMonitor(options.db, { processCounters: true });
  app.get("/api/health", async (c) => c.json(await health.report()));
  app.all("/api/health", (c) => methodNotAllowed(c, ["GET"]));
  app.route("/", createEventsApi({ db: options.db, ...limits }));
  app.route(
    "/",
    createOtlpApi({
      db: options.db,
      log,
      ...limits,
      // An operator's session or token on the API binds spans to its
      // application. Only unscoped accounts may write to the index
      // (lib/auth/permissions.ts), so their spans keep the tenant they name.
      credentialScope: (c) => {
        const principal = (c as unknown as Context<UiEnv>).get("principal");
        return principal
          ? { application_id: principal.scope.application_id }
          : null;
      },
      ...(options.defaultApplicationId
        ? { defaultApplicationId: options.defaultApplicationId }
        : {}),
    }),
  );
  if (options.mcp) {
    app.route(
      "/",
      createMcpApi({
        db: options.db,
        log,
        ...options.mcp,
        directory: auth.directory,
        readOnly,
      }),
    );
  }
  app.route(
    "/",
    createErasureApi({
      db: options.db,
      auth,
      key: options.erasureKey,
      keyProblem: options.erasureKeyProblem,
      audit: options.erasureAudit ?? auditErasure(options.db),
    }),
  );
  if (options.stagingAdapter) {
    if (!security.loopbackBind) {
      throw new ConfigError(
        "Refusing to serve the staging adapter beyond loopback: it writes and deletes synthetic events without credentials; use --host 127.0.0.1",
      );
    }
    app.route("/", createSelfStagingApi(options.stagingAdapter));
  }
  app.route(
    "/",
    createPages({ db: options.db, auth, site, runs: options.runs, health }),
  );
  app.route(
    "/",
    createOperatorRoutes({
      db: options.db,
      auth,
      site,
      hooks,
      log,
      hookTimeoutMs: options.hookTimeoutMs,
    }),
  );
  app.notFound((c) => {
    const message = `No route for ${c.req.method} ${c.req.path}`;
    if (wantsHtml(c)) return renderErrorPage(c, site, 404, message);
    return c.json({ error: { code: "not_found", message } }, 404);
  });
  app.onError((error, c) => {
    const answer = reportError(error, c.req.raw, log);
    if (c.req.path === OTLP_TRACES_PATH) return otlpErrorAnswer(c, answer);
    if (wantsHtml(c)) {
      return renderErrorPage(c, site, answer.status, answer.body.error.message);
    }
    return c.json(answer.body, answer.status);
  });
  return app;
}

/**
 * `TRACE_UI_AUTH_TOKEN`, also accepted as `mcp.authToken` (the token `/mcp`
 * was first configured with): both name the one unscoped administrator.
 */
function adminTokenOf(options: AppOptions): string | undefined {
  const ui = options.uiAuthToken;
  const mcp = options.mcp?.authToken;
  if (ui !== undefined && mcp !== undefined && ui !== mcp) {
    throw new ConfigError(
      "mcp.authToken must equal uiAuthToken (both are TRACE_UI_AUTH_TOKEN); pass uiAuthToken only",
    );
  }
  return ui ?? mcp;
}

/**
 * The UI's secure headers (CSP and friends) on every path but the API's.
 * API answers are never stored: a browser signed in to an open loopback API
 * would otherwise keep ids of a subject in its cache after an erasure.
 */
function uiHeadersOutsideApi(): MiddlewareHandler {
  const headers = uiHeaders();
  return async (c, next) => {
    if (!isApiPath(c.req.path)) return await headers(c, next);
    await next();
    if (!c.res.headers.has("Cache-Control")) {
      c.res.headers.set("Cache-Control", "no-store");
    }
  };
}

/**
 * The default erasure audit: one audit-trail entry per call, so a request
 * leaves an `attempted` entry before it runs and one with its outcome
 * after (a succeeded apply names its receipt). The pair shares the request
 * id; the subject appears only as its keyed digest.
 */
function auditErasure(db: TraceDb): ErasureAudit {
  return async (entry: ErasureAuditEntry) => {
    await appendAudit(db, {
      actor: entry.principal,
      action: ERASURE_AUDIT_ACTION,
      scope: { application_id: entry.application_id },
      targets: { application_id: entry.application_id },
      outcome: entry.outcome,
      detail: formatErasureDetail({
        code: entry.detail,
        action: entry.action,
        selector: entry.selector,
        subject_digest: entry.subject_digest,
        request_id: entry.request_id,
        receipt_id: entry.receipt_id,
      }),
    });
  };
}
