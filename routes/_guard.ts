/**
 * The server's security rules, applied by `createApp` and nowhere else:
 *
 * - a server bound beyond loopback needs a token (checked at construction);
 * - tokens are long and free of whitespace;
 * - a bearer token, when configured, guards the API;
 * - foreign `Host` headers are refused on a loopback bind (DNS rebinding);
 * - cross-origin and cross-site browser requests are refused (`Origin`,
 *   `Sec-Fetch-Site`), so a web page cannot write into a local index;
 * - the public origin, when one is given (the `https://` address browsers
 *   use through a TLS reverse proxy), is this server's own: its host passes
 *   the Host check and its `Origin` the origin check, and nothing else does;
 * - a request with a body must say what it is (`Content-Type`).
 *
 * Hono's `bearerAuth` accepts only RFC 6750 token characters and knows only
 * the `Authorization` header; the check below accepts any token without
 * whitespace and is the seam where cookie sessions and operator accounts
 * resolve to a principal.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import { timingSafeEqual } from "hono/utils/buffer";
import { ConfigError } from "../lib/errors.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import { clipValue, quoteValue } from "../lib/echo.ts";

/** Shortest token accepted for any credential the server checks. */
export const MIN_TOKEN_LENGTH = 16;

/** Where the server listens and what it requires. */
export interface ServerSecurityOptions {
  /** The address the server listens on (default `127.0.0.1`). */
  hostname?: string | undefined;
  /** Bearer token required by the API; none means open, which only loopback allows. */
  ingestToken?: string | undefined;
  /**
   * The origin browsers reach the server at, e.g. `https://trace.example.com`
   * behind a TLS reverse proxy (`trace serve --public-origin`); see
   * {@link parsePublicOrigin}.
   */
  publicOrigin?: string | undefined;
}

/** The security decisions derived from {@link ServerSecurityOptions}. */
export interface ServerSecurity {
  loopbackBind: boolean;
  ingestToken: string | undefined;
  /** The public origin, parsed, or `undefined` when none was given. */
  publicOrigin: PublicOrigin | undefined;
}

/**
 * A public origin as {@link parsePublicOrigin} reads it when the server
 * starts, so no request parses it again.
 */
export interface PublicOrigin {
  /** As `URL.origin` spells it (`https://trace.example.com`), which is what a browser on it sends as `Origin`. */
  origin: string;
  /** Its host, lower case (`trace.example.com`, `[::1]`). */
  hostname: string;
  /** Its port, or its scheme's default when it names none (`443`). */
  port: string;
  /** Whether browsers reach it over https (the session cookie is then `Secure`). */
  https: boolean;
}

/**
 * Checks that a server may run with these options: a well-formed token, a
 * token whenever it listens or is reached beyond loopback (a public origin
 * of another host), a well-formed public origin.
 * Throws a `ConfigError` saying what to change.
 */
export function serverSecurity(options: ServerSecurityOptions): ServerSecurity {
  const hostname = options.hostname ?? "127.0.0.1";
  const token = options.ingestToken;
  if (token !== undefined) checkToken(token, "TRACE_INGEST_TOKEN");
  const loopbackBind = isLoopbackHost(hostname);
  if (!loopbackBind && token === undefined) {
    throw new ConfigError(
      `Refusing to serve on non-loopback host ${
        clipValue(hostname)
      } without TRACE_INGEST_TOKEN; set it or use --host 127.0.0.1`,
    );
  }
  const publicOrigin = options.publicOrigin === undefined
    ? undefined
    : parsePublicOrigin(options.publicOrigin);
  // A proxy makes every client a loopback one: without a token the open
  // API would answer whoever reaches the proxy.
  if (
    publicOrigin !== undefined && token === undefined &&
    !isLoopbackHost(publicOrigin.hostname)
  ) {
    throw new ConfigError(
      `Refusing --public-origin ${publicOrigin.origin} without TRACE_INGEST_TOKEN: through the proxy the API would be open to every client it reaches; set TRACE_INGEST_TOKEN`,
    );
  }
  return { loopbackBind, ingestToken: token, publicOrigin };
}

