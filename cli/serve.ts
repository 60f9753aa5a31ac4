/** `trace serve`: the ingest and query API and the trace UI on localhost. */

import { terminalSafe } from "../lib/display.ts";
import {
  parseAccounts,
  READ_ONLY_ENV,
  readOnlyFromEnv,
} from "../lib/auth/mod.ts";
import { dbLocation, type TraceDb } from "../lib/db.ts";
import { TRACE_QUERIES_ENV, traceQueriesAllowed } from "../lib/mcp/mod.ts";
import { ConfigError } from "../lib/errors.ts";
import {
  ErasureKeyLostError,
  erasurePropagationSettings,
  erasureTruncation,
  HealthMonitor,
  PROPAGATION_ENV,
  propagationByDefault,
} from "../lib/obs/maint/mod.ts";
import { SELF_STAGING_APPLICATION } from "../lib/obs/self_contract/mod.ts";
import {
  startBackgroundCheckpoints,
  startWriteThread,
} from "../lib/obs/ingest/mod.ts";
import {
  enableErasurePropagation,
  erasureKeyFor,
  RunJobs,
  selfStagingWithReceipts,
} from "../lib/runs/mod.ts";
import { SELF_STAGING_PATH } from "../routes/self_staging.ts";
import { createApp } from "../routes/app.ts";
import { serverSecurity } from "../routes/_guard.ts";
import {
  checkUiAuthOptions,
  publicSessionCookieName,
} from "../routes/_ui_auth.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import {
  createOneTimeLogin,
  type OneTimeLogin,
} from "../routes/one_time_login.ts";
import {
  DEFAULT_SERVE_LIMITS,
  type GuardedServer,
  listenError,
  listenGuarded,
} from "../routes/listen.ts";
import { DEFAULT_BODY_LIMITS } from "../routes/_body.ts";
import {
  DATA_FLAGS,
  idFlag,
  parseFlags,
  parseIntegerFlag,
  showHelp,
} from "./_args.ts";
import { closeWriting, openDataContext } from "./_context.ts";
import { type Command, credentialFromEnv, untilInterrupted } from "./_io.ts";

const FLAGS = {
  ...DATA_FLAGS,
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8788" },
  "public-origin": { type: "string" },
  "default-application": { type: "string" },
  "staging-adapter": { type: "boolean", default: false },
} as const;

