/**
 * An unreachable adapter fails fast with one line and exit 2, and nothing is
 * recorded: no config target, no checkpoint, no ledger row. The check connects
 * through the strict client's connect path (TLS handshake included) and sends
 * no request.
 */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { openDb } from "../lib/db.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import {
  AdapterUnreachableError,
  checkAdapterReachable,
} from "../lib/runs/mod.ts";
import {
  captureIo,
  listedTargetIds,
  stagingConfig,
  withTempDir,
} from "./_helpers.ts";
import { closedPort, testCertificate, withRawServer } from "./_tcp_servers.ts";

async function writeConfig(dir: string, baseUrl: string): Promise<string> {
  const path = `${dir}/staging.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      base_url: baseUrl,
      environment: "staging",
      allow_synthetic_writes: true,
      deletion_window_seconds: 1,
      sample_interval_seconds: 0.5,
    }),
  );
  return path;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

Deno.test("trace external-run against a port where nothing listens fails in one line and records nothing", async () => {
  await withTempDir(async (dir) => {
    const url = `http://127.0.0.1:${closedPort()}`;
    const config = await writeConfig(dir, url);
    const data = ["--data-dir", dir];
    const io = captureIo();
    const code = await main(["external-run", "--config", config, ...data], io);
    assert.equal(code, 2);
    assert.equal(io.stdout(), "");
    assert.match(
      io.stderr(),
      new RegExp(
        `^trace external-run: Cannot reach the staging adapter at ${url}: cannot connect to 127\\.0\\.0\\.1:\\d+: .+; start it or fix base_url \\(nothing was run or recorded\\)\\n$`,
      ),
    );
    assert.deepEqual(await entries(`${dir}/external`), [], "no checkpoint");
    assert.ok(
      !(await entries(dir)).includes("trace.db"),
      "no database, so no config target",
    );

    // A registered target that stopped answering: no checkpoint, no run row.
    const register = captureIo();
    assert.equal(
      await main([
        "external-register",
        "--target",
        "gone",
        "--config",
        config,
        ...data,
      ], register),
      0,
      register.stderr(),
    );
    const run = captureIo();
    assert.equal(
      await main(["external-run", "--target", "gone", ...data], run),
      2,
    );
    assert.match(run.stderr(), /Cannot reach the staging adapter/);
    assert.deepEqual(await entries(`${dir}/external`), []);
    const db = await openDb({ dataDir: dir });
    try {
      const rows = await db.client.execute(
        "SELECT kind FROM ledger_entries ORDER BY seq",
      );
      assert.deepEqual(rows.rows.map((r) => String(r.kind)), ["target"]);
    } finally {
      db.close();
    }

    // With a database already there, a config run still registers nothing.
    const again = captureIo();
    assert.equal(
      await main(["external-run", "--config", config, ...data], again),
      2,
    );
    assert.match(again.stderr(), /Cannot reach the staging adapter/);
    assert.deepEqual(await listedTargetIds(data), ["gone"]);
  });
});

Deno.test("trace external-run --config against an unreachable adapter leaves no database in a fresh data directory", async () => {
  await withTempDir(async (dir) => {
    const url = `http://127.0.0.1:${closedPort()}`;
    const config = await writeConfig(dir, url);
    const fresh = `${dir}/fresh`;
    const io = captureIo();
    const code = await main(
      ["external-run", "--config", config, "--data-dir", fresh],
      io,
    );
    assert.equal(code, 2);
    assert.match(io.stderr(), /Cannot reach the staging adapter/);
    assert.deepEqual(await entries(fresh), [], "nothing created");
  });
});

Deno.test("checkAdapterReachable() connects without sending a request", async () => {
  await withRawServer(() => Promise.resolve(), async (server) => {
    const config = stagingConfig({ base_url: server.url });
    const transport = createHttpTransport(config);
    await checkAdapterReachable(config, transport);
    for (let i = 0; i < 200 && server.connections() === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(server.connections(), 1);
    assert.deepEqual(server.requests, []);
    // Found reachable once: the run that follows does not connect again.
    await checkAdapterReachable(config, transport);
    assert.equal(server.connections(), 1);
  });
});

Deno.test("checkAdapterReachable() completes the TLS handshake for https, and names a failed one", async () => {
  await withRawServer(() => Promise.resolve(), async (server) => {
    const config = stagingConfig({ base_url: server.url });
    await checkAdapterReachable(
      config,
      createHttpTransport(config, { caCerts: [testCertificate()] }),
    );
    assert.deepEqual(server.requests, []);
    await assert.rejects(
      checkAdapterReachable(config, createHttpTransport(config)),
      (error: unknown) =>
        error instanceof AdapterUnreachableError &&
        error.code === "transport" &&
        /^Cannot reach the staging adapter at https:\/\/127\.0\.0\.1:\d+: TLS handshake with 127\.0\.0\.1 failed: .*; check its certificate \(one a private CA signed is trusted with DENO_CERT=\/path\/to\/ca\.pem\) \(nothing was run or recorded\)$/
          .test(error.message),
    );
  }, { tls: true });
});

Deno.test("checkAdapterReachable() lets transports without a connection through", async () => {
  const config = stagingConfig();
  await checkAdapterReachable(config, {
    post: () => Promise.reject(new Error("never called")),
  });
});
