/**
 * The role × endpoint matrix over every route the app registers: each route
 * has an access rule (a new route without one fails here), and each
 * operator gets exactly what the permission matrix allows, in normal and in
 * read-only mode.
 */

import { createSelfStagingAdapter } from "../lib/obs/self_contract/mod.ts";
import assert from "node:assert/strict";
import type { Hono } from "hono";
import {
  AccountBook,
  ACTIONS,
  decide,
  type Principal,
} from "../lib/auth/mod.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { RunJobs } from "../lib/runs/mod.ts";
import {
  isMiddlewareRoute,
  ROUTE_ACCESS,
  routeAccess,
} from "../routes/access.ts";
import { createApp } from "../routes/app.ts";
import { EXAMPLE_ACCOUNTS } from "../fixtures/host/host.ts";
import { HostStore } from "../fixtures/host/store.ts";
import { seedExampleTraces } from "../fixtures/host/traces.ts";
import { withDb } from "./_helpers.ts";
import { ask, type Operator } from "./operator_support.ts";

/** The app with every optional part on: accounts, hooks, `/mcp`. */
async function withFullApp(
  readOnly: boolean,
  fn: (app: Hono, db: TraceDb) => Promise<void>,
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await seedExampleTraces(db);
    const jobs = new RunJobs({ db, dataDir, trace: false });
    try {
      const app = createApp({
        db,
        log: () => {},
        accounts: new AccountBook(EXAMPLE_ACCOUNTS),
        readOnly,
        ...new HostStore().hooks(),
        mcp: { dataDir, jobs, allowTraceQueries: true },
        // Every optional route set is mounted, so the matrix covers them all.
        stagingAdapter: createSelfStagingAdapter(db, {
          key: new Uint8Array(32),
        }),
        erasureKey: new Uint8Array(32),
      });
      await fn(app, db);
    } finally {
      await jobs.close();
    }
  });
}

interface Endpoint {
  method: string;
  path: string;
}

/** Every endpoint the app registers (middleware left out), once each. */
function endpoints(app: Hono): Endpoint[] {
  const seen = new Map<string, Endpoint>();
  for (const route of app.routes) {
    if (isMiddlewareRoute(route.path)) continue;
    seen.set(`${route.method} ${route.path}`, {
      method: route.method,
      path: route.path,
    });
  }
  return [...seen.values()];
}

/** A request path for a route pattern: parameters become `x` (a twin's `x.json`). */
function concrete(path: string): string {
  return path.replace(/:\w+\{[^}]*\}/g, "x.json").replace(/:\w+/g, "x");
}

/** A method that reaches `endpoint` (an `ALL` fallback is reached by a method nothing else takes). */
function methodOf(endpoint: Endpoint): string {
  return endpoint.method === "ALL" ? "PUT" : endpoint.method;
}

const OPERATORS: Operator[] = [
  "viewer-1",
  "analyst-1",
  "ops-1",
  "admin-1",
  "support-app1",
  "anon-viewer",
  "ada-viewer",
];

function principalOf(operator: Operator): Principal {
  const account = EXAMPLE_ACCOUNTS[operator] as {
    role: Principal["role"];
    application_id?: string;
    user_id?: string | null;
  };
  const scope: Principal["scope"] = {};
  if (account.application_id !== undefined) {
    scope.application_id = account.application_id;
  }
  if (account.user_id !== undefined) scope.user_id = account.user_id;
  return { name: operator, role: account.role, scope, via: "bearer" };
}

Deno.test("every route the app registers has an access rule, and every rule names a registered route", async () => {
  await withFullApp(false, (app) => {
    const routes = endpoints(app);
    assert.ok(routes.length > 20, "the app's routes were enumerated");
    const missing = routes
      .filter((r) => !routeAccess(r.method, r.path))
      .map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(
      missing,
      [],
      `add these routes to ROUTE_ACCESS in routes/access.ts: ${
        missing.join(", ")
      }`,
    );
    const registered = new Set(routes.map((r) => `${r.method} ${r.path}`));
    const stale = Object.keys(ROUTE_ACCESS).filter((key) =>
      key.endsWith("/*")
        ? !routes.some((r) =>
          `${r.method} ${r.path}`.startsWith(key.slice(0, -1))
        )
        : !registered.has(key)
    );
    assert.deepEqual(stale, [], "rules for routes the app does not register");
    return Promise.resolve();
  });
});

