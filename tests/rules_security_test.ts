/**
 * The security rules, one test each and at each entry point that enforces
 * them: loopback detection, plain HTTP only for loopback, no credentials in a
 * base URL, the bearer token only over HTTPS, the server's Host guard and its
 * Origin guard (each on its own), exact bearer-token matching, and the
 * retention ordering previews <= metadata <= outcomes.
 */

import assert from "node:assert/strict";
import {
  parseStagingConfig,
  parseStoredStagingConfig,
} from "../lib/contract/config.ts";
import type { TraceDb } from "../lib/db.ts";
import { ConfigError } from "../lib/errors.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { retention, retentionPolicy } from "../lib/obs/maint/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { withDb } from "./_helpers.ts";

function configFor(baseUrl: string, extra: Record<string, unknown> = {}) {
  return parseStagingConfig({
    base_url: baseUrl,
    environment: "staging",
    allow_synthetic_writes: true,
    ...extra,
  });
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  return "accepted";
}

// --- loopback detection and plain HTTP -------------------------------------

/**
 * Plain-HTTP base URLs to loopback. The URL parser normalises IPv4 forms
 * (`0x7f.1`, `127.1`, `2130706433`, `0177.0.0.1`) and IPv6 spellings before the
 * check, so these all name 127.0.0.1 or ::1 and are loopback.
 */
const LOOPBACK_URLS = [
  "http://127.0.0.1:8787",
  "http://127.0.0.1",
  "http://127.8.9.10:1",
  "http://127.255.255.254:1",
  "http://[::1]:8787",
  "http://[0:0:0:0:0:0:0:1]:8787",
  "http://localhost:8787",
  "http://LOCALHOST:8787",
  "http://app.localhost:8787",
  "http://0x7f.1:8787",
  "http://127.1:8787",
  "http://2130706433:8787",
  "http://0177.0.0.1:8787",
  "http://127.0.0.1.:8787",
];

/** Plain-HTTP base URLs that leave the machine or only look like loopback. */
const NON_LOOPBACK_URLS = [
  "http://127.0.0.1.example.com",
  "http://127.0.0.1.nip.io:8787",
  "http://localhost.example.com",
  "http://localhostx:8787",
  "http://xlocalhost:8787",
  "http://128.0.0.1",
  "http://126.255.255.255",
  "http://10.0.0.1:8787",
  "http://0.0.0.0:8787",
  "http://[::]:8787",
  "http://[::2]:8787",
  // An IPv4-mapped address is not treated as loopback: it is refused.
  "http://[::ffff:127.0.0.1]:8787",
  "http://staging.example.com",
];

Deno.test("parseStagingConfig() accepts plain http:// for every loopback form", () => {
  for (const url of LOOPBACK_URLS) {
    assert.equal(refusal(() => configFor(url)), "accepted", url);
  }
});

Deno.test("parseStagingConfig() refuses plain http:// to non-loopback hosts and lookalikes, and accepts https:// to them", () => {
  for (const url of NON_LOOPBACK_URLS) {
    assert.match(
      refusal(() => configFor(url)),
      /^Invalid config: base_url: plain http:\/\/ is allowed only for loopback hosts/,
      url,
    );
    const https = url.replace(/^http:/, "https:");
    assert.equal(refusal(() => configFor(https)), "accepted", https);
  }
});

Deno.test("createHttpTransport() accepts plain http:// for every loopback form", () => {
  for (const url of LOOPBACK_URLS) {
    assert.equal(
      refusal(() => createHttpTransport({ base_url: url })),
      "accepted",
      url,
    );
  }
});

Deno.test("createHttpTransport() refuses plain http:// to non-loopback hosts and lookalikes before connecting", () => {
  for (const url of NON_LOOPBACK_URLS) {
    assert.match(
      refusal(() => createHttpTransport({ base_url: url })),
      /^Refusing plain HTTP to .*: http:\/\/ is allowed only for loopback hosts/,
      url,
    );
    const https = url.replace(/^http:/, "https:");
    assert.equal(
      refusal(() => createHttpTransport({ base_url: https })),
      "accepted",
      https,
    );
  }
});

// --- credentials in a base URL ---------------------------------------------

const SECRET = "s3cret-value";