const HELP =
  `Usage: trace serve [--host 127.0.0.1] [--port 8788] [--public-origin URL]
                   [--default-application ID] [--staging-adapter] [--data-dir DIR] [--db URL]

Serves the observability API: POST/GET /api/events, GET /api/events/summary,
GET /api/health and OTLP/HTTP traces at POST /v1/traces (JSON or protobuf,
gzip accepted), and the trace UI (pages such as /traces/health, each with a
.json twin). Provisions the database when missing. Storage failures are
answered generically; their detail is written to stderr.

The UI: on a loopback address without operator accounts the server prints a
one-time login URL on stderr; opening it signs that browser in (the link then
stops working; restart the server for a new one). TRACE_UI_AUTH_TOKEN (at
least 16 printable ASCII characters, no whitespace) is an unscoped
administrator token: scripts send it as Authorization: Bearer TOKEN to any
page or .json twin, and people can sign in with it at /login as often as
they need.
TRACE_UI_AUTH_ACCOUNTS holds operator accounts as JSON, e.g.
{"support-1": {"token": "...", "role": "analyst", "application_id": "app-1"}}
(roles viewer, analyst, operator, admin; optional application_id and
user_id, where null binds anonymous evidence only); each signs in with its
own token. TRACE_UI_READ_ONLY=true refuses every write (ingest, replay
drafts, runs) while reads and replay plans still work. Beyond loopback the
UI needs TRACE_UI_AUTH_TOKEN or accounts.

On a loopback address with no TRACE_INGEST_TOKEN, requests need no
credentials, so an unmodified OpenTelemetry exporter works as is; a
credential that opens no operator account (a wrong token, a stale session
cookie) is refused with 401 rather than read as no credential. With
TRACE_INGEST_TOKEN set, every API request needs Authorization: Bearer TOKEN.
A non-loopback --host is refused unless TRACE_INGEST_TOKEN is set.
A credential variable set but empty, or accounts JSON naming no account,
is refused: unset it to run without it, or give it a value.

MCP over streamable HTTP at /mcp needs Authorization: Bearer with
TRACE_UI_AUTH_TOKEN or an account's token (refused while neither is set);
an account's role and scope decide its tools. trace.query_traces is offered
when TRACE_MCP_ALLOW_TRACE_QUERIES=true (the start-up lines say whether it
is); a tenant-bound account has no other tool.

Runs started from the UI or /mcp read a target's token_env from this
server's environment, as it was when the server started: a variable set
later is not seen, so start the server with it set (NAME=… trace serve).

Logs one line per request on stderr (method, route, status, duration, items,
refusal reason; never ids or content).

Limits: ${DEFAULT_SERVE_LIMITS.maxConnections} open connections, at most ${DEFAULT_SERVE_LIMITS.maxConnectionsPerClient} from one
non-loopback address (local clients share the total); a request head
within ${DEFAULT_SERVE_LIMITS.headerTimeoutMs / 1000} s and ${
    DEFAULT_SERVE_LIMITS.maxHeadBytes / 1024
  } KiB; a body within ${(DEFAULT_BODY_LIMITS.timeoutMs ?? 0) / 1000} s, ${
    DEFAULT_BODY_LIMITS.maxBytes / 2 ** 20
  } MiB on the wire and ${
    DEFAULT_BODY_LIMITS.maxDecodedBytes / 2 ** 20
  } MiB inflated; ${
    DEFAULT_SERVE_LIMITS.requestTimeoutMs / 1000
  } s per request in all.

Subject erasure for administrators: POST /api/erasures with
{"subject": {"application_id": …, "user_id": …}} is a dry run; add
"apply": true and the "confirmation" it returned to erase (sign in as for
the UI; the ingest token is not enough). Memory deletions ingested for an
application that opted in (trace obs propagation, or
${PROPAGATION_ENV}=true) erase that memory's previews, with a receipt.

Options:
  --public-origin URL        The origin browsers use through a TLS reverse
                             proxy, e.g. https://trace.example.com (https
                             unless its host is loopback; no path). Its Host
                             and Origin are accepted as this server's, the
                             session cookie is Secure, and the login URL and
                             the pages' commands name it; needs
                             TRACE_INGEST_TOKEN unless its host is loopback
  --default-application ID   Tenant for OTLP spans that name none (tenant.id or
                             application.id); without it, the resource's
                             service.name. Answers say which was used.
  --staging-adapter          Also serve the staging adapter over this index at
                             ${SELF_STAGING_PATH}/ (loopback only): point a staging config's
                             base_url at http://127.0.0.1:PORT${SELF_STAGING_PATH} and run
                             trace external run to prove Trace's own erasure
`;

/**
 * Refuses a port in use (or a host that is not an address of this machine)
 * before the data directory is touched, so a server that cannot start leaves
 * no new files. Port 0 is tried too, for the host. The real listen still
 * decides: the port may be taken in between.
 */
function refuseUnusableAddress(hostname: string, port: number): void {
  try {
    Deno.listen({ hostname, port }).close();
  } catch (error) {
    throw listenError(error, hostname, port);
  }
}

/** What the start-up lines say about signing in to the UI. */
function uiStartupLines(
  origin: string,
  login: OneTimeLogin | undefined,
  adminToken: string | undefined,
  access: UiAccess,
): string {
  const lines = [];
  if (login) {
    lines.push(`  UI login (works once): ${login.url(origin)}`);
  } else if (!adminToken && access.accounts === 0) {
    lines.push(
      "  UI: sign-in is off beyond loopback without TRACE_UI_AUTH_TOKEN",
    );
  }
  lines.push(
    adminToken
      ? "  UI admin token: TRACE_UI_AUTH_TOKEN (Authorization: Bearer, or sign in at /login)"
      : "  UI admin token: none; set TRACE_UI_AUTH_TOKEN for scripts (Authorization: Bearer) and repeat sign-ins",
  );
  if (access.accounts > 0) {
    lines.push(
      `  UI accounts: ${access.accounts} from TRACE_UI_AUTH_ACCOUNTS (each signs in with its own token)`,
    );
  }
  if (access.tenantBound && !access.ingestToken) {
    lines.push(
      "  warning: tenant-bound accounts are configured but the API is open on loopback; set TRACE_INGEST_TOKEN so only ingest clients and operators read it",
    );
  }
  if (access.readOnly) {
    lines.push("  read-only: every write is refused (TRACE_UI_READ_ONLY=true)");
  }
  return lines.map((line) => line + "\n").join("");
}

/**
 * Whether MCP offers trace queries: a tenant-bound account has no other MCP
 * tool, so while they are off its tool list is empty.
 */
function mcpTraceQueriesLine(on: boolean, tenantBound: boolean): string {
  if (on) {
    return `  mcp trace queries: on (trace.query_traces, ${TRACE_QUERIES_ENV}=true)\n`;
  }
  const bound = tenantBound
    ? "; until then tenant-bound accounts get no MCP tool"
    : "";
  return `  mcp trace queries: off; set ${TRACE_QUERIES_ENV}=true to offer trace.query_traces${bound}\n`;
}

