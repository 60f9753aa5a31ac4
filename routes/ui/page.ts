/**
 * Pages and their JSON twins from one data function. `definePage` registers
 * `GET path` (HTML in the page shell) and `GET path.json` (the same data as
 * JSON); for a path ending in a parameter (`/runs/:id`) the twin is
 * `/runs/<id>.json`. Both sit behind the UI's sign-in, so a page cannot be
 * added without it (`createApp` adds the secure headers to every path
 * outside the API). The query string is passed to
 * both, and the page links its twin with the same query, so a filtered view
 * and its data share one URL shape.
 *
 * @module
 */

import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConfigError, NotFoundError } from "../../lib/errors.ts";
import { requirePrincipal, type UiAuth } from "../_ui_auth.ts";
import type { Principal } from "../principal.ts";
import type { SiteInfo, UiEnv } from "./context.ts";
import { renderPage, visibleDataLocation } from "./layout.tsx";

/** What a page's render function knows besides its data. */
export interface PageView {
  /** When the page is rendered (epoch ms), for relative times. */
  now: number;
  /** The request path and query (its origin is not the server's: the listener hands requests over a local socket). */
  url: URL;
  /**
   * The server's address as the reader reached it, for printed commands that
   * talk to this server: the public origin when the server has one (behind a
   * proxy the `Host` may be the proxy's upstream), else `http://` and the
   * request's `Host` (checked by the app's guard).
   */
  serverOrigin: string;
  /** The JSON twin of this exact request. */
  jsonHref: string;
  principal: Principal;
  /**
   * Where the data lives, for a reader the footer shows it to (`null` for
   * one it does not): what an empty state names as the place it read.
   */
  dataLocation: string | null;
  /**
   * The `--data-dir` / `--db` flags of this server's data for a printed
   * command, shown to the readers {@link dataLocation} is shown to (`""`
   * for the others: the flags name the place too).
   */
  dataFlags: string;
  /** The session's CSRF token for the page's forms (`null` or absent for a bearer request). */
  csrf?: string | null;
}

/** One page: its path, how to load its data and how to render it. */
export interface PageSpec<T> {
  /** Hono path, e.g. `/traces/health` or `/runs/:id`. */
  path: string;
  title: string | ((data: T) => string);
  /** Loads the data both representations share (params without `.json`). */
  load(c: Context<UiEnv>, params: Record<string, string>): Promise<T>;
  render(data: T, view: PageView): Child;
  /**
   * The status of the page's answer (default 200), e.g. a search form's
   * refused query shown on its own page; the JSON twin answers its data
   * with 200 or the error path's status.
   */
  status?: (data: T) => ContentfulStatusCode;
  /**
   * Why what the page names is not there for this reader (`null` when it
   * is): the page answers 404 with its own body, which says so and what to
   * check, and the twin 404 with the JSON error `not_found` carrying this
   * one line, as for any unknown record, instead of an empty read with 200.
   */
  notFound?: (data: T) => string | null;
  /**
   * The query parameters the page reads; any other is refused (400), so a
   * mistyped filter never shows everything as if it applied. Absent: the
   * page's loader checks its own query.
   */
  query?: readonly string[];
}

/** What {@link definePage} needs from the app. */
export interface PageDeps {
  auth: UiAuth;
  site: SiteInfo;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
}

