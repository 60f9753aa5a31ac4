/** UI sign-in through createApp: one-time login, admin token, redirects, CSRF, origin checks, headers. */

import assert from "node:assert/strict";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { createOneTimeLogin } from "../routes/one_time_login.ts";
import { ADMIN_TOKEN, at, page, signIn, withUiApp } from "./browser/_server.ts";
import { withDb } from "./_helpers.ts";

function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  assert.ok(match, "the page has a sign-out form with a CSRF token");
  return match[1]!;
}

function form(fields: Record<string, string>, headers = {}): RequestInit {
  return page({
    "content-type": "application/x-www-form-urlencoded",
    origin: "http://127.0.0.1:8788",
    ...headers,
  }, { method: "POST", body: new URLSearchParams(fields).toString() });
}

Deno.test("the one-time login sets a strict session cookie and redirects without the token", async () => {
  await withUiApp({}, async ({ app, login }) => {
    const response = await app.request(
      at(`${login.path}&next=${encodeURIComponent("/traces/health?a=1")}`),
      page(),
    );
    assert.equal(response.status, 303);
    assert.equal(response.headers.get("location"), "/traces/health?a=1");
    const cookie = response.headers.get("set-cookie") ?? "";
    assert.match(cookie, /^trace_session_8788=[^;]+;/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.match(cookie, /; Path=\//);
    assert.match(cookie, /; Max-Age=43200/);
    assert.doesNotMatch(cookie, /Secure/, "plain HTTP on loopback");
    assert.equal(response.headers.get("cache-control"), "no-store");
  });
});

Deno.test("a spent or wrong login token gets a page that says so and how to get in", async () => {
  await withUiApp({}, async (fixture) => {
    await signIn(fixture);
    const again = await fixture.app.request(at(fixture.login.path), page());
    assert.equal(again.status, 410);
    assert.equal(again.headers.get("set-cookie"), null);
    const text = await again.text();
    assert.match(text, /already been used/);
    assert.match(text, /start it\s+again to print a new one/);
    const wrong = await fixture.app.request(at("/login?token=nope"), page());
    assert.equal(wrong.status, 403);
    assert.match(await wrong.text(), /not valid for this server/);
  });
});

Deno.test("a HEAD of the login link neither spends it nor starts a session; the browser's GET then signs in", async () => {
  await withUiApp({}, async (fixture) => {
    const head = await fixture.app.request(
      at(fixture.login.path),
      page({}, { method: "HEAD" }),
    );
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("set-cookie"), null);
    assert.equal(head.headers.get("cache-control"), "no-store");
    const get = await fixture.app.request(at(fixture.login.path), page());
    assert.equal(get.status, 303);
    assert.match(get.headers.get("set-cookie") ?? "", /^trace_session_8788=/);
  });
});

Deno.test("a login link followed from another site is not exchanged; pasted into the address bar it works", async () => {
  await withUiApp({ adminToken: ADMIN_TOKEN }, async ({ app, login }) => {
    for (const site of ["cross-site", "same-site"]) {
      const response = await app.request(
        at(`${login.path}&next=/traces/health`),
        page({ "sec-fetch-site": site, "sec-fetch-mode": "navigate" }),
      );
      assert.equal(response.status, 403, site);
      assert.equal(response.headers.get("set-cookie"), null, site);
      assert.match(await response.text(), /opened from another site/);
    }
    const admin = await app.request(
      at(`/login?token=${ADMIN_TOKEN}`),
      page({ "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" }),
    );
    assert.equal(admin.status, 403);
    assert.equal(admin.headers.get("set-cookie"), null);
    await admin.body?.cancel();
    // The one-time token was not spent by the refused visits.
    const pasted = await app.request(
      at(`${login.path}&next=/traces/health`),
      page({ "sec-fetch-site": "none", "sec-fetch-mode": "navigate" }),
    );
    assert.equal(pasted.status, 303);
    assert.equal(pasted.headers.get("location"), "/traces/health");
    assert.match(pasted.headers.get("set-cookie") ?? "", /^trace_session_/);
  });
});

Deno.test("a login link followed from another site by a browser without Fetch Metadata is refused by its Referer", async () => {
  await withUiApp({}, async ({ app, login }) => {
    const own = new URL(at("/")).host;
    for (
      const referer of [
        "https://attacker.example/page",
        `http://${own}.attacker.example/`,
        "not a url",
      ]
    ) {
      const response = await app.request(
        at(`${login.path}&next=/traces/health`),
        page({ referer }),
      );
      assert.equal(response.status, 403, referer);
      assert.equal(response.headers.get("set-cookie"), null, referer);
      assert.match(await response.text(), /opened from another site/);
    }
    // Typed (no Referer, no Sec-Fetch-Site): the unspent token still works.
    const typed = await app.request(
      at(`${login.path}&next=/traces/health`),
      page(),
    );
    assert.equal(typed.status, 303);
    assert.match(typed.headers.get("set-cookie") ?? "", /^trace_session_/);
  });
});

Deno.test("a login link followed from Trace's own page (same-origin Referer) is exchanged", async () => {
  await withUiApp({}, async ({ app, login }) => {
    const response = await app.request(
      at(login.path),
      page({ referer: at("/login") }),
    );
    assert.equal(response.status, 303);
    assert.match(response.headers.get("set-cookie") ?? "", /^trace_session_/);
  });
});

Deno.test("a spent login link in a signed-in browser goes on to the page", async () => {
  await withUiApp({}, async (fixture) => {
    const cookie = await signIn(fixture);
    const again = await fixture.app.request(
      at(fixture.login.path),
      page({ cookie }),
    );
    assert.equal(again.status, 303);
    assert.equal(again.headers.get("location"), "/");
  });
});

Deno.test("pages without a session redirect to the login page; JSON twins answer 401", async () => {
  await withUiApp({}, async ({ app }) => {
    const redirect = await app.request(at("/traces/health?x=1"), page());
    assert.equal(redirect.status, 303);
    assert.equal(
      redirect.headers.get("location"),
      "/login?next=%2Ftraces%2Fhealth%3Fx%3D1",
    );
    const json = await app.request(at("/traces/health.json"), page());
    assert.equal(json.status, 401);
    assert.equal(json.headers.get("www-authenticate"), 'Bearer realm="trace"');
    assert.match((await json.json()).error.message, /TRACE_UI_AUTH_TOKEN/);
    const login = await app.request(at("/login?next=%2Ftraces"), page());
    assert.equal(login.status, 200);
    const html = await login.text();
    assert.match(html, /Sign in to Trace/);
    assert.match(html, /printed on its standard error/);
    assert.doesNotMatch(html, /trace\.db/, "no data location before sign-in");
  });
});

Deno.test("a session cookie from another server instance opens nothing and is cleared", async () => {
  await withUiApp({}, async (first) => {
    const cookie = await signIn(first);
    await withUiApp({}, async (second) => {
      const response = await second.app.request(
        at("/traces/health"),
        page({ cookie }),
      );
      assert.equal(response.status, 303);
      assert.match(response.headers.get("set-cookie") ?? "", /Max-Age=0/);
    });
  });
});

Deno.test("TRACE_UI_AUTH_TOKEN works as a bearer token on pages and twins, and as a reusable login", async () => {
  await withUiApp({ adminToken: ADMIN_TOKEN }, async ({ app }) => {
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const json = await app.request(at("/traces/health.json"), page(bearer));
    assert.equal(json.status, 200);
    assert.equal((await json.json()).schema.provisioned, true);
    const html = await app.request(at("/traces/health"), page(bearer));
    assert.equal(html.status, 200);
    const text = await html.text();
    assert.match(text, /Signed in as <strong>token<\/strong> \(admin\)/);
    assert.doesNotMatch(text, /name="_csrf"/, "no sign-out form for a script");
    for (const header of ["Bearer wrong-token-wrong-token", "Basic abc", ""]) {
      const refused = await app.request(
        at("/traces/health"),
        page({ authorization: header }),
      );
      assert.equal(refused.status, 401, header);
    }
    for (const round of [1, 2]) {
      const viaUrl = await app.request(
        at(`/login?token=${ADMIN_TOKEN}`),
        page(),
      );
      assert.equal(viaUrl.status, 303, `URL round ${round}`);
      const viaForm = await app.request(
        at("/login"),
        form({ token: ADMIN_TOKEN, next: "/traces/health" }),
      );
      assert.equal(viaForm.status, 303, `form round ${round}`);
      assert.equal(viaForm.headers.get("location"), "/traces/health");
    }
    const wrong = await app.request(at("/login"), form({ token: "nope" }));
    assert.equal(wrong.status, 403);
    assert.match(await wrong.text(), /That token is not valid/);
    // A token sent in another charset would be misread; a body that is no form is no crash.
    const latin1 = await app.request(
      at("/login"),
      form({ token: ADMIN_TOKEN }, {
        "content-type": "application/x-www-form-urlencoded; charset=latin1",
      }),
    );
    assert.equal(latin1.status, 415);
    const noBoundary = await app.request(
      at("/login"),
      page({
        "content-type": "multipart/form-data",
        origin: "http://127.0.0.1:8788",
      }, { method: "POST", body: "x" }),
    );
    assert.equal(noBoundary.status, 400);
  });
});

Deno.test("signing out needs the session's CSRF token, then ends the session", async () => {
  await withUiApp({}, async (fixture) => {
    const cookie = await signIn(fixture);
    const html = await (await fixture.app.request(
      at("/traces/health"),
      page({ cookie }),
    )).text();
    const csrf = csrfOf(html);
    const missing = await fixture.app.request(
      at("/logout"),
      form({}, { cookie }),
    );
    assert.equal(missing.status, 403);
    const wrong = await fixture.app.request(
      at("/logout"),
      form({ _csrf: csrf.slice(1) }, { cookie }),
    );
    assert.equal(wrong.status, 403);
    const viaHeader = await fixture.app.request(at("/logout"), {
      ...form({}, { cookie, "x-csrf-token": csrf }),
    });
    assert.equal(viaHeader.status, 303);
    assert.equal(viaHeader.headers.get("location"), "/login?signed_out");
    assert.match(viaHeader.headers.get("set-cookie") ?? "", /Max-Age=0/);
    // The old cookie is revoked, not just forgotten by the browser.
    const after = await fixture.app.request(
      at("/traces/health"),
      page({ cookie }),
    );
    assert.equal(after.status, 303);
    const signedOut = await fixture.app.request(
      at("/login?signed_out"),
      page(),
    );
    assert.match(await signedOut.text(), /You are signed out/);
  });
});

Deno.test("cross-site writes to the UI are refused before the CSRF check", async (t) => {
  await withUiApp({}, async (fixture) => {
    const cookie = await signIn(fixture);
    const csrf = csrfOf(
      await (await fixture.app.request(at("/traces/health"), page({ cookie })))
        .text(),
    );
    await t.step("foreign Origin", async () => {
      const response = await fixture.app.request(
        at("/logout"),
        form({ _csrf: csrf }, { cookie, origin: "https://evil.example" }),
      );
      assert.equal(response.status, 403);
    });
    await t.step("Sec-Fetch-Site: cross-site", async () => {
      const response = await fixture.app.request(
        at("/logout"),
        form({ _csrf: csrf }, {
          cookie,
          "sec-fetch-site": "cross-site",
          "sec-fetch-mode": "navigate",
        }),
      );
      assert.equal(response.status, 403);
    });
    await t.step("the session survived both", async () => {
      const response = await fixture.app.request(
        at("/traces/health"),
        page({ cookie }),
      );
      assert.equal(response.status, 200);
    });
  });
});

Deno.test("UI responses carry the Content-Security-Policy; the API keeps its own headers", async () => {
  await withUiApp({}, async (fixture) => {
    const cookie = await signIn(fixture);
    for (const path of ["/traces/health", "/traces/health.json", "/login"]) {
      const response = await fixture.app.request(at(path), page({ cookie }));
      const csp = response.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'self'/, path);
      assert.match(csp, /script-src 'self'/, path);
      assert.doesNotMatch(csp, /unsafe-inline/, path);
      assert.equal(response.headers.get("x-frame-options"), "SAMEORIGIN");
      assert.equal(response.headers.get("referrer-policy"), "same-origin");
      await response.body?.cancel();
    }
    const api = await fixture.app.request(at("/api/health"), page());
    assert.equal(api.status, 200, "the API stays open on loopback");
    assert.equal(api.headers.get("content-security-policy"), null);
    await api.body?.cancel();
  });
});

