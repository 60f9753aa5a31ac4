import assert from "node:assert/strict";
import { demo, startDemoServer } from "../cli/demo.ts";
import { UsageError } from "../lib/errors.ts";
import { captureIo } from "./_helpers.ts";

async function call(
  url: string,
  op: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/${op}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
  return await response.json();
}

Deno.test("startDemoServer() serves the staging protocol on an ephemeral loopback port", async () => {
  const logs: string[] = [];
  const server = await startDemoServer({
    port: 0,
    log: (line) => logs.push(line),
  });
  try {
    assert.ok(server.port > 0);
    assert.equal(server.url, `http://127.0.0.1:${server.port}`);
    const namespace = "trace-test-sock";
    assert.deepEqual(
      await call(server.url, "ingest", {
        namespace,
        id: "trace-doc-1",
        text: "Socket note trace_canary_50c",
      }),
      { id: "trace-doc-1" },
    );
    assert.match(
      String(
        (await call(server.url, "query", {
          namespace,
          query: "trace_canary_50c",
        })).text,
      ),
      /50c/,
    );
    assert.deepEqual(
      await call(server.url, "delete", { namespace, ids: ["trace-doc-1"] }),
      { acknowledged: true },
    );
    assert.deepEqual(await call(server.url, "inventory", { namespace }), {
      complete: true,
      source_records: 0,
      vector_records: 0,
      cache_records: 0,
    });
    assert.equal(logs.length, 4);
  } finally {
    await server.shutdown();
    await server.shutdown();
  }
});

/** Whether this machine can listen on IPv6 loopback (some containers cannot). */
function hasIpv6Loopback(): boolean {
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "startDemoServer() gives a usable URL for a bracketed IPv6 host, and serves on it",
  ignore: !hasIpv6Loopback(),
  fn: async () => {
    const server = await startDemoServer({ hostname: "[::1]", port: 0 });
    try {
      assert.equal(server.url, `http://[::1]:${server.port}`);
      assert.deepEqual(
        await call(server.url, "inventory", { namespace: "trace-test-v6" }),
        {
          complete: true,
          source_records: 0,
          vector_records: 0,
          cache_records: 0,
        },
      );
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test("demo() rejects an unknown defect and lists the valid ones", async () => {
  await assert.rejects(
    demo(["--defect", "flaky-disk"], captureIo()),
    (error) =>
      error instanceof UsageError &&
      /valid defects: none, stale-cache, vector-resurrect/.test(error.message),
  );
  await assert.rejects(demo(["--port", "70000"], captureIo()), UsageError);
  await assert.rejects(
    demo(["--defect-delay-ms", "-5"], captureIo()),
    UsageError,
  );
});

Deno.test("demo() announces the defect and address, then stops when interrupted", async () => {
  const io = captureIo();
  const controller = new AbortController();
  const running = demo([
    "--port",
    "0",
    "--defect",
    "slow-vector",
    "--defect-delay-ms",
    "50",
  ], {
    ...io,
    interrupted: controller.signal,
  });
  // The announcement is written before the command waits for a signal.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const match = io.stderr().match(
    /Demo staging app \(defect: slow-vector\) listening on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  assert.ok(match, io.stderr());
  const inventory = await call(match[1] ?? "", "inventory", {
    namespace: "trace-test-cli",
  });
  assert.equal(inventory.complete, true);
  controller.abort();
  assert.equal(await running, 0);
  assert.match(io.stderr(), /POST \/inventory 200 .* namespace=trace-test-cli/);
  assert.doesNotMatch(io.stderr(), /Warning/);
});

Deno.test("demo() --help prints usage with every defect", async () => {
  const io = captureIo();
  assert.equal(await demo(["--help"], io), 0);
  assert.match(io.stdout(), /--defect NAME .*partial-inventory/);
});
