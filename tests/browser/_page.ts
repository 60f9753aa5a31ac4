/// <reference lib="dom" />
/**
 * Pages that are not Trace's own, for browser tests: a fixture page that
 * loads the browser script, another site's form aimed at Trace, and a
 * request forged from inside a signed-in page with its CSRF token.
 */

import type { Page } from "playwright-core";
import { CLIENT_SCRIPT } from "../../routes/ui/_client_bundle.ts";
import { withServer } from "../_helpers.ts";

/**
 * Serves `html` at every path but two: `/app.js` (the browser script) and
 * `/state.json`, which answers `state(polls)` with the number of polls so
 * far. `fn` gets the origin and a reader of that count.
 */
export async function withScriptFixture<T>(
  html: string,
  state: (polls: number) => unknown,
  fn: (origin: string, polls: () => number) => Promise<T>,
): Promise<T> {
  let polls = 0;
  return await withServer((request) => {
    const path = new URL(request.url).pathname;
    if (path === "/app.js") {
      return new Response(CLIENT_SCRIPT, {
        headers: { "content-type": "text/javascript" },
      });
    }
    if (path === "/state.json") {
      polls++;
      return Response.json(state(polls));
    }
    return new Response(html, { headers: { "content-type": "text/html" } });
  }, (server) => fn(server.url, () => polls));
}

/**
 * Opens another site's page whose form posts to `action` with a guessed
 * CSRF token, submits it from `page` and returns Trace's HTTP status. The
 * site is `host` on another port: `127.0.0.1` is another origin of the same
 * site, `localhost` another site.
 */
export async function submitFromAnotherSite(
  page: Page,
  action: string,
  host: "127.0.0.1" | "localhost",
): Promise<number> {
  const form =
    `<!DOCTYPE html><form method="post" action="${action}"><input type="hidden" name="_csrf" value="guessed"><button>Win a prize</button></form>`;
  return await withServer(
    () => new Response(form, { headers: { "content-type": "text/html" } }),
    async (site) => {
      await page.goto(`http://${host}:${site.port}/`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith(new URL(action).pathname)),
        page.getByRole("button", { name: "Win a prize" }).click(),
      ]);
      return response.status();
    },
  );
}

/** A request sent by the page's own script: its status and body text. */
export interface PageAnswer {
  status: number;
  text: string;
}

/**
 * POSTs `fields` to `path` from inside `page` with the CSRF token of the
 * page's first form, as JSON (token in `x-csrf-token`) or as a form (token
 * in `_csrf`): what a forged request from a signed-in page can do.
 */
export async function postFromPage(
  page: Page,
  path: string,
  fields: Record<string, string>,
  encoding: "json" | "form",
): Promise<PageAnswer> {
  return await page.evaluate(async ({ path, fields, encoding }) => {
    const csrf =
      document.querySelector<HTMLInputElement>('input[name="_csrf"]')!.value;
    const response = await fetch(
      path,
      encoding === "json"
        ? {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": csrf },
          body: JSON.stringify(fields),
        }
        : {
          method: "POST",
          body: new URLSearchParams({ _csrf: csrf, ...fields }),
        },
    );
    return { status: response.status, text: await response.text() };
  }, { path, fields, encoding });
}
