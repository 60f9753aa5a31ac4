/** The server app: auth, origin and host guards, error mapping, and `trace serve` start-up rules. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
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

Deno.test("createApp() refuses cross-origin requests and foreign Host headers", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({ db, loopbackBind: true });
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
  assert.match(short.stderr(), /at least 16 characters/);
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
    'trace serve: --port must be an integer from 0 to 65535, got "99999"\n',
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
    } finally {
      taken.close();
    }
  });
});
