import assert from "node:assert/strict";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import {
  type Behaviour,
  expectFailure,
  jsonResponse,
  withRawServer,
} from "./_tcp_servers.ts";

Deno.test("createHttpTransport() times out a peer that drips one byte at a time", async () => {
  const response = jsonResponse(`{"text":"${"d".repeat(80)}"}`);
  const dripMs = 50;
  const drip: Behaviour = async ({ write, sleep, stopped }) => {
    for (const char of response) {
      if (stopped()) return;
      await sleep(dripMs);
      await write(char);
    }
  };
  await withRawServer(drip, async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    // Each byte arrives well inside the budget, so a per-read timer would let
    // the whole answer through; only a deadline over the request ends it.
    const error = await expectFailure(
      transport.post("query", {}, { timeoutMs: 300 }),
      "timeout",
    );
    assert.match(error.message, /300 ms/);
    assert.equal(server.connections(), 1);
  });
});

Deno.test("createHttpTransport() times out a peer that accepts and never answers", async () => {
  const silent: Behaviour = async ({ waitForClose }) => await waitForClose();
  await withRawServer(silent, async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    await expectFailure(
      transport.post("inventory", { namespace: "n" }, { timeoutMs: 200 }),
      "timeout",
    );
    assert.equal(server.connections(), 1);
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("createHttpTransport() times out a body that stops mid-way", async () => {
  const stall: Behaviour = async ({ write, waitForClose }) => {
    await write(jsonResponse('{"acknowledged":true}').slice(0, -5));
    await waitForClose();
  };
  await withRawServer(stall, async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    await expectFailure(
      transport.post("delete", {}, { timeoutMs: 200 }),
      "timeout",
    );
  });
});

Deno.test("createHttpTransport() rejects a budget that is not a positive number", async () => {
  const transport = createHttpTransport({ base_url: "http://127.0.0.1:9" });
  for (const timeoutMs of [0, -1, Number.NaN, Infinity]) {
    await assert.rejects(
      transport.post("query", {}, { timeoutMs }),
      RangeError,
    );
  }
});

Deno.test("createHttpTransport() calls a request off when its signal aborts, closing the connection", async () => {
  let closedByClient = false;
  const silent: Behaviour = async ({ waitForClose, stopped }) => {
    await waitForClose();
    closedByClient = !stopped();
  };
  await withRawServer(silent, async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    const controller = new AbortController();
    // A budget long enough that only the signal can end the request in time.
    const call = transport.post("ingest", { namespace: "n" }, {
      timeoutMs: 20_000,
      signal: controller.signal,
    });
    // Once the request is on the wire, as a Ctrl-C would find it.
    while (server.requests.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    controller.abort();
    const error = await expectFailure(call, "timeout");
    assert.match(error.message, /called off before a complete response/);
    // The peer saw the client leave, well before the server shut down.
    while (!closedByClient) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
});

Deno.test("createHttpTransport() sends nothing when its signal has already aborted", async () => {
  await withRawServer(async () => {}, async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    await expectFailure(
      transport.post("ingest", {}, {
        timeoutMs: 5_000,
        signal: AbortSignal.abort(),
      }),
      "timeout",
    );
    assert.equal(server.requests.length, 0);
  });
});