/** Registers a page and its JSON twin on `app`. */
export function definePage<T>(
  app: Hono<UiEnv>,
  deps: PageDeps,
  spec: PageSpec<T>,
): void {
  const twin = twinPath(spec.path);
  const load = (c: Context<UiEnv>, params: Record<string, string>) => {
    if (spec.query) refuseOtherQuery(c, spec.path, spec.query);
    return spec.load(c, params);
  };
  // The twin first: `/runs/:id` would otherwise also match `/runs/x.json`.
  app.get(
    twin.path,
    requirePrincipal(deps.auth, "json"),
    async (c) => {
      c.header("Cache-Control", "no-store");
      const data = await load(c, twin.params(c.req.param()));
      const missing = spec.notFound?.(data) ?? null;
      if (missing !== null) throw new NotFoundError(missing);
      return c.json(data);
    },
  );
  const page = async (c: Context<UiEnv>) => {
    const data = await load(c, c.req.param());
    const url = new URL(c.req.url);
    const jsonHref = `${twinHref(url.pathname)}${url.search}`;
    const title = typeof spec.title === "string"
      ? spec.title
      : spec.title(data);
    const dataLocation = visibleDataLocation(c.get("principal"), deps.site);
    const view: PageView = {
      now: (deps.now ?? Date.now)(),
      url,
      serverOrigin: deps.site.publicOrigin ??
        serverOriginOf(c.req.header("host")),
      jsonHref,
      principal: c.get("principal"),
      dataLocation,
      // The flags name the place too: shown to whom the location is shown.
      dataFlags: dataLocation === null ? "" : deps.site.dataFlags,
      csrf: c.get("csrf"),
    };
    return renderPage(
      c,
      {
        title,
        path: url.pathname,
        principal: c.get("principal"),
        csrf: c.get("csrf"),
        site: deps.site,
        jsonHref,
      },
      spec.render(data, view),
      (spec.notFound?.(data) ?? null) === null
        ? spec.status?.(data) ?? 200
        : 404,
    );
  };
  app.get(spec.path, requirePrincipal(deps.auth, "page"), page);
  // The page of an id ending in ".json", linked with a slash (page_path.ts).
  if (/:\w+$/.test(spec.path)) {
    app.get(`${spec.path}/`, requirePrincipal(deps.auth, "page"), page);
  }
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * Refuses a query parameter outside `known`, or one of them given twice
 * (what {@link PageSpec.query} applies before a page loads; a page that
 * shows the refusal on itself calls it from its loader).
 */
export function refuseOtherQuery(
  c: Context<UiEnv>,
  path: string,
  known: readonly string[],
): void {
  const params = new URL(c.req.url).searchParams;
  for (const key of params.keys()) {
    if (known.includes(key)) {
      // Read once: a second value would be dropped without a word.
      if (params.getAll(key).length > 1) {
        throw new ConfigError(
          `Invalid ${path} query: ${key} may be given once`,
        );
      }
      continue;
    }
    // A key is repeated only when it reads as a name: it may be a pasted value.
    const named = PLAIN_NAME.test(key) ? `"${key}" is` : "a parameter is";
    throw new ConfigError(
      `Invalid ${path} query: ${named} not one this page reads (${
        known.length ? known.join(", ") : "none"
      }); remove it`,
    );
  }
}

/**
 * The address of a served page's twin. It takes a concrete path, never a
 * route pattern: an id such as `otlp:TRACE:SPAN` ends in what a pattern would
 * read as a parameter.
 */
function twinHref(pathname: string): string {
  const path = pathname.replace(/(.)\/$/, "$1");
  // The start page's twin would be `/.json`: it is `/index.json` instead.
  return path === "/" ? "/index.json" : `${path}.json`;
}

/** The twin's route, and how to recover the page's params from it. */
export function twinPath(path: string): {
  path: string;
  params: (raw: Record<string, string>) => Record<string, string>;
} {
  const last = /:(\w+)$/.exec(path);
  if (!last) return { path: twinHref(path), params: (raw) => raw };
  const name = last[1]!;
  return {
    path: `${path.slice(0, last.index)}:${name}{[^/]+\\.json}`,
    params: (raw) => ({ ...raw, [name]: raw[name]!.slice(0, -".json".length) }),
  };
}

/** `http://` and `host`; the default address of `trace serve` when a request has no `Host`. */
function serverOriginOf(host: string | undefined): string {
  return `http://${host ?? "127.0.0.1:8788"}`;
}
