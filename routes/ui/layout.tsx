/**
 * The page shell: a skip link, the header with the product name, the
 * navigation and who is signed in, the page's main landmark, and a footer
 * with the version and where the data lives. Pages pass their body; the
 * shell adds the stylesheet and the deferred browser script (pages work
 * without it).
 *
 * @module
 */

import type { Context } from "hono";
import type { Child, FC } from "hono/jsx";
import { raw } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { SCRIPT_PATH, STYLE_PATH } from "./assets.ts";
import { CopyId } from "./components/copy_id.tsx";
import { shownString } from "./components/shown_text.tsx";
import {
  isTenantBound,
  type Principal,
  roleAtLeast,
} from "../../lib/auth/mod.ts";
import type { PageFrame, SiteInfo } from "./context.ts";
import { currentNavItem, navItemsFor } from "./nav.ts";

/** The shell around a page body. */
export const Layout: FC<{ frame: PageFrame; children?: Child }> = (
  { frame, children },
) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content="light dark" />
      <title>{shownString(`${frame.title} · Trace`)}</title>
      {/* No favicon: an empty one keeps browsers from asking for /favicon.ico. */}
      <link rel="icon" href="data:," />
      <link rel="stylesheet" href={STYLE_PATH} />
      {frame.jsonHref
        ? (
          <link
            rel="alternate"
            type="application/json"
            href={frame.jsonHref}
          />
        )
        : null}
      <script src={SCRIPT_PATH} defer></script>
    </head>
    <body>
      <a class="skip-link" href="#main">Skip to content</a>
      <Header frame={frame} />
      <main id="main" class="site-main" tabindex={-1}>
        {children}
      </main>
      <Footer frame={frame} />
      <div id="announce" class="sr-only" aria-live="polite"></div>
    </body>
  </html>
);

const Header: FC<{ frame: PageFrame }> = ({ frame }) => {
  const current = currentNavItem(frame.path);
  return (
    <header class="site-header">
      <div class="site-header__inner">
        <a class="brand" href="/">Trace</a>
        {frame.principal
          ? (
            <nav class="site-nav" aria-label="Main">
              <ul>
                {navItemsFor(frame.principal).map((item) => (
                  <li>
                    <a
                      href={item.href}
                      aria-current={item === current ? "page" : undefined}
                    >
                      {item.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )
          : null}
        <SessionBox frame={frame} />
      </div>
    </header>
  );
};

const SessionBox: FC<{ frame: PageFrame }> = ({ frame }) => {
  const principal = frame.principal;
  if (!principal) return null;
  return (
    <div class="session">
      <span>
        Signed in as <strong>{principal.name}</strong> ({principal.role})
      </span>
      {frame.csrf
        ? (
          <form class="inline-form" method="post" action="/logout">
            <input type="hidden" name="_csrf" value={frame.csrf} />
            <button type="submit">Sign out</button>
          </form>
        )
        : null}
    </div>
  );
};

const Footer: FC<{ frame: PageFrame }> = ({ frame }) => (
  <footer class="site-footer">
    <div class="site-footer__inner">
      <span>Trace {frame.site.version}</span>
      <FooterData location={visibleDataLocation(frame.principal, frame.site)} />
      {frame.principal && frame.jsonHref
        ? (
          <span class="site-footer__json">
            This page as JSON: <a href={frame.jsonHref}>{frame.jsonHref}</a>
          </span>
        )
        : null}
      {
        /* The keys work with the script only, and only where the page has
           what they act on: the script shows each hint that applies. */
      }
      {frame.principal
        ? (
          <span class="shortcuts" data-key-hints="" hidden>
            Keys:{" "}
            <span data-key-hint="filter" hidden>
              <kbd>/</kbd> filter
            </span>{" "}
            <span data-key-hint="move" hidden>
              <kbd>j</kbd> <kbd>k</kbd> move
            </span>
          </span>
        )
        : null}
    </div>
  </footer>
);

const FooterData: FC<{ location: string | null }> = ({ location }) =>
  location === null ? null : (
    <span>
      Data: <CopyId value={location} label="data location" />
    </span>
  );

/**
 * Where the data lives, for a reader who may see it (the footer's "Data:"),
 * or `null`: it is server configuration, for unscoped operators and
 * administrators, not for every signed-in viewer (nor for visitors of the
 * login page), so a page names it only where the footer does.
 */
export function visibleDataLocation(
  principal: Principal | null,
  site: SiteInfo,
): string | null {
  return principal && roleAtLeast(principal.role, "operator") &&
      !isTenantBound(principal.scope)
    ? site.dataLocation
    : null;
}

/** Answers with a full HTML page (never cached: pages show live data). */
export function renderPage(
  c: Context,
  frame: PageFrame,
  body: Child,
  status: ContentfulStatusCode = 200,
): Response | Promise<Response> {
  c.header("Cache-Control", "no-store");
  return c.html(
    <>
      {raw("<!DOCTYPE html>")}
      <Layout frame={frame}>{body}</Layout>
    </>,
    status,
  );
}