Deno.test("a UI session does not open the ingest API, which keeps TRACE_INGEST_TOKEN", async () => {
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    app: { ingestToken: "ingest-token-0123456789" },
  }, async (fixture) => {
    const cookie = await signIn(fixture);
    const withCookie = await fixture.app.request(
      at("/api/health"),
      page({ cookie }),
    );
    assert.equal(withCookie.status, 401);
    const withAdmin = await fixture.app.request(
      at("/api/health"),
      page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
    );
    assert.equal(withAdmin.status, 401, "the UI token is not the ingest token");
    const withIngest = await fixture.app.request(
      at("/api/health"),
      page({ authorization: "Bearer ingest-token-0123456789" }),
    );
    assert.equal(withIngest.status, 200);
    await withIngest.body?.cancel();
  });
});

Deno.test("createApp() refuses a one-time login beyond loopback and an admin token equal to the ingest token", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    assert.throws(
      () =>
        createApp({
          db,
          hostname: "0.0.0.0",
          ingestToken: "ingest-token-0123456789",
          oneTimeLogin: createOneTimeLogin(),
        }),
      /one-time login URL on non-loopback host 0\.0\.0\.0; set TRACE_UI_AUTH_TOKEN/,
    );
    assert.throws(
      () =>
        createApp({
          db,
          ingestToken: "same-token-0123456789",
          uiAuthToken: "same-token-0123456789",
        }),
      /TRACE_UI_AUTH_TOKEN must differ from TRACE_INGEST_TOKEN/,
    );
    assert.throws(
      () => createApp({ db, uiAuthToken: "short" }),
      /TRACE_UI_AUTH_TOKEN must be at least 16 characters/,
    );
    // Beyond loopback with an admin token, people sign in with it.
    const app = createApp({
      db,
      hostname: "0.0.0.0",
      ingestToken: "ingest-token-0123456789",
      uiAuthToken: ADMIN_TOKEN,
    });
    const response = await app.request("http://trace.internal/login", {
      headers: { host: "trace.internal" },
    });
    const html = await response.text();
    assert.doesNotMatch(html, /standard error/, "no one-time login offered");
    assert.match(html, /name="token"/);
  });
});

