import assert from "node:assert/strict";
import { ConfigError } from "../lib/errors.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import { notAJsonObject } from "../lib/contract/protocol.ts";
import {
  answer,
  closedPort,
  expectFailure,
  jsonResponse,
  rawResponse,
  withRawServer,
} from "./_tcp_servers.ts";

const BUDGET = { timeoutMs: 5000 };

function transportFor(baseUrl: string) {
  return createHttpTransport({ base_url: baseUrl });
}

Deno.test("createHttpTransport() posts one exact request and returns the object", async () => {
  const reply = answer(jsonResponse('{"id":"trace-doc-1","extra":[1]}'));
  await withRawServer(reply, async (server) => {
    const transport = transportFor(`${server.url}/api/v1`);
    const body = { namespace: "trace-test-a", id: "trace-doc-1", text: "é" };
    const result = await transport.post("ingest", body, BUDGET);
    assert.deepEqual(result, { id: "trace-doc-1", extra: [1] });
    const [request] = server.requests;
    assert.ok(request);
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/api/v1/ingest");
    assert.equal(request.version, "HTTP/1.1");
    assert.deepEqual(JSON.parse(request.body), body);
    assert.deepEqual(Object.fromEntries(request.headers), {
      host: `127.0.0.1:${server.port}`,
      "content-type": "application/json",
      accept: "application/json",
      "accept-encoding": "identity",
      connection: "close",
      "content-length": String(new TextEncoder().encode(request.body).length),
    });
  });
});

Deno.test("createHttpTransport() reads a chunked body", async () => {
  const chunked = rawResponse("200 OK", ["Transfer-Encoding: chunked"]) +
    '5;ext=1\r\n{"tex\r\n0b\r\nt":"hello"}\r\n0\r\nX-Trailer: y\r\n\r\n';
  await withRawServer(answer(chunked), async (server) => {
    const result = await transportFor(server.url).post(
      "query",
      { namespace: "n", query: "q" },
      BUDGET,
    );
    assert.deepEqual(result, { text: "hello" });
  });
});

Deno.test("createHttpTransport() refuses bodies that are not one strict JSON object", async (t) => {
  // Each with whether it is no JSON object at all, as another service answers.
  const bodies: [string, boolean][] = [
    ['{"acknowledged":true,"acknowledged":false}', false],
    ['{"source_records":NaN}', false],
    ['{"source_records":Infinity}', false],
    ['{"acknowledged":true} trailing', false],
    ['[{"acknowledged":true}]', true],
    ['"acknowledged"', true],
    ["", true],
    ["<!DOCTYPE html><html></html>", true],
  ];
  for (const [body, notAnObject] of bodies) {
    await t.step(JSON.stringify(body), async () => {
      await withRawServer(answer(jsonResponse(body)), async (server) => {
        const call = transportFor(server.url).post("delete", {}, BUDGET);
        const error = await expectFailure(call, "malformed_json");
        assert.equal(error.status, 200);
        const detail = error.message.replace(/^Request \/delete failed: /, "");
        assert.equal(notAJsonObject(detail), notAnObject, detail);
      });
    });
  }
  await t.step("invalid UTF-8", async () => {
    const head = rawResponse("200 OK", ["Content-Length: 8"]);
    const bytes = new Uint8Array([
      ...new TextEncoder().encode(head),
      0x7b,
      0x22,
      0xff,
      0x22,
      0x3a,
      0x31,
      0x7d,
      0x20,
    ]);
    await withRawServer(answer(bytes), async (server) => {
      const error = await expectFailure(
        transportFor(server.url).post("delete", {}, BUDGET),
        "malformed_json",
      );
      assert.ok(
        notAJsonObject(error.message.replace(/^Request \/delete failed: /, "")),
      );
    });
  });
});

Deno.test("createHttpTransport() refuses a redirect and never follows it", async () => {
  await withRawServer(answer(jsonResponse("{}")), async (target) => {
    const redirect = rawResponse("302 Found", [
      `Location: ${target.url}/ingest`,
      "Content-Length: 0",
    ]);
    await withRawServer(answer(redirect), async (server) => {
      const call = transportFor(server.url).post("ingest", {}, BUDGET);
      const error = await expectFailure(call, "redirect");
      assert.equal(error.status, 302);
      assert.equal(server.connections(), 1);
    });
    assert.equal(target.connections(), 0);
  });
});

Deno.test("createHttpTransport() reports a non-200 status without its body", async () => {
  const secret = "s3cr3t-answer-text-trace_canary_1234";
  const reply = answer(rawResponse("500 Internal Server Error", [
    `Content-Length: ${secret.length}`,
  ], secret));
  await withRawServer(reply, async (server) => {
    const error = await expectFailure(
      transportFor(server.url).post("query", {}, BUDGET),
      "http_status",
    );
    assert.equal(error.status, 500);
    assert.match(error.message, /500/);
    assert.ok(!error.message.includes(secret));
    assert.ok(!String(error.cause ?? "").includes(secret));
  });
});

Deno.test("createHttpTransport() refuses plain HTTP to a non-loopback host before connecting", () => {
  for (
    const url of [
      "http://example.com",
      "http://10.0.0.1:8080",
      "http://127.0.0.1.nip.io",
    ]
  ) {
    assert.throws(() => transportFor(url), ConfigError, url);
  }
  assert.throws(() => transportFor("http://user:pw@127.0.0.1:1"), ConfigError);
  assert.throws(() => transportFor("http://127.0.0.1:1/?q=1"), ConfigError);
  assert.throws(() => transportFor("ftp://127.0.0.1"), ConfigError);
});

Deno.test("createHttpTransport() reports a refused connection as connect", async () => {
  const port = closedPort();
  const call = transportFor(`http://127.0.0.1:${port}`).post(
    "inventory",
    {},
    BUDGET,
  );
  await expectFailure(call, "connect");
});

Deno.test("createHttpTransport() opens exactly one connection per call, even on failure", async () => {
  const reply = answer(
    rawResponse("503 Service Unavailable", ["Content-Length: 0"]),
  );
  await withRawServer(reply, async (server) => {
    const transport = transportFor(server.url);
    await expectFailure(transport.post("inventory", {}, BUDGET), "http_status");
    assert.equal(server.connections(), 1);
    await expectFailure(transport.post("inventory", {}, BUDGET), "http_status");
    assert.equal(server.connections(), 2);
    assert.equal(server.requests.length, 2);
  });
});
