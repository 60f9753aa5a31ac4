/**
 * Shared set-up of the operator tests: the example host program
 * (`fixtures/host/`) over a fresh migrated database with its example
 * traces, and requests to it in memory as one of its operators.
 */

import type { ServerApp } from "../routes/server_app.ts";
import { AccountBook } from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { createHostApp, EXAMPLE_ACCOUNTS } from "../fixtures/host/host.ts";
import { HostStore } from "../fixtures/host/store.ts";
import { seedExampleTraces } from "../fixtures/host/traces.ts";
import { withDb } from "./_helpers.ts";

/** The stored preview of `evt-answer` in app-1 (made-up text of the example host). */
export const ANSWER_PREVIEW =
  "Your refund for order 1182 was issued on Monday.";

/** A valid reveal of `evt-answer`'s preview in turn 1, with a reason. */
export const REVEAL = {
  agent_id: "support-bot",
  root_trace_id: "root-1",
  event_id: "evt-answer",
  turn_id: "turn-1",
  reason: "SUP-1234 refund dispute",
};

/** An example operator's name. */
export type Operator = keyof typeof EXAMPLE_ACCOUNTS;

/** The bearer token of an example operator. */
export function tokenOf(operator: Operator): string {
  return EXAMPLE_ACCOUNTS[operator].token;
}

/** The example host, in memory. */
export interface HostFixture {
  app: ServerApp;
  db: TraceDb;
  dataDir: string;
  accounts: AccountBook;
  store: HostStore;
  /** Lines the server logged. */
  logs: string[];
}

/** Options of {@link withHost}. */
export interface HostFixtureOptions {
  readOnly?: boolean;
  withoutHooks?: boolean;
  /** Leave the example traces out. */
  empty?: boolean;
}

/** Runs `fn` with the example host over a fresh database. */
export async function withHost<T>(
  options: HostFixtureOptions,
  fn: (host: HostFixture) => Promise<T>,
): Promise<T> {
  return await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    if (!options.empty) await seedExampleTraces(db);
    const logs: string[] = [];
    const accounts = new AccountBook(EXAMPLE_ACCOUNTS);
    const store = new HostStore();
    const { app } = createHostApp({
      db,
      accounts,
      store,
      withoutHooks: options.withoutHooks ?? false,
      readOnly: options.readOnly ?? false,
      log: (line) => logs.push(line),
    });
    return await fn({ app, db, dataDir, accounts, store, logs });
  });
}

/** How a test request signs in and what it sends. */
export interface Ask {
  /** Sign in as this operator with its bearer token. */
  as?: Operator;
  /** Or send this raw token. */
  token?: string;
  /** Or this session cookie (with `csrf` for writes). */
  cookie?: string;
  csrf?: string;
  json?: unknown;
  form?: Record<string, string>;
  /** A raw body, sent with `headers` as given. */
  body?: string;
  headers?: Record<string, string>;
}

const ORIGIN = "http://127.0.0.1:8788";

/** Sends `method path` to the in-memory app. */
export async function ask(
  app: ServerApp,
  method: string,
  path: string,
  options: Ask = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    host: "127.0.0.1:8788",
    ...options.headers,
  };
  const token = options.as ? tokenOf(options.as) : options.token;
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (options.cookie) headers.cookie = options.cookie;
  if (options.csrf) headers["x-csrf-token"] = options.csrf;
  let body: string | null = options.body ?? null;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(options.form).toString();
  }
  if (method !== "GET" && method !== "HEAD") headers.origin = ORIGIN;
  return await app.request(`${ORIGIN}${path}`, { method, headers, body });
}

/** Signs `operator` in with its token at `/login`; returns the cookie and the session's CSRF token. */
export async function signInAs(
  app: ServerApp,
  operator: Operator,
): Promise<{ cookie: string; csrf: string }> {
  const login = await ask(app, "POST", "/login", {
    form: { token: tokenOf(operator), next: "/traces/events/evt-search" },
  });
  const cookie = login.headers.get("set-cookie")?.split(";")[0];
  if (login.status !== 303 || !cookie) {
    throw new Error(`Sign-in of ${operator} failed: HTTP ${login.status}`);
  }
  const page = await ask(app, "GET", "/traces/events/evt-search", { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error("The event page has no CSRF token");
  return { cookie, csrf };
}

/** Reads a JSON answer, failing with the body when it is not JSON. */
// deno-lint-ignore no-explicit-any
export async function jsonOf(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
  }
}

/** Every row of the audit table, as stored. */
export async function auditRows(
  db: TraceDb,
): Promise<Record<string, unknown>[]> {
  const result = await db.client.execute(
    "SELECT * FROM auth_audit ORDER BY seq",
  );
  return result.rows.map((row) => ({ ...row }));
}
