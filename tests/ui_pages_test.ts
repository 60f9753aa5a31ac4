/** The health page and its JSON twin, the start page, error pages and the page/twin mechanism. */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  eraseNow,
  HEALTH_ALERT_MESSAGES,
  parseErasureSubject,
} from "../lib/obs/maint/mod.ts";
import { TEST_KEY } from "./erasure_support.ts";
import { createUiAuth } from "../routes/_ui_auth.ts";
import { healthReason } from "../routes/pages/traces_health.tsx";
import type { UiEnv } from "../routes/ui/context.ts";
import { definePage, twinPath } from "../routes/ui/page.ts";
import { ADMIN_TOKEN, at, page, signIn, withUiApp } from "./browser/_server.ts";

const EVENT = {
  application_id: "app-1",
  agent_id: "agent-1",
  kind: "retrieval",
  started_at: "2026-11-29T10:00:00Z",
};

async function get(
  fixture: Parameters<Parameters<typeof withUiApp>[1]>[0],
  path: string,
) {
  const cookie = await signIn(fixture);
  return await fixture.app.request(at(path), page({ cookie }));
}

Deno.test("the health page leads with the status and its reason, then the alerts", async () => {
  await withUiApp({
    seed: (db) =>
      ingestEvents(db, [
        { ...EVENT, event_id: "e-1" },
        { ...EVENT, event_id: "e-2", parent_event_id: "missing-parent" },
      ]).then(() => {}),
  }, async (fixture) => {
    const response = await get(fixture, "/traces/health");
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), "no-store");
    const html = await response.text();
    const head = html.indexOf('class="page-head"');
    const badge = html.indexOf('badge--lg">DEGRADED</span>');
    const reason = html.indexOf(HEALTH_ALERT_MESSAGES.missing_parent_links);
    const alerts = html.indexOf('id="alerts"');
    assert.ok(head >= 0 && badge > head, "status badge in the page head");
    assert.ok(reason > badge && reason < alerts, "reason before the alerts");
    assert.match(html, /<code>missing_parent_links<\/code>/);
    assert.match(html, /<title>Index health · Trace<\/title>/);
    assert.match(html, /aria-current="page">Health</);
    assert.match(html, /<h2 id="latency-title">Query latency<\/h2>/);
    assert.match(html, /<table id="latency-probes-table">/);
    assert.match(html, /Counted by this server process since/);
    assert.match(html, /<summary>Raw JSON<\/summary>/);
  });
});

Deno.test("the overview's health line says why the index is not OK, as the health page leads with it", async () => {
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: (db) =>
      ingestEvents(db, [{ ...EVENT, event_id: "e-1" }]).then(() => {}),
  }, async ({ app }) => {
    const bearer = page({ authorization: `Bearer ${ADMIN_TOKEN}` });
    const get = (path: string) => app.request(at(path), bearer);
    const checked = await (await get("/traces/health.json")).json();
    const twin = await (await get("/index.json")).json();
    // No parity check has run: UNKNOWN, with only a note (info) to show.
    assert.equal(twin.health.status, "unknown");
    // The count agrees with the alerts the health page lists; the
    // warnings count leaves the info notes out.
    assert.ok(checked.alerts.length > 0);
    assert.equal(twin.health.alerts, checked.alerts.length);
    assert.equal(
      twin.health.warnings,
      checked.alerts.filter((a: { severity: string }) => a.severity !== "info")
        .length,
    );
    assert.equal(twin.health.warnings, 0);
    assert.equal(twin.health.reason, HEALTH_ALERT_MESSAGES.parity_unknown);
    const html = await (await get("/")).text();
    const line = html.slice(html.indexOf("Index health"));
    assert.match(
      line,
      /No whole-index parity check has run yet; run trace obs parity\. 1 event, checked/,
    );
  });
});

Deno.test("the health JSON twin carries the page's data: obsHealth plus this server's checks", async () => {
  await withUiApp({ adminToken: ADMIN_TOKEN }, async ({ app }) => {
    const bearer = page({ authorization: `Bearer ${ADMIN_TOKEN}` });
    const first = await (await app.request(at("/traces/health.json"), bearer))
      .json();
    const second = await (await app.request(at("/traces/health.json"), bearer))
      .json();
    for (
      const key of [
        "status",
        "schema",
        "counts",
        "latency",
        "indexes",
        "counters",
        "alerts",
        "latency_history",
      ]
    ) {
      assert.ok(key in second, key);
    }
    assert.equal(second.counters.state, "recorded");
    assert.equal(second.counters.scope, "this_process");
    assert.equal(first.latency_history.length, 1);
    assert.equal(second.latency_history.length, 2);
    assert.equal(second.latency_history[1].checked_at, second.checked_at);
    const html = await (await app.request(at("/traces/health"), bearer)).text();
    assert.match(html, /href="\/traces\/health\.json"/);
    assert.match(
      html,
      /This server&#39;s recent checks|This server's recent checks/,
    );
  });
});