const ORIGIN_EXAMPLE = "such as https://trace.example.com";

/**
 * Reads a public origin: an absolute `http(s)` origin with no credentials,
 * path, query or fragment, `https` unless its host is loopback (the session
 * cookie crosses the network with it). Returns it with its `origin` as
 * `URL.origin` spells it (`https://Trace.example.com:443/` is
 * `https://trace.example.com`); throws a `ConfigError` naming what is wrong.
 */
export function parsePublicOrigin(value: string): PublicOrigin {
  const problem = (what: string) =>
    new ConfigError(
      `--public-origin ${
        quoteValue(value)
      } ${what}; give the origin browsers use, ${ORIGIN_EXAMPLE}`,
    );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw problem("is not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw problem("is not an http:// or https:// URL");
  }
  // Never echoed: the value holds a secret.
  if (url.username !== "" || url.password !== "") {
    throw new ConfigError(
      `--public-origin must not hold a user name or password; give the origin alone, ${ORIGIN_EXAMPLE}`,
    );
  }
  const extra = originExtra(value, url);
  if (extra !== null) throw problem(`has a ${extra}`);
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(
      `--public-origin ${
        quoteValue(value)
      } must use https:// for a host beyond loopback (the session cookie would cross the network in the clear); terminate TLS in the proxy and give its https:// origin`,
    );
  }
  return {
    origin: url.origin,
    hostname: url.hostname,
    port: originPort(url),
    https: url.protocol === "https:",
  };
}

/** The port of `url`, or its scheme's default when it names none. */
export function originPort(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/** The part of `value` beyond an origin (`URL` drops an empty `?` or `#`), or `null`. */
function originExtra(value: string, url: URL): string | null {
  if (url.pathname !== "/" || /^[a-z]+:\/\/[^/?#]*\/[^?#]/i.test(value)) {
    return "path";
  }
  if (value.includes("?")) return "query";
  if (value.includes("#")) return "fragment";
  return null;
}

/**
 * Refuses a token that is short or holds whitespace (a padded secret locks
 * everyone out), or any character beyond printable ASCII: clients send a
 * header as UTF-8 and the server reads it byte by byte, so such a token
 * never matches.
 */
export function checkToken(token: string, name: string): void {
  if (/\s/.test(token) || token.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `${name} must be at least ${MIN_TOKEN_LENGTH} characters with no whitespace; generate a long random secret`,
    );
  }
  if (!PRINTABLE_ASCII.test(token)) {
    throw new ConfigError(
      `${name} must be printable ASCII (letters, digits, punctuation); generate a long random secret`,
    );
  }
}

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** Requires `Authorization: Bearer <token>` when a token is configured. */
export function requireBearer(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (token !== undefined) {
      const header = c.req.header("authorization") ?? "";
      const given = /^Bearer /i.test(header) ? header.slice(7) : "";
      if (!(await timingSafeEqual(given, token))) {
        c.header("WWW-Authenticate", 'Bearer realm="trace"');
        throw new HTTPException(401, {
          message:
            "Missing or wrong bearer token; send Authorization: Bearer $TRACE_INGEST_TOKEN",
        });
      }
    }
    await next();
  };
}

const CROSS_ORIGIN = "Cross-origin requests are refused";
// Also what a browser behind an unconfigured proxy meets: say how to configure it.
const FOREIGN_ORIGIN =
  "Cross-origin requests are refused: the request's Origin is not this server's; behind a reverse proxy, start trace serve with --public-origin set to the address browsers use";

/**
 * Refuses non-loopback `Host` headers on a loopback bind, but for the public
 * origin's host (on its port, or with none, as a proxy forwarding `$host`
 * sends it): a DNS-rebinding page names a host of its own.
 */