Deno.test("a server beyond loopback without an admin token says sign-in is off", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({
      db,
      hostname: "0.0.0.0",
      ingestToken: "ingest-token-0123456789",
    });
    const login = await app.request("http://trace.internal/login", {
      headers: { host: "trace.internal" },
    });
    assert.match(await login.text(), /Sign-in is not available/);
    const page = await app.request("http://trace.internal/traces/health", {
      headers: { host: "trace.internal" },
    });
    assert.equal(page.status, 303);
  });
});

Deno.test("behind a proxy the session cookie is named by the public origin's port, on sign-in, pages, CSRF writes and sign-out", async (t) => {
  const ingestToken = "ingest-token-0123456789abcdef";
  for (
    const [publicOrigin, host, name] of [
      // nginx with `proxy_set_header Host $host`: no port in Host.
      ["https://trace.example.com", "trace.example.com", "trace_session_443"],
      [
        "https://trace.example.com:8443",
        "trace.example.com",
        "trace_session_8443",
      ],
      [
        "https://trace.example.com:8443",
        "trace.example.com:8443",
        "trace_session_8443",
      ],
      // nginx's default Host, the upstream's address: the listener's port, one of a kind on this host.
      ["https://trace.example.com", "127.0.0.1:8788", "trace_session_8788"],
      ["http://localhost:8080", "localhost", "trace_session_8080"],
    ] as const
  ) {
    await t.step(`${publicOrigin} with Host ${host}: ${name}`, async () => {
      await withUiApp(
        { adminToken: ADMIN_TOKEN, app: { publicOrigin, ingestToken } },
        async ({ app }) => {
          const url = (path: string) => `http://${host}${path}`;
          const browser = (headers: Record<string, string> = {}) => ({
            host,
            origin: publicOrigin,
            "sec-fetch-site": "same-origin",
            ...headers,
          });
          const login = await app.request(url("/login"), {
            method: "POST",
            headers: browser({
              "content-type": "application/x-www-form-urlencoded",
            }),
            body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
          });
          assert.equal(login.status, 303, await login.text());
          const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
          assert.match(cookie, new RegExp(`^${name}=[^;]+$`));

          const html = await app.request(url("/traces/health"), {
            headers: browser({ cookie }),
          });
          assert.equal(html.status, 200);
          const csrf = csrfOf(await html.text());
          // Under another port's name the same value opens nothing.
          const value = cookie.slice(name.length + 1);
          const other = await app.request(url("/traces/health"), {
            headers: browser({ cookie: `trace_session_80=${value}` }),
          });
          assert.equal(other.status, 303);

          const logout = await app.request(url("/logout"), {
            method: "POST",
            headers: browser({
              cookie,
              "content-type": "application/x-www-form-urlencoded",
            }),
            body: new URLSearchParams({ _csrf: csrf }).toString(),
          });
          assert.equal(logout.status, 303);
          assert.match(
            logout.headers.get("set-cookie") ?? "",
            new RegExp(`^${name}=; Max-Age=0`),
          );
          const stale = await app.request(url("/traces/health"), {
            headers: browser({ cookie }),
          });
          assert.equal(stale.status, 303);
          assert.match(
            stale.headers.get("set-cookie") ?? "",
            new RegExp(`^${name}=; Max-Age=0`),
          );
        },
      );
    });
  }
});
