/**
 * Signing in and out of the UI.
 *
 * - `GET /login?token=T` exchanges the one-time login token (or
 *   `TRACE_UI_AUTH_TOKEN`, which may be used again) for a session cookie and
 *   redirects to `next` (default `/`), a URL without the token. A spent
 *   one-time token gets a page saying so and how to get a new one. Only a
 *   URL typed or pasted into the address bar (`Sec-Fetch-Site: none`) or
 *   followed from this server's own pages is exchanged: a link on another
 *   site (`Sec-Fetch-Site: cross-site` or `same-site`, or, from a browser
 *   without Fetch Metadata, a `Referer` of another origin) could otherwise
 *   sign the visitor's browser in to the linker's account (login CSRF), so
 *   it gets a page saying so and the token is left unspent.
 * - `GET /login` explains how to get in; `POST /login` signs in with a
 *   token typed into its form (kept out of URLs and history).
 * - `POST /logout` (with the session's CSRF token) ends the session.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "hono";
import type { Child, FC } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { LOCAL_OPERATOR, type OperatorAccount } from "./principal.ts";
import {
  endSession,
  formField,
  requireCsrf,
  requirePrincipal,
  sessionAccount,
  startSession,
  tokenSignIn,
  typedOrOwnPage,
  type UiAuth,
} from "./_ui_auth.ts";
import type { SiteInfo, UiEnv } from "./ui/context.ts";
import { renderPage } from "./ui/layout.tsx";

/** Why the login page is shown. */
type LoginState =
  | "sign_in"
  | "used"
  | "invalid"
  | "wrong_token"
  | "signed_out"
  | "cross_site";

const STATUS: Record<LoginState, ContentfulStatusCode> = {
  sign_in: 200,
  signed_out: 200,
  used: 410,
  invalid: 403,
  wrong_token: 403,
  cross_site: 403,
};

/** Sign-in routes: `/login` and `/logout`. */
export function createLoginRoutes(
  deps: { auth: UiAuth; site: SiteInfo },
): Hono<UiEnv> {
  const { auth } = deps;
  const app = new Hono<UiEnv>();
  // Sign-in answers (pages and redirects setting cookies) are never cached.
  const noStore: MiddlewareHandler = async (c, next) => {
    await next();
    c.header("Cache-Control", "no-store");
  };
  const page = (c: Context, state: LoginState, next: string) => {
    return renderPage(
      c,
      {
        title: state === "signed_out" ? "Signed out" : "Sign in",
        path: "/login",
        principal: null,
        csrf: null,
        site: deps.site,
      },
      <LoginBody auth={auth} state={state} next={next} />,
      STATUS[state],
    );
  };

  app.get("/login", noStore, async (c) => {
    const next = safeNext(c.req.query("next"));
    const token = c.req.query("token");
    if (token === undefined) {
      if (await sessionAccount(c, auth)) return c.redirect(next, 303);
      const state = c.req.query("signed_out") !== undefined
        ? "signed_out"
        : "sign_in";
      return page(c, state, next);
    }
    if (!typedOrOwnPage(c, auth.publicOrigin)) {
      return page(c, "cross_site", next);
    }
    // A HEAD, as link checkers send, only looks: it must neither spend the
    // link nor be handed the session a browser would get. (A preview that
    // fetches with GET still spends it, as the person's own GET would.)
    if (c.req.method === "HEAD") return page(c, "sign_in", next);
    const result = await exchange(auth, token);
    if (typeof result === "object") {
      await startSession(c, auth, result);
      return c.redirect(next, 303);
    }
    // A spent link in a browser that is already signed in just goes on.
    if (await sessionAccount(c, auth)) return c.redirect(next, 303);
    return page(c, result === "used" ? "used" : "invalid", next);
  });

  app.post("/login", noStore, async (c) => {
    const next = safeNext(await formField(c, "next"));
    const result = await exchange(auth, await formField(c, "token"));
    if (typeof result !== "object") {
      return page(c, result === "used" ? "used" : "wrong_token", next);
    }
    await startSession(c, auth, result);
    return c.redirect(next, 303);
  });

  app.post(
    "/logout",
    noStore,
    async (c, next) => {
      // An expired session has nothing to end: back to the login page.
      if (!c.req.header("authorization") && !(await sessionAccount(c, auth))) {
        await endSession(c, auth);
        return c.redirect("/login", 303);
      }
      await next();
    },
    requirePrincipal(auth, "page"),
    requireCsrf(auth),
    async (c) => {
      await endSession(c, auth);
      return c.redirect("/login?signed_out", 303);
    },
  );
  return app;
}

