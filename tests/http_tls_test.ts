import assert from "node:assert/strict";
import { ConfigError } from "../lib/errors.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import {
  answer,
  expectFailure,
  jsonResponse,
  testCertificate,
  withRawServer,
} from "./_tcp_servers.ts";

const BUDGET = { timeoutMs: 5000 };
const TOKEN = "trace-test-token-0123456789";
const env = (name: string) => name === "STAGING_TOKEN" ? TOKEN : undefined;
const ok = answer(jsonResponse('{"acknowledged":true}'));

Deno.test("createHttpTransport() sends the bearer token over verified TLS", async () => {
  await withRawServer(ok, async (server) => {
    const transport = createHttpTransport(
      { base_url: `${server.url}/prefix/`, token_env: "STAGING_TOKEN" },
      { env, caCerts: [testCertificate()] },
    );
    const result = await transport.post("delete", { ids: ["a"] }, BUDGET);
    assert.deepEqual(result, { acknowledged: true });
    const [request] = server.requests;
    assert.equal(request?.path, "/prefix/delete");
    assert.equal(request?.headers.get("authorization"), `Bearer ${TOKEN}`);
  }, { tls: true });
});

Deno.test("createHttpTransport() never sends the token over plain HTTP", async () => {
  await withRawServer(ok, async (server) => {
    assert.throws(
      () =>
        createHttpTransport({
          base_url: server.url,
          token_env: "STAGING_TOKEN",
        }, { env }),
      ConfigError,
    );
    const transport = createHttpTransport({ base_url: server.url }, { env });
    await transport.post("delete", {}, BUDGET);
    assert.equal(server.connections(), 1);
    assert.equal(server.requests[0]?.headers.has("authorization"), false);
  });
});

Deno.test("createHttpTransport() names a missing or empty token variable", () => {
  for (const value of [undefined, ""]) {
    assert.throws(
      () =>
        createHttpTransport(
          { base_url: "https://127.0.0.1:1", token_env: "MISSING_TOKEN" },
          { env: () => value },
        ),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes("MISSING_TOKEN"),
    );
  }
});

Deno.test("createHttpTransport() rejects a self-signed certificate without caCerts", async () => {
  await withRawServer(ok, async (server) => {
    const transport = createHttpTransport(
      { base_url: server.url, token_env: "STAGING_TOKEN" },
      { env },
    );
    const error = await expectFailure(
      transport.post("delete", {}, BUDGET),
      "tls",
    );
    assert.ok(!error.message.includes(TOKEN));
    assert.equal(server.requests.length, 0);
    assert.equal(server.connections(), 1);
  }, { tls: true });
});

Deno.test("createHttpTransport() rejects a certificate for another host name", async () => {
  await withRawServer(ok, async (server) => {
    const transport = createHttpTransport(
      { base_url: server.url },
      { caCerts: [testCertificate()] },
    );
    // The certificate names localhost, 127.0.0.1 and ::1, not 127.0.0.2.
    await expectFailure(transport.post("delete", {}, BUDGET), "tls");
    assert.equal(server.requests.length, 0);
  }, { tls: true, hostname: "127.0.0.2" });
});