const CREDENTIAL_URLS: [string, string, RegExp][] = [
  [
    "a user name",
    `http://${SECRET}@127.0.0.1:1`,
    /base_url: must not contain credentials/,
  ],
  [
    "a password only",
    `http://:${SECRET}@127.0.0.1:1`,
    /base_url: must not contain credentials/,
  ],
  [
    "user and password over https",
    `https://user:${SECRET}@staging.example.com`,
    /base_url: must not contain credentials/,
  ],
  [
    "a query",
    `https://staging.example.com/api?token=${SECRET}`,
    /base_url: must not contain a query string/,
  ],
  [
    "a query on loopback",
    `http://127.0.0.1:1/?${SECRET}`,
    /base_url: must not contain a query string/,
  ],
  [
    "a fragment",
    `https://staging.example.com/#${SECRET}`,
    /base_url: must not contain a fragment/,
  ],
  [
    "an empty fragment",
    "http://127.0.0.1:1/#",
    /base_url: must not contain a fragment/,
  ],
];

Deno.test("parseStagingConfig() refuses credentials in userinfo, query or fragment without echoing them", async (t) => {
  for (const [name, url, message] of CREDENTIAL_URLS) {
    await t.step(name, () => {
      const error = refusal(() => configFor(url));
      assert.match(error, message);
      assert.ok(!error.includes(SECRET), error);
    });
  }
});

Deno.test("parseStagingConfig() names a port outside 1-65535, and calls other unparsable text not a URL", () => {
  assert.match(
    refusal(() => configFor(`http://u:${SECRET}@127.0.0.1:99999/api`)),
    /base_url: has port 99999, outside 1-65535$/,
  );
  assert.doesNotMatch(
    refusal(() => configFor(`http://u:${SECRET}@127.0.0.1:99999/api`)),
    new RegExp(SECRET),
  );
  assert.match(
    refusal(() => configFor("staging.example.com")),
    /base_url: must be an absolute http:\/\/ or https:\/\/ URL$/,
  );
  // Port 0 parses, but nothing can be reached there.
  assert.match(
    refusal(() => configFor("http://127.0.0.1:0")),
    /base_url: has port 0, outside 1-65535$/,
  );
});

Deno.test("createHttpTransport() refuses credentials in userinfo, query or fragment without echoing them", async (t) => {
  const cases: [string, string][] = [
    ...CREDENTIAL_URLS.map(([name, url]) => [name, url] as [string, string]),
    ["an empty query", "http://127.0.0.1:1/?"],
  ];
  for (const [name, url] of cases) {
    await t.step(name, () => {
      const error = refusal(() => createHttpTransport({ base_url: url }));
      assert.match(
        error,
        /^Invalid base_url: must not contain credentials, a query or a fragment$/,
      );
    });
  }
});

Deno.test({
  name:
    "parseStagingConfig() refuses an empty query like the transport that would use it",
  fn: () => {
    assert.match(
      refusal(() => configFor("http://127.0.0.1:1/?")),
      /base_url: must not contain a query string/,
    );
  },
});

// --- the bearer token only over HTTPS --------------------------------------

Deno.test("parseStagingConfig() refuses token_env unless base_url is https://", () => {
  assert.match(
    refusal(() => configFor("http://127.0.0.1:1", { token_env: "TOKEN" })),
    /token_env: requires an https:\/\/ base_url/,
  );
  assert.equal(
    refusal(() => configFor("https://127.0.0.1:1", { token_env: "TOKEN" })),
    "accepted",
  );
});

Deno.test("parseStagingConfig() refuses a token_env naming Trace's own credentials, which the adapter would receive", () => {
  for (
    const name of [
      "TRACE_INGEST_TOKEN",
      "TRACE_UI_AUTH_TOKEN",
      "TRACE_UI_AUTH_ACCOUNTS",
      "TRACE_DB_AUTH_TOKEN",
    ]
  ) {
    assert.match(
      refusal(() => configFor("https://127.0.0.1:1", { token_env: name })),
      /token_env: must not name one of Trace's own credentials \(.*\): the staging adapter would receive it; give the staging token a variable of its own/,
      name,
    );
  }
  // Windows reads environment variables without case.
  assert.match(
    refusal(() =>
      configFor("https://127.0.0.1:1", { token_env: "trace_ui_auth_token" })
    ),
    /token_env: must not name one of Trace's own credentials/,
  );
  assert.equal(
    refusal(() =>
      configFor("https://127.0.0.1:1", { token_env: "TRACE_STAGING_TOKEN" })
    ),
    "accepted",
  );
});

