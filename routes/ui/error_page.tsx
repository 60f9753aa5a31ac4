/**
 * Errors as pages for people: a browser asking for a page gets the error's
 * message in the page shell; scripts and the API keep JSON answers. The
 * message may repeat what the address held (a path, an id), so it is shown
 * as stored text is: a bidi override in a link cannot reorder it.
 *
 * @module
 */

import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isApiPath } from "../_error_codes.ts";
import type { SiteInfo } from "./context.ts";
import { Shown } from "./components/shown_text.tsx";
import { renderPage } from "./layout.tsx";

/** Whether the request is a browser asking for a page (not the API, not a twin): a navigation, or a form it posted. */
export function wantsHtml(c: Context): boolean {
  const path = c.req.path;
  const form = c.req.method === "POST" &&
    (c.req.header("content-type") ?? "").startsWith(
      "application/x-www-form-urlencoded",
    );
  if (c.req.method !== "GET" && c.req.method !== "HEAD" && !form) return false;
  if (isApiPath(path) || path.endsWith(".json")) return false;
  return (c.req.header("accept") ?? "").includes("text/html");
}

const TITLES: Partial<Record<number, string>> = {
  400: "Bad request",
  401: "Sign-in needed",
  403: "Not allowed",
  404: "Page not found",
  405: "Method not allowed",
  409: "Conflict",
  410: "Gone",
  500: "Something went wrong",
  501: "Not configured on this server",
  502: "Upstream error",
  503: "Unavailable",
};

/** An error page with the answer's message and a way onward. */
export function renderErrorPage(
  c: Context,
  site: SiteInfo,
  status: ContentfulStatusCode,
  message: string,
): Response | Promise<Response> {
  const title = TITLES[status] ?? `Error ${status}`;
  return renderPage(
    c,
    { title, path: c.req.path, principal: null, csrf: null, site },
    <div class="narrow">
      <h1>{title}</h1>
      <p class="notice" role="alert">
        <Shown text={message} />
      </p>
      <p>
        <a href="/">Go to the start page</a>
      </p>
    </div>,
    status,
  );
}
