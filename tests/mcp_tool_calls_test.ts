/** How `trace mcp` counts tool calls in progress, so it never closes the database under one. */

import assert from "node:assert/strict";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { migrate } from "../lib/db.ts";
import {
  createTraceMcpServer,
  guardToolCalls,
  localPrincipal,
  ToolCalls,
} from "../lib/mcp/mod.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { RunJobs, RunLock } from "../lib/runs/mod.ts";
import { withDb } from "./_helpers.ts";

/** A raw client side linked to a guarded server over `calls`, and the answers it gets. */
async function guardedServer(
  fn: (
    send: (message: Record<string, unknown>) => void,
    answers: JSONRPCMessage[],
    calls: ToolCalls,
  ) => Promise<void>,
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const jobs = new RunJobs({
      db,
      dataDir,
      trace: false,
      lock: new RunLock(),
    });
    const calls = new ToolCalls();
    const server = createTraceMcpServer({
      calls,
      db,
      dataDir,
      jobs,
      principal: localPrincipal({ user_id: null }),
      allowTraceQueries: false,
    });
    const [client, serverSide] = InMemoryTransport.createLinkedPair();
    const answers: JSONRPCMessage[] = [];
    client.onmessage = (message: JSONRPCMessage) => answers.push(message);
    await server.connect(guardToolCalls(serverSide, calls));
    await client.start();
    // The in-memory transport hands a message to the other side before
    // its send returns: what `calls` says right after is what stdin's end
    // would see.
    const send = (message: Record<string, unknown>) =>
      void client.send({ jsonrpc: "2.0", ...message } as JSONRPCMessage);
    try {
      await fn(send, answers, calls);
    } finally {
      await jobs.close();
      await server.close();
    }
  });
}

const answerTo = (answers: JSONRPCMessage[], id: number) =>
  answers.find((answer) => "id" in answer && answer.id === id) as
    | { result?: { isError?: boolean }; error?: { code: number } }
    | undefined;

Deno.test("a tool call counts as in progress from the moment it is read, before the SDK starts its handler, until it ends", async () => {
  await guardedServer(async (send, answers, calls) => {
    send({
      id: 2,
      method: "tools/call",
      params: { name: "trace.reference_list", arguments: {} },
    });
    assert.equal(calls.running, 1);
    await calls.idle();
    assert.equal(calls.running, 0);
    assert.equal(answerTo(answers, 2)?.result?.isError, undefined);
  });
});

Deno.test("a tool call the SDK answers without running it stops counting when answered", async () => {
  await guardedServer(async (send, answers, calls) => {
    // Trace offers no tasks: the SDK refuses a task-augmented call itself.
    send({
      id: 3,
      method: "tools/call",
      params: {
        name: "trace.reference_list",
        arguments: {},
        task: { ttl: 1000 },
      },
    });
    assert.equal(calls.running, 1);
    await calls.idle();
    assert.ok(answerTo(answers, 3)?.error, JSON.stringify(answers));
    // A call the guard refuses itself never counts.
    send({ id: 4, method: "tools/call", params: { name: 7 } });
    assert.equal(calls.running, 0);
    assert.equal(answerTo(answers, 4)?.error?.code, -32602);
  });
});