Deno.test("createHttpTransport() refuses token_env over plain HTTP without reading the variable", () => {
  const read: string[] = [];
  const env = (name: string) => {
    read.push(name);
    return "a-token-that-is-long-enough";
  };
  assert.match(
    refusal(() =>
      createHttpTransport(
        { base_url: "http://127.0.0.1:1", token_env: "TOKEN" },
        { env },
      )
    ),
    /^Refusing token_env TOKEN: a bearer token is sent only over https:\/\/$/,
  );
  assert.deepEqual(read, []);
  createHttpTransport(
    { base_url: "https://127.0.0.1:1", token_env: "TOKEN" },
    { env },
  );
  assert.deepEqual(read, ["TOKEN"]);
});

Deno.test("a config stored with a token_env naming Trace's credential still reads, and its run never reads the variable", () => {
  const stored = {
    base_url: "https://127.0.0.1:1",
    environment: "staging",
    allow_synthetic_writes: true,
    token_env: "TRACE_UI_AUTH_TOKEN",
  };
  // Listed and retired like any target of the ledger.
  assert.equal(
    parseStoredStagingConfig(stored, "stored config").token_env,
    "TRACE_UI_AUTH_TOKEN",
  );
  const read: string[] = [];
  assert.match(
    refusal(() =>
      createHttpTransport(stored, {
        env: (name) => {
          read.push(name);
          return "the-admin-token-of-this-server";
        },
      })
    ),
    /^Refusing token_env TRACE_UI_AUTH_TOKEN: it names one of Trace's own credentials \(.*\), which the staging adapter would receive; give the staging token a variable of its own \(a registered target keeps its config: register the config under a new id with its own variable, then retire this one\)$/,
  );
  assert.deepEqual(read, []);
});

// --- the server: Host guard, Origin guard, bearer token --------------------

const EVENT = {
  application_id: "app-1",
  agent_id: "agent-1",
  event_id: "evt-1",
  kind: "retrieval",
  started_at: "2026-11-29T10:00:00Z",
};

function postEvent(headers: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify([EVENT]),
  };
}

async function withIndex<T>(fn: (db: TraceDb) => Promise<T>): Promise<T> {
  return await withDb(async (db) => {
    await initializeObs(db);
    return await fn(db);
  });
}

/** Host headers of a loopback server, as a browser on this machine sends them. */
const LOOPBACK_HOSTS = [
  "127.0.0.1",
  "127.0.0.1:8788",
  "127.1.2.3:8788",
  "localhost",
  "localhost:8788",
  "LOCALHOST:8788",
  "app.localhost:8788",
  "[::1]",
  "[::1]:8788",
];

/**
 * Host headers a DNS-rebinding page would send, and lookalikes. The header is
 * compared as sent, not parsed as a URL, so `0x7f.1` and `2130706433` are
 * names here, not addresses.
 */
const FOREIGN_HOSTS = [
  "evil.example",
  "evil.example:8788",
  "127.0.0.1.example.com:8788",
  "localhost.example.com",
  "0x7f.1:8788",
  "2130706433:8788",
  "[::ffff:127.0.0.1]:8788",
  "10.0.0.1:8788",
];

Deno.test("createApp() on a loopback bind refuses foreign Host headers, with no Origin involved", async () => {
  await withIndex(async (db) => {
    const app = createApp({ db });
    for (const host of FOREIGN_HOSTS) {
      const response = await app.request("/api/events", postEvent({ host }));
      assert.equal(response.status, 403, host);
      assert.match((await response.json()).error.message, /is not served here/);
    }
    for (const host of LOOPBACK_HOSTS) {
      const response = await app.request("/api/events", postEvent({ host }));
      assert.equal(response.status, 200, host);
    }
  });
});

Deno.test("createApp() checks the Host header only on a loopback bind", async () => {
  await withIndex(async (db) => {
    const token = "a-long-ingest-token-123";
    const app = createApp({ db, hostname: "0.0.0.0", ingestToken: token });
    const response = await app.request(
      "/api/events",
      postEvent({
        host: "trace.example:8788",
        authorization: `Bearer ${token}`,
      }),
    );
    assert.equal(response.status, 200);
  });
});

