/**
 * A UI server for tests: `createApp` over a temp data directory with a
 * migrated database and a one-time login, either in memory (`app.request`)
 * or listening on an ephemeral loopback port.
 */

import { type Hono } from "hono";
import { migrate, openDb, type TraceDb } from "../../lib/db.ts";
import { ALL_MIGRATIONS } from "../../lib/migrations.ts";
import { type AppOptions, createApp } from "../../routes/app.ts";
import {
  createOneTimeLogin,
  type OneTimeLogin,
} from "../../routes/one_time_login.ts";
import { withServer } from "../_helpers.ts";

/** A test admin token (`TRACE_UI_AUTH_TOKEN`). */
export const ADMIN_TOKEN = "ui-admin-token-0123456789";

/** The origin in-memory requests name (`app.request` listens nowhere). */
export const IN_MEMORY_ORIGIN = "http://127.0.0.1:8788";

/** Options of {@link withUiApp} and {@link withUiServer}. */
export interface UiFixtureOptions {
  /** Set `TRACE_UI_AUTH_TOKEN`. */
  adminToken?: string;
  /** Leave the database without tables (default: migrated). */
  bare?: boolean;
  /** Fill the database (or the data directory) before the app starts. */
  seed?: (db: TraceDb, dataDir: string) => Promise<unknown>;
  /** More `createApp` options, or a function of the database and data directory that returns them. */
  app?:
    | Partial<AppOptions>
    | ((db: TraceDb, dataDir: string) => Partial<AppOptions>);
}

/** An app over a fresh data directory. */
export interface UiFixture {
  app: Hono;
  db: TraceDb;
  dataDir: string;
  login: OneTimeLogin;
}

/** Runs `fn` with an in-memory app, cleaned up afterwards. */
export async function withUiApp<T>(
  options: UiFixtureOptions,
  fn: (fixture: UiFixture) => Promise<T>,
): Promise<T> {
  const dataDir = await Deno.makeTempDir({ prefix: "trace-ui-test-" });
  const db = await openDb({ dataDir });
  try {
    if (!options.bare) await migrate(db, ALL_MIGRATIONS);
    await options.seed?.(db, dataDir);
    const login = createOneTimeLogin();
    const more = typeof options.app === "function"
      ? options.app(db, dataDir)
      : options.app;
    const app = createApp({
      db,
      oneTimeLogin: login,
      uiAuthToken: options.adminToken,
      log: () => {},
      ...more,
    });
    return await fn({ app, db, dataDir, login });
  } finally {
    db.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

/** A listening app. */
export interface UiServer extends UiFixture {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The one-time login URL. */
  loginUrl: string;
}

/** Runs `fn` with the app listening on an ephemeral loopback port. */
export async function withUiServer<T>(
  options: UiFixtureOptions,
  fn: (server: UiServer) => Promise<T>,
): Promise<T> {
  return await withUiApp(
    options,
    (fixture) =>
      withServer(
        fixture.app.fetch,
        ({ url }) =>
          fn({ ...fixture, origin: url, loginUrl: fixture.login.url(url) }),
      ),
  );
}

/** The one-time login URL, going on to `path` once signed in (instead of the overview). */
export function loginUrlTo(loginUrl: string, path: string): string {
  return `${loginUrl}&next=${encodeURIComponent(path)}`;
}

/** Signs in through the one-time login in memory; returns the `Cookie` header value. */
export async function signIn(fixture: UiFixture): Promise<string> {
  const response = await fixture.app.request(
    at(fixture.login.path),
    page(),
  );
  const cookie = response.headers.get("set-cookie");
  if (response.status !== 303 || !cookie) {
    throw new Error(`Sign-in failed: HTTP ${response.status}`);
  }
  return cookie.split(";")[0]!;
}

/** Request init for a page on the in-memory app at {@link IN_MEMORY_ORIGIN}. */
export function page(
  headers: Record<string, string> = {},
  init: RequestInit = {},
): RequestInit {
  return {
    ...init,
    headers: { host: new URL(IN_MEMORY_ORIGIN).host, ...headers },
  };
}

/** An absolute URL on the in-memory app. */
export function at(path: string): string {
  return `${IN_MEMORY_ORIGIN}${path}`;
}