/** The account a token signs in as, or why it does not. */
async function exchange(
  auth: UiAuth,
  token: string,
): Promise<OperatorAccount | "used" | "wrong"> {
  if (token === "") return "wrong";
  const account = await auth.directory.byToken(token);
  if (account) return account;
  const check = await auth.oneTimeLogin?.consume(token) ?? "wrong";
  if (check !== "accepted") return check;
  return auth.directory.resolve(LOCAL_OPERATOR) ?? "wrong";
}

/**
 * A same-site path to return to after signing in; anything else (another
 * host, `//host`, a backslash trick, the login page itself) becomes `/`.
 */
export function safeNext(next: string | undefined): string {
  if (next === undefined || !next.startsWith("/")) return "/";
  if (next.startsWith("//") || [...next].some(unsafeInPath)) return "/";
  if (next === "/login" || next.startsWith("/login?")) return "/";
  return next;
}

/** Backslashes (read as slashes by browsers) and control characters. */
function unsafeInPath(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return ch === "\\" || code < 0x20 || code === 0x7f;
}

const NOTICES: Record<LoginState, Child> = {
  sign_in: null,
  signed_out: "You are signed out.",
  used:
    "This login link has already been used. A login link opens one browser session and then stops working, so a copy left in a terminal or in browser history lets nobody else in.",
  invalid:
    "This login link is not valid for this server. Login links stop working when the server restarts.",
  wrong_token: "That token is not valid for this server.",
  cross_site:
    "This login link was opened from another site, so it was not used: a link elsewhere could otherwise sign your browser in to someone else's account. If the link is yours, paste it into the address bar yourself.",
};

const LoginBody: FC<{ auth: UiAuth; state: LoginState; next: string }> = (
  { auth, state, next },
) => {
  const notice = NOTICES[state];
  const oneTime = auth.oneTimeLogin !== undefined;
  const tokens = tokenSignIn(auth);
  return (
    <div class="narrow">
      <h1>{state === "signed_out" ? "Signed out" : "Sign in to Trace"}</h1>
      {notice ? <p class="notice" role="alert">{notice}</p> : null}
      {!oneTime && !tokens
        ? (
          <p>
            Sign-in is not available: this server listens beyond loopback and
            {" "}
            <code>TRACE_UI_AUTH_TOKEN</code> is not set. Restart it with{" "}
            <code>TRACE_UI_AUTH_TOKEN</code> set to a long random secret.
          </p>
        )
        : (
          <>
            <h2>Ways in</h2>
            <ul class="steps">
              {oneTime
                ? (
                  <li>
                    Open the login URL that <code>trace serve</code>{" "}
                    printed on its standard error when it started. It works
                    once. Lost it, or already used it? Stop the server and start
                    it again to print a new one.
                  </li>
                )
                : null}
              <li>
                {tokens
                  ? (
                    <>
                      Sign in below with your operator token or the server's
                      {" "}
                      <code>TRACE_UI_AUTH_TOKEN</code>; it works as often as you
                      need.
                    </>
                  )
                  : (
                    <>
                      Start the server with <code>TRACE_UI_AUTH_TOKEN</code>
                      {" "}
                      set (at least 16 printable ASCII characters, no
                      whitespace) and sign in with it here, as often as you
                      need.
                    </>
                  )}
              </li>
              <li>
                Scripts send{" "}
                <code>Authorization: Bearer $TRACE_UI_AUTH_TOKEN</code>{" "}
                to any page or its <code>.json</code> twin.
              </li>
            </ul>
            {tokens ? <TokenForm next={next} /> : null}
          </>
        )}
    </div>
  );
};

const TokenForm: FC<{ next: string }> = ({ next }) => (
  <form method="post" action="/login" class="stack">
    <input type="hidden" name="next" value={next} />
    <div>
      <label for="token">Operator token or TRACE_UI_AUTH_TOKEN</label>
      <input
        type="password"
        id="token"
        name="token"
        autocomplete="current-password"
        required
      />
    </div>
    <div>
      <button type="submit" class="button--primary">Sign in</button>
    </div>
  </form>
);
