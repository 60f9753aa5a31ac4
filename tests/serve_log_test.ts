/**
 * What `trace serve` says: one content-free line per request, words a
 * service manager expects on SIGTERM, and the same "port in use" as
 * `trace demo`.
 */

import assert from "node:assert/strict";
import { captureIo, withDb, withTempDir } from "./_helpers.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { startDemoServer } from "../cli/demo.ts";
import { main } from "../cli.ts";

const SECRET_ID = "thread-SECRET-4242";

function event(id: string) {
  return {
    event_id: id,
    application_id: "app-1",
    agent_id: "agent-1",
    thread_id: SECRET_ID,
    kind: "retrieval",
  };
}

Deno.test("createApp() logs one content-free line per request when asked", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const lines: string[] = [];
    const app = createApp({
      db,
      log: () => {},
      requestLog: (line) => lines.push(line),
      bodyLimits: { maxBytes: 4096, maxDecodedBytes: 4096 },
    });
    const post = (body: string, type = "application/json") =>
      app.request("/api/events", {
        method: "POST",
        body,
        headers: { "content-type": type },
      });
    await post(JSON.stringify([event("e-1"), event("e-2")]));
    await post(
      `${JSON.stringify(event("e-3"))}\n{"nope`,
      "application/x-ndjson",
    );
    await post("x".repeat(5000));
    await app.request(`/api/events?thread_id=${SECRET_ID}`);
    await app.request("/v1/traces", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    await app.request("/nowhere");
    assert.equal(lines.length, 6);
    const shapes = lines.map((line) => line.replace(/ \d+\.\dms/, " Nms"));
    assert.deepEqual(shapes, [
      "POST /api/events 200 Nms events=2",
      "POST /api/events 400 Nms refused=invalid_request",
      "POST /api/events 413 Nms refused=payload_too_large",
      "GET /api/events 200 Nms",
      "POST /v1/traces 200 Nms spans=0",
      "GET - 404 Nms",
    ]);
    assert.ok(
      lines.every((line) => !line.includes("SECRET")),
      "no ids, paths or query strings",
    );
  });
});

Deno.test("trace serve logs requests and says 'received SIGTERM, shutting down'", async () => {
  await withTempDir(async (dir) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli.ts", "serve", "--port", "0", "--data-dir", dir],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let stderr = "";
    const listening = Promise.withResolvers<string>();
    const reading = (async () => {
      for await (
        const text of child.stderr.pipeThrough(new TextDecoderStream())
      ) {
        stderr += text;
        const url = stderr.match(/listening on (http:\/\/[^\s]+)/)?.[1];
        if (url) listening.resolve(url);
      }
      listening.reject(new Error(`exited before listening: ${stderr}`));
    })();
    const url = await listening.promise;
    const response = await fetch(`${url}/api/events?thread_id=${SECRET_ID}`);
    assert.equal(response.status, 200);
    await response.body?.cancel();
    child.kill("SIGTERM");
    const status = await child.status;
    await reading;
    assert.equal(status.code, 0, stderr);
    assert.match(stderr, /\nGET \/api\/events 200 \d+\.\dms\n/);
    assert.match(stderr, /\nreceived SIGTERM, shutting down\n/);
    assert.match(stderr, /Trace server stopped\n$/);
    assert.ok(!stderr.includes("SECRET"));
  });
});

Deno.test("trace demo and trace serve say 'port in use' the same way", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const expected =
      `Cannot listen on 127.0.0.1:${port}: the port is in use; choose another --port`;
    await assert.rejects(
      startDemoServer({ port }),
      (error: Error) => error.message === expected,
    );
    await withTempDir(async (dir) => {
      const io = captureIo();
      assert.equal(
        await main(["serve", "--port", String(port), "--data-dir", dir], io),
        2,
      );
      assert.equal(io.stderr(), `trace serve: ${expected}\n`);
    });
  } finally {
    taken.close();
  }
});