Deno.test("createApp() refuses a write from another origin, with a loopback Host", async () => {
  const host = "127.0.0.1:8788";
  const foreign = [
    "https://evil.example",
    "http://127.0.0.1:9999",
    "http://localhost:8788",
    "http://127.0.0.1.example.com:8788",
    "null",
    "not a url",
  ];
  await withIndex(async (db) => {
    const app = createApp({ db });
    for (const origin of foreign) {
      const response = await app.request(
        "/api/events",
        postEvent({ host, origin }),
      );
      assert.equal(response.status, 403, origin);
      assert.match(
        (await response.json()).error.message,
        /Cross-origin requests are refused/,
      );
    }
    const same = await app.request(
      "/api/events",
      postEvent({ host, origin: `http://${host}` }),
    );
    assert.equal(same.status, 200);
    const none = await app.request("/api/events", postEvent({ host }));
    assert.equal(none.status, 200);
  });
});

Deno.test("createApp() requires the exact bearer token on every /api and /v1 route", async () => {
  const token = "a-long-ingest-token-123";
  const wrong = [
    undefined,
    "",
    `Bearer ${token.slice(0, -1)}`,
    `Bearer ${token}x`,
    `Bearer x${token}`,
    `Bearer ${token.toUpperCase()}`,
    `Basic ${token}`,
    token,
    "Bearer ",
  ];
  const routes: [string, RequestInit][] = [
    ["/api/events", { method: "POST", body: JSON.stringify([EVENT]) }],
    ["/api/events?application_id=app-1", { method: "GET" }],
    ["/api/health", { method: "GET" }],
    ["/api", { method: "GET" }],
    ["/v1/traces", { method: "POST", body: "{}" }],
  ];
  await withIndex(async (db) => {
    const app = createApp({ db, ingestToken: token });
    for (const [path, init] of routes) {
      for (const authorization of wrong) {
        const headers: Record<string, string> = {
          host: "127.0.0.1:8788",
          "content-type": "application/json",
        };
        if (authorization !== undefined) headers.authorization = authorization;
        const response = await app.request(path, { ...init, headers });
        assert.equal(
          response.status,
          401,
          `${init.method} ${path} with ${JSON.stringify(authorization)}`,
        );
        await response.body?.cancel();
      }
      const right = await app.request(path, {
        ...init,
        headers: {
          host: "127.0.0.1:8788",
          "content-type": "application/json",
          authorization: `Bearer ${token}`,
        },
      });
      assert.notEqual(right.status, 401, `${init.method} ${path}`);
      assert.ok(right.status < 400, `${path}: ${await right.text()}`);
    }
  });
});

// --- retention ordering ----------------------------------------------------

Deno.test("retentionPolicy() refuses previews longer than metadata, and metadata longer than outcomes", () => {
  const ordering =
    /^Invalid retention policy: previews \(\d+ days\) <= metadata \(\d+ days\) <= outcomes \(\d+ days\) must hold/;
  assert.match(
    refusal(() => retentionPolicy({ previewsDays: 31, metadataDays: 30 })),
    ordering,
  );
  assert.match(
    refusal(() => retentionPolicy({ metadataDays: 366, outcomesDays: 365 })),
    ordering,
  );
  assert.match(
    refusal(() =>
      retentionPolicy({ previewsDays: 10, metadataDays: 20, outcomesDays: 15 })
    ),
    ordering,
  );
  assert.match(refusal(() => retentionPolicy({ outcomesDays: 6 })), ordering);
});

Deno.test("retentionPolicy() accepts equal periods and the defaults", () => {
  assert.deepEqual(
    retentionPolicy({ previewsDays: 9, metadataDays: 9, outcomesDays: 9 }),
    { previews: 9, metadata: 9, outcomes: 9 },
  );
  assert.deepEqual(
    retentionPolicy({ previewsDays: 0, metadataDays: 0, outcomesDays: 0 }),
    { previews: 0, metadata: 0, outcomes: 0 },
  );
  assert.deepEqual(retentionPolicy(), {
    previews: 7,
    metadata: 30,
    outcomes: 365,
  });
});

Deno.test("retention() refuses a misordered policy before deleting anything", async () => {
  const now = Date.parse("2026-11-29T00:00:00Z");
  await withIndex(async (db) => {
    await ingestEvents(db, [{
      ...EVENT,
      started_at: "2026-01-01T00:00:00Z",
      preview: "old words",
    }]);
    await assert.rejects(
      retention(db, {
        previewsDays: 31,
        metadataDays: 30,
        dryRun: false,
        now: () => now,
      }),
      /previews \(31 days\) <= metadata \(30 days\)/,
    );
    const left = await retention(db, { now: () => now });
    assert.equal(left.events, 1, "the expired event is still there");
    assert.equal(left.previews, 1, "its preview is still there");
  });
});