Deno.test("the rules keep tenant-bound accounts on trace routes, and never let a GET write", async () => {
  await withFullApp(false, (app) => {
    const bound = principalOf("support-app1");
    for (const endpoint of endpoints(app)) {
      const access = routeAccess(endpoint.method, endpoint.path)!;
      const key = `${endpoint.method} ${endpoint.path}`;
      if (access.gate !== "public" && decide(bound, access.action).allowed) {
        assert.match(
          endpoint.path,
          // The start page and its twin show a tenant-bound account no runs (overview.tsx).
          /^\/(traces\/|api\/events|api$|mcp$|index\.json$|$)/,
          `${key} is open to tenant-bound accounts but is not a trace route`,
        );
        assert.doesNotMatch(endpoint.path, /^\/traces\/health/, key);
      }
      if (ACTIONS[access.action].write) {
        assert.notEqual(endpoint.method, "GET", `${key} writes on GET`);
      }
    }
    return Promise.resolve();
  });
});

Deno.test("a route without an access rule is refused, whoever asks", async () => {
  await withFullApp(false, async (app) => {
    app.get("/traces/unlisted", (c) => c.text("should not be reached"));
    const response = await ask(app, "GET", "/traces/unlisted", {
      as: "admin-1",
    });
    assert.equal(response.status, 403);
    assert.match(await response.text(), /no access rule covers this route/);
  });
});

Deno.test("role × endpoint: every operator gets exactly what its role and scope allow, on every route", async (t) => {
  await withFullApp(false, async (app) => {
    for (const endpoint of endpoints(app)) {
      const access = routeAccess(endpoint.method, endpoint.path)!;
      if (access.gate === "public") continue;
      const method = methodOf(endpoint);
      const path = concrete(endpoint.path);
      await t.step(`${method} ${path} (${access.action})`, async () => {
        for (const operator of OPERATORS) {
          const decision = decide(principalOf(operator), access.action);
          const response = await ask(app, method, path, {
            as: operator,
            ...(method === "POST" ? { json: {} } : {}),
            ...(access.gate === "mcp" ? { headers: MCP_HEADERS } : {}),
          });
          const body = await response.text();
          const where =
            `${operator} on ${method} ${path}: HTTP ${response.status} ${
              body.slice(0, 160)
            }`;
          if (access.gate === "mcp") {
            // /mcp admits every operator; its tools are checked per role (auth_mcp_test.ts).
            assert.notEqual(response.status, 401, where);
            assert.notEqual(response.status, 403, where);
            continue;
          }
          assert.notEqual(response.status, 401, where);
          if (decision.allowed) assert.notEqual(response.status, 403, where);
          else {
            assert.equal(response.status, 403, where);
            assert.equal(JSON.parse(body).error.message, decision.message);
          }
        }
      });
    }
  });
});

const MCP_HEADERS = { accept: "application/json, text/event-stream" };

Deno.test("signed-out visitors: pages go to the login page, twins and operator endpoints answer 401, the open API answers", async () => {
  await withFullApp(false, async (app) => {
    for (const endpoint of endpoints(app)) {
      const access = routeAccess(endpoint.method, endpoint.path)!;
      // Sign-in pages answer a missing token themselves.
      if (access.gate === "public") continue;
      const method = methodOf(endpoint);
      const path = concrete(endpoint.path);
      const response = await ask(app, method, path, {
        ...(method === "POST" ? { json: {} } : {}),
      });
      await response.body?.cancel();
      const where = `${method} ${path}: HTTP ${response.status}`;
      if (access.gate === "ui") {
        const page = method === "GET" && !endpoint.path.includes(".json");
        assert.equal(response.status, page ? 303 : 401, where);
      } else if (access.gate === "mcp") {
        assert.equal(response.status, 401, where);
      } else {
        assert.ok(![401, 403].includes(response.status), where);
      }
    }
  });
});