Deno.test("an index whose events were all erased shows its counts, the erased event ids among them", async () => {
  await withUiApp({}, async (fixture) => {
    await ingestEvents(fixture.db, [
      { ...EVENT, event_id: "gone-1", user_id: "uma" },
      { ...EVENT, event_id: "gone-2", user_id: "uma" },
    ]);
    await eraseNow(
      fixture.db,
      parseErasureSubject({
        application_id: EVENT.application_id,
        user_id: "uma",
      }),
      { key: TEST_KEY },
    );
    const html = await (await get(fixture, "/traces/health")).text();
    assert.doesNotMatch(html, /No events indexed yet/);
    assert.match(html, /Erased event ids<\/th><td class="num">2<\/td>/);
  });
});

Deno.test("an empty index and a missing one explain themselves", async () => {
  await withUiApp({}, async (fixture) => {
    const html = await (await get(fixture, "/traces/health")).text();
    assert.match(html, /No events indexed yet/);
    assert.match(html, /trace events ingest events\.ndjson/);
    assert.match(
      html,
      /Nothing needs action: the index is ready and holds no events/,
    );
  });
  await withUiApp({ bare: true }, async (fixture) => {
    const response = await get(fixture, "/traces/health");
    assert.equal(response.status, 200);
    const html = await response.text();
    assert.match(html, /badge--lg">FAILING</);
    assert.match(html, /The observability index does not exist yet/);
    // The command reaches this server's data, as every printed command does.
    assert.ok(
      html.includes(
        `<code>trace obs init --data-dir ${fixture.dataDir}</code>`,
      ),
      html,
    );
  });
});

Deno.test("healthReason() names the most severe alert and counts the others", () => {
  const base = {
    counts: { events: 3 },
    alerts: [
      {
        code: "parity_unknown",
        severity: "warning",
        count: null,
        message: "B",
      },
      { code: "write_failures", severity: "critical", count: 2, message: "A" },
      { code: "truncated_previews", severity: "info", count: 1, message: "C" },
    ],
  };
  assert.equal(
    healthReason({ ...base, status: "failing" } as never),
    "A. 1 more alert below.",
  );
  assert.equal(
    healthReason({
      status: "ok",
      counts: { events: 3 },
      alerts: [base.alerts[2]],
    } as never),
    "Nothing needs action: the schema is current, every index is in place and every envelope is indexed. 1 note below.",
  );
});

Deno.test("page data is escaped, never markup", async () => {
  await withUiApp({
    seed: (db) =>
      ingestEvents(db, [{
        ...EVENT,
        event_id: "e-x",
        attributes: { "instrumentation.name": "<script>alert(1)</script>" },
      }]).then(() => {}),
  }, async (fixture) => {
    const html = await (await get(fixture, "/traces/health")).text();
    assert.doesNotMatch(html, /<script>alert/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });
});

Deno.test("pages use no inline script or inline style, so the CSP holds", async () => {
  await withUiApp({}, async (fixture) => {
    const html = await (await get(fixture, "/traces/health")).text();
    const scripts = html.match(/<script[^>]*>/g) ?? [];
    assert.equal(scripts.length, 1);
    assert.match(
      scripts[0]!,
      /^<script src="\/ui\/app\.[0-9a-f]{16}\.js" defer>$/,
    );
    assert.doesNotMatch(html, /<script>[^<]/);
    assert.doesNotMatch(html, /\sstyle="/);
    assert.doesNotMatch(html, /\son[a-z]+="/, "no inline event handlers");
  });
});

Deno.test("/ is the overview; unknown paths are pages for browsers and JSON for scripts", async () => {
  await withUiApp({}, async (fixture) => {
    const cookie = await signIn(fixture);
    const home = await fixture.app.request(at("/"), page({ cookie }));
    assert.equal(home.status, 200);
    const html = await home.text();
    assert.match(html, /<h1>Overview<\/h1>/);
    assert.match(html, /aria-current="page">Overview</);
    assert.match(html, /href="\/index\.json"/, "the start page's twin");
    const browser = await fixture.app.request(
      at("/nope"),
      page({ accept: "text/html,application/xhtml+xml" }),
    );
    assert.equal(browser.status, 404);
    assert.match(browser.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await browser.text(), /Page not found/);
    const script = await fixture.app.request(at("/nope"), page());
    assert.equal(script.status, 404);
    assert.equal((await script.json()).error.code, "not_found");
    const api = await fixture.app.request(
      at("/api/nope"),
      page({ accept: "text/html" }),
    );
    assert.equal((await api.json()).error.code, "not_found");
  });
});

Deno.test("an error page shows the bidi and zero-width characters its message repeats from the address as escapes", async () => {
  await withUiApp({}, async (fixture) => {
    const cookie = await signIn(fixture);
    for (const path of ["/nope/a%E2%80%AEb%E2%80%8Bc", "/runs/a%E2%80%AEb"]) {
      const response = await fixture.app.request(
        at(path),
        page({ cookie, accept: "text/html" }),
      );
      const html = await response.text();
      assert.match(html, /class="notice" role="alert"/, path);
      // Marked by the page, or already escaped by the message that quotes it.
      assert.match(
        html,
        /a(?:<span class="esc"[^>]*>\\u\{202e\}<\/span>|\\u202e)b/,
        path,
      );
      assert.doesNotMatch(html, /[\u200B\u202E]/, path);
    }
  });
});

Deno.test("JSON refusals repeat a bidi, zero-width or format character of the address, a header or the body as an escape", async () => {
  await withUiApp({ adminToken: ADMIN_TOKEN }, async (fixture) => {
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const cases: [string, RequestInit, number, RegExp][] = [
      [
        "/runs/a%E2%80%AEb%E2%80%8Bc.json",
        page(bearer),
        400,
        /^Invalid run id "a\\u202eb\\u200bc"/,
      ],
      [
        "/runs.json?verdict=pa%E2%80%AEss",
        page(bearer),
        400,
        /^Invalid verdict "pa\\u202ess": expected one of/,
      ],
      [
        "/traces/find.json?thr%E2%80%AEead=1",
        page(bearer),
        400,
        /unknown parameter "thr\\u202eead"; remove it/,
      ],
      [
        "/traces/inspect.json?root_trace_id=r%E2%80%8B1",
        page(bearer),
        404,
        /^No event of root "r\\u200b1" is in your scope/,
      ],
      [
        "/traces/replay-plan.json?x%E2%80%AE=1&x%E2%80%AE=2",
        page(bearer),
        400,
        /^The parameter "x\\u202e" may be given once/,
      ],
      [
        "/api/events",
        page({ "content-type": "application/json" }, {
          method: "POST",
          body: '{"a\u202Eb": 1, "a\u202Eb": 2}',
        }),
        400,
        /duplicate key "a\\u202eb"/,
      ],
      [
        "/api/events",
        page({ "content-type": "text/pl\u00ADain" }, {
          method: "POST",
          body: "{}",
        }),
        415,
        /Content-Type "text\/pl\\u00adain" is not supported/,
      ],
    ];
    for (const [path, init, status, message] of cases) {
      const response = await fixture.app.request(at(path), init);
      const text = await response.text();
      assert.equal(response.status, status, `${path}: ${text}`);
      assert.doesNotMatch(text, /[\u00AD\u200B\u202E]/, path);
      assert.match(JSON.parse(text).error.message, message, path);
    }
  });
});

Deno.test("definePage() serves a parameterised page and its twin from one loader", async () => {
  {
    const auth = createUiAuth({ uiAuthToken: ADMIN_TOKEN });
    const app = new Hono<UiEnv>();
    const calls: Record<string, string>[] = [];
    definePage<{ id: string; principal: string; q: string | null }>(app, {
      auth,
      site: { version: "t", dataLocation: "x", dataFlags: "" },
    }, {
      path: "/things/:id",
      title: (data) => `Thing ${data.id}`,
      load: (c, params) => {
        calls.push(params);
        return Promise.resolve({
          id: params.id!,
          principal: c.get("principal").name,
          q: c.req.query("q") ?? null,
        });
      },
      render: (data, view) =>
        `${data.id} for ${view.principal.name} ${view.jsonHref}`,
    });
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const json = await app.request("/things/a.b.json?q=1", { headers });
    assert.deepEqual(await json.json(), {
      id: "a.b",
      principal: "token",
      q: "1",
    });
    const html = await (await app.request("/things/a.b?q=1", { headers }))
      .text();
    assert.match(html, /<title>Thing a\.b · Trace<\/title>/);
    assert.match(html, /a\.b for token \/things\/a\.b\.json\?q=1/);
    assert.deepEqual(calls, [{ id: "a.b" }, { id: "a.b" }]);
    assert.equal((await app.request("/things/a.b.json")).status, 401);
  }
  assert.equal(twinPath("/traces/health").path, "/traces/health.json");
  assert.equal(twinPath("/").path, "/index.json");
});

Deno.test("definePage() links the twin of an id that ends in a colon and a word", async () => {
  // OTLP event ids read `otlp:TRACE:SPAN`: their tail looks like a route parameter.
  const auth = createUiAuth({ uiAuthToken: ADMIN_TOKEN });
  const app = new Hono<UiEnv>();
  definePage<{ id: string }>(app, {
    auth,
    site: { version: "t", dataLocation: "x", dataFlags: "" },
  }, {
    path: "/things/:id",
    title: (data) => `Thing ${data.id}`,
    load: (_c, params) => Promise.resolve({ id: params.id! }),
    render: (data, view) => `${data.id} twin ${view.jsonHref}`,
  });
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const html = await (await app.request("/things/otlp:ab:cd?q=1", { headers }))
    .text();
  assert.match(html, /otlp:ab:cd twin \/things\/otlp:ab:cd\.json\?q=1/);
  assert.match(
    html,
    /This page as JSON: <a href="\/things\/otlp:ab:cd\.json\?q=1">/,
  );
  const json = await app.request("/things/otlp:ab:cd.json", { headers });
  assert.deepEqual(await json.json(), { id: "otlp:ab:cd" });
});
