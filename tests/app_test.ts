/** The server app: auth, origin and host guards, error mapping, and `trace serve` start-up rules. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { otlpProtoTypes } from "../lib/obs/otlp/_proto.ts";
import { listenError } from "../routes/listen.ts";
import { ConfigError } from "../lib/errors.ts";
import { captureIo, withDb, withTempDir } from "./_helpers.ts";

const EVENT = {
  application_id: "app-1",
  agent_id: "agent-1",
  event_id: "evt-1",
  kind: "retrieval",
  started_at: "2026-11-29T10:00:00Z",
};

function post(body: unknown, headers: Record<string, string> = {}) {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      host: "127.0.0.1:8788",
      ...headers,
    },
    body: JSON.stringify(body),
  };
}

Deno.test("createApp() accepts ingest without credentials when no token is set", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db });
    const response = await app.request("/api/events", post([EVENT]));
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((await response.json()).inserted, 1);
    const page = await app.request("/api/events?application_id=app-1", {
      headers: { host: "localhost:8788" },
    });
    assert.equal((await page.json()).events.length, 1);
  });
});

Deno.test("createApp() requires the bearer token when one is set", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db, ingestToken: "a-long-ingest-token-123" });
    const missing = await app.request("/api/events", post([EVENT]));
    assert.equal(missing.status, 401);
    assert.equal(
      missing.headers.get("www-authenticate"),
      'Bearer realm="trace"',
    );
    const problem = (await missing.json()).error;
    assert.equal(problem.code, "unauthorized");
    assert.match(problem.message, /TRACE_INGEST_TOKEN/);
    const wrong = await app.request(
      "/v1/traces",
      post({}, { authorization: "Bearer nope" }),
    );
    assert.equal(wrong.status, 401);
    const right = await app.request(
      "/api/events",
      post([EVENT], { authorization: "Bearer a-long-ingest-token-123" }),
    );
    assert.equal(right.status, 200);
  });
});

Deno.test("createApp() refuses an OTLP exporter's request as OTLP/HTTP requires: a google.rpc.Status in the request's encoding", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db, ingestToken: "a-long-ingest-token-123" });
    const json = await app.request(
      "/v1/traces",
      post({}, { authorization: "Bearer nope" }),
    );
    assert.equal(json.status, 401);
    const status = await json.json();
    assert.equal(status.code, 16, "UNAUTHENTICATED");
    assert.equal(status.error.code, "unauthorized");
    assert.equal(status.message, status.error.message);
    const protobuf = await app.request("/v1/traces", {
      method: "POST",
      headers: {
        "content-type": "application/x-protobuf",
        host: "127.0.0.1:8788",
      },
      body: new Uint8Array(),
    });
    assert.equal(protobuf.status, 401);
    assert.equal(
      protobuf.headers.get("content-type"),
      "application/x-protobuf",
    );
    assert.equal(
      protobuf.headers.get("www-authenticate"),
      'Bearer realm="trace"',
    );
    const decoded = otlpProtoTypes().status.decode(
      new Uint8Array(await protobuf.arrayBuffer()),
    ) as unknown as { code: number; message: string };
    assert.equal(decoded.code, 16);
    assert.match(decoded.message, /TRACE_INGEST_TOKEN/);
    const foreign = await app.request("/v1/traces", {
      method: "POST",
      headers: {
        "content-type": "application/x-protobuf",
        host: "evil.example",
        authorization: "Bearer a-long-ingest-token-123",
      },
      body: new Uint8Array(),
    });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get("content-type"), "application/x-protobuf");
  });
});

Deno.test("createApp() refuses cross-origin requests and foreign Host headers", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db, hostname: "127.0.0.1" });
    const cross = await app.request(
      "/api/events",
      post([EVENT], { origin: "https://evil.example" }),
    );
    assert.equal(cross.status, 403);
    assert.equal((await cross.json()).error.code, "forbidden");
    const rebound = await app.request(
      "/api/events",
      post([EVENT], { host: "evil.example:8788" }),
    );
    assert.equal(rebound.status, 403);
    const same = await app.request(
      "/api/events",
      post([EVENT], { origin: "http://127.0.0.1:8788" }),
    );
    assert.equal(same.status, 200);
  });
});

Deno.test("createApp() answers unknown routes with a JSON 404", async () => {
  await withDb(async (db) => {
    const app = createApp({ db });
    const response = await app.request("/nope", {
      headers: { host: "127.0.0.1" },
    });
    assert.equal(response.status, 404);
    assert.equal((await response.json()).error.code, "not_found");
  });
});

Deno.test("createApp() reports a missing index as 503 with the command to run", async () => {
  await withDb(async (db) => {
    const logged: string[] = [];
    const app = createApp({ db, log: (line) => logged.push(line) });
    const response = await app.request("/api/events?application_id=a", {
      headers: { host: "127.0.0.1" },
    });
    assert.equal(response.status, 503);
    assert.match((await response.json()).error.message, /trace obs init/);
    assert.match(logged.join("\n"), /ObsNotInitializedError/);
  });
});

Deno.test("trace serve refuses a non-loopback host without a token, and short tokens", async () => {
  const io = captureIo();
  assert.equal(
    await main(
      ["serve", "--host", "0.0.0.0", "--data-dir", "/nonexistent/x"],
      io,
    ),
    2,
  );
  assert.match(
    io.stderr(),
    /non-loopback host 0\.0\.0\.0 without TRACE_INGEST_TOKEN/,
  );
  const short = captureIo("", { TRACE_INGEST_TOKEN: "short" });
  assert.equal(await main(["serve", "--data-dir", "/nonexistent/x"], short), 2);
  assert.match(short.stderr(), /at least 16 characters with no whitespace/);
});

Deno.test("trace serve refuses a --default-application no span could carry, before touching a file", async () => {
  await withTempDir(async (dir) => {
    for (
      const [value, why] of [
        [
          "a\u202eb",
          "must not contain control, line separator or bidirectional formatting characters",
        ],
        ["x".repeat(300), "must be at most 256 characters"],
      ]
    ) {
      const io = captureIo();
      assert.equal(
        await main(
          ["serve", "--default-application", value!, "--data-dir", `${dir}/d`],
          io,
        ),
        2,
      );
      assert.equal(io.stderr(), `trace serve: --default-application ${why}\n`);
    }
    assert.equal(
      await Deno.stat(`${dir}/d`).then(() => true, () => false),
      false,
    );
  });
});

Deno.test("trace serve names a bad --port once, without a doubled prefix", async () => {
  const io = captureIo();
  assert.equal(
    await main(
      ["serve", "--port", "99999", "--data-dir", "/nonexistent/x"],
      io,
    ),
    2,
  );
  assert.equal(
    io.stderr(),
    'trace serve: --port must be a whole number from 0 to 65535, got "99999"\n',
  );
});

Deno.test("trace serve names a --host that is not a host name or address, and what to do", async () => {
  await withTempDir(async (dir) => {
    // Port 0 too: the address is checked before the data directory is touched.
    for (
      const [host, port] of [["not a host", "18788"], [
        "127.0.0.1:8788",
        "0",
      ]] as const
    ) {
      const io = captureIo("", {
        TRACE_INGEST_TOKEN: "a-long-ingest-token-123",
      });
      assert.equal(
        await main([
          "serve",
          "--host",
          host,
          "--port",
          port,
          "--data-dir",
          dir,
        ], io),
        2,
      );
      assert.equal(
        io.stderr(),
        `trace serve: --host ${host} is not a host name or IP address; give one such as 127.0.0.1 (the port goes in --port)\n`,
      );
    }
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  });
});

Deno.test("listenError() names a host name that does not resolve", () => {
  const lookup = new Error(
    "failed to lookup address information: Name or service not known",
  );
  const error = listenError(lookup, "example.invalid", 8788);
  assert.ok(error instanceof ConfigError);
  assert.equal(
    error.message,
    "Cannot listen on example.invalid:8788: the host name does not resolve; check --host",
  );
});

Deno.test("trace serve says which port is in use and what to do", async () => {
  await withTempDir(async (dir) => {
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = (taken.addr as Deno.NetAddr).port;
      const io = captureIo();
      assert.equal(
        await main(["serve", "--port", String(port), "--data-dir", dir], io),
        2,
      );
      assert.equal(
        io.stderr(),
        `trace serve: Cannot listen on 127.0.0.1:${port}: the port is in use; choose another --port\n`,
      );
      assert.deepEqual(
        [...Deno.readDirSync(dir)],
        [],
        "a server that cannot start leaves no files",
      );
    } finally {
      taken.close();
    }
  });
});

Deno.test("createApp() refuses to build a non-loopback server without a token", async () => {
  await withDb(async (db) => {
    assert.throws(
      () => createApp({ db, hostname: "0.0.0.0" }),
      /non-loopback host 0\.0\.0\.0 without TRACE_INGEST_TOKEN/,
    );
    assert.throws(
      () => createApp({ db, hostname: "192.168.1.10" }),
      /without TRACE_INGEST_TOKEN/,
    );
    // With a token the same address is allowed, and no Host check applies.
    const app = createApp({
      db,
      hostname: "0.0.0.0",
      ingestToken: "a-long-ingest-token-123",
    });
    const response = await app.request("/healthz", {
      headers: { host: "trace.internal:8788" },
    });
    assert.equal(response.status, 200);
  });
});

Deno.test("createApp() refuses tokens that are short or hold whitespace", async () => {
  await withDb((db) => {
    for (
      const token of [
        " ".repeat(16),
        "short",
        "sixteen chars ok!",
        "\t".repeat(20),
      ]
    ) {
      assert.throws(
        () => createApp({ db, ingestToken: token }),
        /at least 16 characters with no whitespace/,
        JSON.stringify(token),
      );
    }
    createApp({ db, ingestToken: "x".repeat(16) });
    return Promise.resolve();
  });
});

Deno.test("createApp() refuses a token an Authorization header cannot carry as typed", async () => {
  await withDb((db) => {
    // Each is long enough and holds no whitespace, but a client sends it as
    // UTF-8 while the server reads header bytes one by one: no request matches.
    for (const odd of ["\u00e9", "\u200b", "\u{1f511}"]) {
      const token = `abcdefghijklmnop${odd}qrs`;
      for (
        const [options, name] of [
          [{ ingestToken: token }, "TRACE_INGEST_TOKEN"],
          [{ uiAuthToken: token }, "TRACE_UI_AUTH_TOKEN"],
        ] as const
      ) {
        assert.throws(
          () => createApp({ db, ...options }),
          (error: Error) =>
            error.message ===
              `${name} must be printable ASCII (letters, digits, punctuation); generate a long random secret`,
          JSON.stringify([name, token]),
        );
      }
    }
    return Promise.resolve();
  });
});

Deno.test("createApp() refuses a POST without Content-Type with 415", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db });
    const response = await app.request("/api/events", {
      method: "POST",
      headers: { host: "127.0.0.1:8788" },
      body: new TextEncoder().encode(JSON.stringify([EVENT])),
    });
    assert.equal(response.status, 415);
    assert.equal((await response.json()).error.code, "unsupported_media_type");
    // A method no route takes is answered 405 (or 404), not told to add a type.
    for (
      const [path, status] of [["/api/health", 405], ["/nowhere", 404]] as const
    ) {
      const other = await app.request(path, {
        method: "PUT",
        headers: { host: "127.0.0.1:8788" },
        body: new TextEncoder().encode("{}"),
      });
      assert.equal(other.status, status, path);
      await other.body?.cancel();
    }
    const page = await app.request("/api/events?application_id=app-1", {
      headers: { host: "127.0.0.1:8788" },
    });
    assert.equal((await page.json()).events.length, 0);
  });
});

Deno.test("createApp() refuses cross-site requests by Sec-Fetch-Site, without an Origin header", async (t) => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db });
    for (const site of ["cross-site", "same-site"]) {
      await t.step(`POST with Sec-Fetch-Site: ${site}`, async () => {
        const response = await app.request(
          "/api/events",
          post([EVENT], { "sec-fetch-site": site, "sec-fetch-mode": "cors" }),
        );
        assert.equal(response.status, 403);
      });
      await t.step(`GET fetch with Sec-Fetch-Site: ${site}`, async () => {
        const response = await app.request("/api/events?application_id=a", {
          headers: {
            host: "127.0.0.1:8788",
            "sec-fetch-site": site,
            "sec-fetch-mode": "cors",
          },
        });
        assert.equal(response.status, 403);
      });
    }
    await t.step(
      "a top-level GET navigation from another site is allowed",
      async () => {
        const response = await app.request("/healthz", {
          headers: {
            host: "127.0.0.1:8788",
            "sec-fetch-site": "cross-site",
            "sec-fetch-mode": "navigate",
          },
        });
        assert.equal(response.status, 200);
      },
    );
    await t.step("same-origin and typed URLs are allowed", async () => {
      for (const site of ["same-origin", "none"]) {
        const response = await app.request(
          "/api/events",
          post([{ ...EVENT, event_id: `e-${site}` }], {
            "sec-fetch-site": site,
          }),
        );
        assert.equal(response.status, 200, site);
      }
    });
  });
});

Deno.test("createApp() without a database says what it needs instead of failing on a property of undefined", () => {
  for (const options of [{}, { db: null }, { db: {} }, undefined]) {
    assert.throws(
      () => createApp(options as unknown as Parameters<typeof createApp>[0]),
      (error: unknown) =>
        error instanceof ConfigError &&
        /^createApp\(options\) needs db: a database opened with openDb\(\) \(from mod\.ts\), got (undefined|null|object)$/
          .test(error.message),
    );
  }
});