Deno.test("on the open API a credential that matches nobody is refused with 401 on every API route, never read as anonymous", async () => {
  await withFullApp(false, async (app) => {
    const unknown: [string, Record<string, string>][] = [
      ["a wrong bearer token", {
        authorization: "Bearer wrong-token-xxxxxxxxxxxxxxxx",
      }],
      ["basic credentials", { authorization: `Basic ${btoa("x:y")}` }],
      ["an empty Authorization header", { authorization: "" }],
      ["a stale session cookie", { cookie: "trace_session_8788=stale.value" }],
    ];
    let routes = 0;
    for (const endpoint of endpoints(app)) {
      const access = routeAccess(endpoint.method, endpoint.path)!;
      if (access.gate !== "api" && access.gate !== "mcp") continue;
      routes++;
      const method = methodOf(endpoint);
      const path = concrete(endpoint.path);
      for (const [what, headers] of unknown) {
        const response = await ask(app, method, path, {
          headers: { ...headers, ...MCP_HEADERS },
          ...(method === "POST" ? { json: {} } : {}),
        });
        const body = await response.text();
        const where = `${what} on ${method} ${path}: HTTP ${response.status}`;
        assert.equal(response.status, 401, `${where} ${body.slice(0, 200)}`);
        assert.equal(
          response.headers.get("www-authenticate"),
          'Bearer realm="trace"',
          where,
        );
      }
    }
    assert.ok(routes > 10, "the API's routes were enumerated");
    const events = await ask(app, "GET", "/api/events?limit=1", {
      token: "wrong-token-xxxxxxxxxxxxxxxx",
    });
    assert.equal(
      (await events.json()).error.message,
      "The Authorization header matches no credential of this server; send Authorization: Bearer with TRACE_UI_AUTH_TOKEN or your operator token, or leave the header out (this API is open on loopback)",
    );
    const stale = await ask(app, "GET", "/api/events?limit=1", {
      cookie: "trace_session_8788=stale.value",
    });
    assert.equal(stale.status, 401);
    assert.match(
      (await stale.json()).error.message,
      /sign in again at \/login/,
    );
    assert.match(
      stale.headers.get("set-cookie") ?? "",
      /^trace_session_8788=; Max-Age=0/,
      "the stale cookie is cleared",
    );
    // No credential at all is today's open API; a known one is its operator.
    const open = await ask(app, "GET", "/api/events?limit=1");
    assert.equal(open.status, 200);
    await open.body?.cancel();
    const scoped = await ask(app, "GET", "/api/events?application_id=app-2", {
      as: "support-app1",
    });
    assert.equal(scoped.status, 403);
    await scoped.body?.cancel();
  });
});

Deno.test("read-only mode: every write is refused to everyone, every read still answers", async () => {
  await withFullApp(true, async (app) => {
    let writes = 0;
    for (const endpoint of endpoints(app)) {
      const access = routeAccess(endpoint.method, endpoint.path)!;
      if (access.gate === "public" || access.gate === "mcp") continue;
      const method = methodOf(endpoint);
      const path = concrete(endpoint.path);
      const decision = decide(principalOf("admin-1"), access.action, {
        readOnly: true,
      });
      for (const as of ["admin-1", undefined] as const) {
        if (as === undefined && access.gate !== "api") continue;
        const response = await ask(app, method, path, {
          ...(as ? { as } : {}),
          ...(method === "POST" ? { json: {} } : {}),
        });
        const body = await response.text();
        const where = `${
          as ?? "ingest client"
        } on ${method} ${path}: HTTP ${response.status} ${body.slice(0, 120)}`;
        if (decision.allowed) assert.notEqual(response.status, 403, where);
        else {
          writes++;
          assert.equal(response.status, 403, where);
          assert.match(body, /read-only \(TRACE_UI_READ_ONLY=true\)/, where);
        }
      }
    }
    assert.ok(writes >= 4, "ingest, OTLP and replay drafts were tried");
  });
});