/** What the start-up lines say about accounts and modes. */
interface UiAccess {
  accounts: number;
  tenantBound: boolean;
  ingestToken: boolean;
  readOnly: boolean;
}

/**
 * What a run started from the UI or `/mcp` says when its target's
 * `token_env` is unset: this process read its environment when it started,
 * so a variable set in the user's shell now does not reach it.
 */
function serveTokenEnvRemedy(variable: string): string {
  return `trace serve reads its environment once, when it starts: restart it with the variable set (${variable}=… trace serve …)`;
}

/** The server's erasure key, or why it has none. */
interface ServerErasureKey {
  key: Uint8Array | undefined;
  /** The lost key's refusal, which every erasure repeats. */
  lost: ErasureKeyLostError | undefined;
}

/** What the 501 of an erasure says: no file path or key id, which the operator's terminal has. */
const LOST_KEY_PROBLEM =
  "the data directory's erasure.key is missing while the ledger holds receipts made with it; restore it from a backup of the data directory";

/**
 * The data directory's erasure key, made when missing. A key file lost
 * while receipts need it is not replaced (`erasure_key.ts`); the server then
 * serves everything but erasure, which refuses saying to restore it, where
 * refusing to start would take the UI and ingest down with it. Unless
 * something would erase on its own: the staging adapter's deletions are
 * erasures with receipts, and a deletion event that propagation would
 * erase is acknowledged and then, without the key, never erased (a resend
 * of it is a duplicate): with either on, it refuses to start.
 */
async function serverErasureKey(
  db: TraceDb,
  dataDir: string,
  erases: { stagingAdapter: boolean; propagationByDefault: boolean },
): Promise<ServerErasureKey> {
  try {
    return { key: await erasureKeyFor(db, dataDir), lost: undefined };
  } catch (error) {
    if (!(error instanceof ErasureKeyLostError) || erases.stagingAdapter) {
      throw error;
    }
    const propagating = erases.propagationByDefault ||
      (await erasurePropagationSettings(db)).some((s) => s.enabled);
    if (propagating) {
      throw new ErasureKeyLostError(
        `${error.message}; trace serve does not start without it while erasure propagation is on (${PROPAGATION_ENV}=true, or an application turned on with trace obs propagation): a deletion event it acknowledged could not be erased`,
      );
    }
    return { key: undefined, lost: error };
  }
}