export function loopbackHostOnly(
  loopbackBind: boolean,
  publicOrigin?: PublicOrigin,
): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    const hostname = host.replace(/:\d+$/, "");
    if (
      loopbackBind && hostname !== "" && !isLoopbackHost(hostname) &&
      !isPublicHost(host, publicOrigin)
    ) {
      throw new HTTPException(403, {
        message: `Host ${quoteValue(host)} is not served here; use ${
          publicOrigin === undefined
            ? "127.0.0.1 or localhost"
            : `${publicOrigin.origin}, 127.0.0.1 or localhost`
        }`,
      });
    }
    await next();
  };
}

/** Whether a `Host` header names the public origin's host, with its port or none. */
export function isPublicHost(
  host: string,
  publicOrigin: PublicOrigin | undefined,
): boolean {
  if (publicOrigin === undefined) return false;
  const given = /^(.*?)(?::(\d+))?$/.exec(host.toLowerCase())!;
  return given[1] === publicOrigin.hostname &&
    (given[2] === undefined || given[2] === publicOrigin.port);
}

/**
 * Refuses browser requests from another origin: an `Origin` that is neither
 * this host nor the public origin, and `Sec-Fetch-Site` other than
 * `same-origin` or `none` (a typed URL). A top-level GET navigation from
 * another site is allowed: it cannot write, and it lets a link to a page work.
 */
export function sameOriginOnly(
  publicOrigin?: PublicOrigin,
): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (
      origin !== undefined &&
      !ownOrigin(origin, c.req.header("host"), publicOrigin)
    ) {
      throw new HTTPException(403, { message: FOREIGN_ORIGIN });
    }
    const site = c.req.header("sec-fetch-site");
    if (site !== undefined && site !== "same-origin" && site !== "none") {
      const navigation = c.req.header("sec-fetch-mode") === "navigate" &&
        (c.req.method === "GET" || c.req.method === "HEAD");
      if (!navigation) throw new HTTPException(403, { message: CROSS_ORIGIN });
    }
    await next();
  };
}

/** Whether `url` (an `Origin` or a `Referer`) is on the host the request names; `null` and unparsable ones are not. */
function sameHost(url: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(url).host === host;
  } catch {
    return false;
  }
}

/**
 * Whether `url` (an `Origin` or a `Referer`) is this server's: on the host
 * the request names, or on the public origin (behind a proxy that forwards
 * its own `Host`, the browser's origin is only that).
 */
export function ownOrigin(
  url: string,
  host: string | undefined,
  publicOrigin: PublicOrigin | undefined,
): boolean {
  const isPublic = () => {
    try {
      return new URL(url).origin === publicOrigin?.origin;
    } catch {
      return false;
    }
  };
  if (publicOrigin === undefined) return sameHost(url, host);
  // On the public host only the public origin itself, scheme included: an
  // http:// page of that host is not the https:// server.
  if (isPublicHost(host ?? "", publicOrigin)) return isPublic();
  return sameHost(url, host) || isPublic();
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/**
 * Refuses a request with a body but no `Content-Type` (never guess JSON),
 * when a route takes its method: a path that has no such route answers its
 * own 404 or 405 instead of advice that would only lead there.
 */
export function requireContentType(): MiddlewareHandler {
  return async (c, next) => {
    const hasBody = c.req.raw.body !== null &&
      c.req.header("content-length") !== "0";
    const taken = matchedRoutes(c).some((route) =>
      route.method === c.req.method && !route.path.endsWith("*")
    );
    if (
      BODY_METHODS.has(c.req.method) && hasBody && taken &&
      !c.req.header("content-type")
    ) {
      await c.req.raw.body?.cancel().catch(() => {});
      throw new HTTPException(415, {
        message:
          "The request has no Content-Type; send Content-Type: application/json (or the type the endpoint documents)",
      });
    }
    await next();
  };
}