/** `trace serve`: listen until interrupted. */
export const serve: Command = async (args, io) => {
  const { values } = parseFlags("serve", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const port = parseIntegerFlag("port", values.port, { min: 0, max: 65535 })!;
  const defaultApplication = values["default-application"] === undefined
    ? undefined
    : idFlag("default-application", values["default-application"]);
  const token = credentialFromEnv(
    io,
    "TRACE_INGEST_TOKEN",
    "for an API open on loopback only",
  );
  const uiAuthToken = credentialFromEnv(
    io,
    "TRACE_UI_AUTH_TOKEN",
    "to run without an admin token",
  );
  const accountsText = credentialFromEnv(
    io,
    "TRACE_UI_AUTH_ACCOUNTS",
    "to run without operator accounts",
  );
  const accounts = accountsText === undefined
    ? {}
    : parseAccounts(accountsText, {
      ingestToken: token,
      adminToken: uiAuthToken,
      source: "env",
    });
  const accountCount = Object.keys(accounts).length;
  const readOnly = readOnlyFromEnv(io.env(READ_ONLY_ENV));
  // Without operator accounts, a loopback server signs people in with a one-time URL.
  const oneTimeLogin = isLoopbackHost(values.host) && accountCount === 0
    ? createOneTimeLogin()
    : undefined;
  // createApp enforces these rules too; checking first refuses before any file is touched.
  const { publicOrigin } = serverSecurity({
    hostname: values.host,
    ingestToken: token,
    publicOrigin: values["public-origin"],
  });
  checkUiAuthOptions({
    hostname: values.host,
    ingestToken: token,
    uiAuthToken,
    oneTimeLogin,
  });
  if (values["staging-adapter"] && !isLoopbackHost(values.host)) {
    throw new ConfigError(
      "Refusing --staging-adapter beyond loopback: it writes and deletes synthetic events without credentials; use --host 127.0.0.1",
    );
  }
  const allowTraceQueries = traceQueriesAllowed(io.env(TRACE_QUERIES_ENV));
  // Refused here, before the database is opened or provisioned.
  const propagateByDefault = propagationByDefault(io.env(PROPAGATION_ENV));
  refuseUnusableAddress(values.host, port);
  const { db, dataDir } = await openDataContext(values, io, { write: true });
  let erasure: ServerErasureKey;
  try {
    erasure = await serverErasureKey(db, dataDir, {
      stagingAdapter: values["staging-adapter"],
      propagationByDefault: propagateByDefault,
    });
  } catch (error) {
    db.close();
    throw error;
  }
  if (erasure.lost !== undefined) {
    io.err(
      `trace serve: erasure is off, everything else is served: ${erasure.lost.message}, then restart trace serve\n`,
    );
  }
  const stopPropagation = enableErasurePropagation({
    key: erasure.key ?? (() => Promise.reject(erasure.lost)),
    byDefault: propagateByDefault,
    onError: (message) => io.err(message + "\n"),
  });
  const stagingAdapter = erasure.key && values["staging-adapter"]
    ? selfStagingWithReceipts(db, erasure.key)
    : undefined;
  const jobs = new RunJobs({
    db,
    dataDir,
    env: io.env,
    tokenEnvRemedy: serveTokenEnvRemedy,
  });
  const health = new HealthMonitor(db, {
    processCounters: true,
    erasureKey: erasure.lost ? "lost" : "present",
  });
  const app = createApp({
    db,
    ingestToken: token,
    hostname: values.host,
    publicOrigin: publicOrigin?.origin,
    uiAuthToken,
    oneTimeLogin,
    accounts,
    readOnly,
    health,
    log: (line) => io.err(line + "\n"),
    requestLog: (line) => io.err(line + "\n"),
    mcp: { dataDir, jobs, authToken: uiAuthToken, allowTraceQueries },
    erasureKey: erasure.key,
    erasureKeyProblem: erasure.lost && LOST_KEY_PROBLEM,
    stagingAdapter,
    // The same job manager as MCP's: one external run at a time for both.
    runs: { dataDir, jobs },
    ...(defaultApplication ? { defaultApplicationId: defaultApplication } : {}),
  });
  let server: GuardedServer;
  try {
    server = await listenGuarded(app.fetch, { hostname: values.host, port });
  } catch (error) {
    stopPropagation();
    db.close();
    throw listenError(error, values.host, port);
  }
  // Ingest's inserts and WAL copies run on threads of their own, not on requests.
  const writes = await startWriteThread(db);
  // Erasures not yet in the file (a reader kept the WAL) reach it with them.
  const checkpoints = startBackgroundCheckpoints(db, {
    truncation: erasureTruncation(db),
  });
  const tenantBound = Object.values(accounts).some((account) =>
    account.application_id !== undefined || account.user_id !== undefined
  );
  const { hostname, port: bound } = server.addr;
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  io.err(
    `Trace server listening on http://${shown}:${bound} (data: ${
      terminalSafe(dbLocation(db))
    })\n`,
  );
  io.err(
    `  ingest auth: ${
      token ? "bearer token (TRACE_INGEST_TOKEN)" : "none, loopback only"
    }\n`,
  );
  if (publicOrigin) {
    io.err(
      `  public origin: ${publicOrigin.origin} (for browsers through the proxy: its Host and Origin are accepted, the session cookie is ${
        publicSessionCookieName(publicOrigin)
      }${publicOrigin.https ? " and Secure" : ""})\n`,
    );
  }
  io.err(
    uiStartupLines(
      publicOrigin?.origin ?? `http://${shown}:${bound}`,
      oneTimeLogin,
      uiAuthToken,
      {
        accounts: accountCount,
        tenantBound,
        ingestToken: token !== undefined,
        readOnly,
      },
    ),
  );
  if (stagingAdapter) {
    io.err(
      `  staging adapter: http://${shown}:${bound}${SELF_STAGING_PATH} (application ${SELF_STAGING_APPLICATION}; deletions are erasures with receipts)\n`,
    );
  }
  io.err(
    `  mcp: /mcp ${
      uiAuthToken || accountCount > 0
        ? "with bearer tokens (TRACE_UI_AUTH_TOKEN, accounts)"
        : "refuses every request until TRACE_UI_AUTH_TOKEN is set"
    }\n`,
  );
  io.err(mcpTraceQueriesLine(allowTraceQueries, tenantBound));
  // Link checks read every event: start them now, not on the first request.
  void health.report().catch(() => {});
  await untilInterrupted(io);
  await server.shutdown();
  stopPropagation();
  await health.idle();
  await jobs.close();
  await writes.stop();
  await checkpoints.stop();
  await closeWriting(db, io);
  io.err("Trace server stopped\n");
  return 0;
};
