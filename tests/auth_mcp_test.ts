/** MCP over HTTP with operator accounts: who gets which tools, tenant-bound accounts on trace queries only, scope binding, read-only mode. */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AccountBook } from "../lib/auth/mod.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { RunJobs } from "../lib/runs/mod.ts";
import { toolRefusal } from "../lib/mcp/mod.ts";
import { createApp } from "../routes/app.ts";
import { EXAMPLE_ACCOUNTS } from "../fixtures/host/host.ts";
import { seedExampleTraces } from "../fixtures/host/traces.ts";
import { withDb, withServer } from "./_helpers.ts";
import { callError, callOk } from "./mcp_support.ts";
import { type Operator, tokenOf } from "./operator_support.ts";

async function withMcp(
  readOnly: boolean,
  fn: (connect: (operator: Operator) => Promise<Client>) => Promise<void>,
  allowTraceQueries = true,
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await seedExampleTraces(db);
    const jobs = new RunJobs({ db, dataDir, trace: false });
    const app = createApp({
      db,
      log: () => {},
      readOnly,
      accounts: new AccountBook(EXAMPLE_ACCOUNTS),
      mcp: { dataDir, jobs, allowTraceQueries },
    });
    const clients: Client[] = [];
    try {
      await withServer(app.fetch, async (server) => {
        await fn(async (operator) => {
          const client = new Client({ name: "trace-test", version: "1" });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
              requestInit: {
                headers: { Authorization: `Bearer ${tokenOf(operator)}` },
              },
            }),
          );
          clients.push(client);
          return client;
        });
        for (const client of clients) await client.close();
      });
    } finally {
      await jobs.close();
    }
  });
}

const toolNames = async (client: Client) =>
  (await client.listTools()).tools.map((tool: { name: string }) => tool.name);

const WRITES = [
  "trace.external_start",
  "trace.external_save",
  "trace.external_replay",
  "trace.reference_run",
];

Deno.test("/mcp offers each account the tools its role allows; tenant-bound accounts get the trace tool only", async () => {
  await withMcp(false, async (connect) => {
    const admin = await toolNames(await connect("admin-1"));
    assert.ok(WRITES.every((name) => admin.includes(name)));
    assert.ok(admin.includes("trace.query_traces"));
    const viewer = await toolNames(await connect("viewer-1"));
    assert.ok(viewer.includes("trace.external_targets"));
    assert.ok(WRITES.every((name) => !viewer.includes(name)), viewer.join());
    const operator = await toolNames(await connect("ops-1"));
    assert.ok(WRITES.every((name) => operator.includes(name)));
    const bound = await connect("support-app1");
    assert.deepEqual(await toolNames(bound), ["trace.query_traces"]);
    const refused = await callError(bound, "trace.external_targets");
    assert.match(
      refused,
      /trace\.external_targets: Forbidden: this account is bound to one tenant/,
    );
    const start = await callError(
      await connect("viewer-1"),
      "trace.external_start",
      { target_id: "t-1" },
    );
    assert.match(
      start,
      /needs the operator role or above; this account is viewer/,
    );
  });
});

Deno.test("/mcp trace queries are bound to the account's scope, each key included", async () => {
  await withMcp(false, async (connect) => {
    const bound = await connect("support-app1");
    const page = await callOk(bound, "trace.query_traces", {});
    const events = page.events as { application_id: string }[];
    assert.ok(
      events.length > 0 && events.every((e) => e.application_id === "app-1"),
    );
    assert.match(
      await callError(bound, "trace.query_traces", { application_id: "app-2" }),
      /outside this principal's trace scope/,
    );
    const anon = await connect("anon-viewer");
    const anonymous = await callOk(anon, "trace.query_traces", {});
    assert.deepEqual(
      (anonymous.events as { event_id: string }[]).map((e) => e.event_id),
      ["evt-anon"],
    );
    assert.match(
      await callError(anon, "trace.query_traces", { user_id: "user-ada" }),
      /outside this principal's trace scope/,
    );
  });
});

Deno.test("/mcp in read-only mode offers no tool that writes, to anyone", async () => {
  await withMcp(true, async (connect) => {
    const admin = await connect("admin-1");
    const names = await toolNames(admin);
    assert.ok(WRITES.every((name) => !names.includes(name)), names.join());
    assert.ok(names.includes("trace.external_get"));
    assert.match(
      await callError(admin, "trace.external_start", { target_id: "t-1" }),
      /read-only \(TRACE_UI_READ_ONLY=true\)/,
    );
  });
  assert.equal(
    toolRefusal(
      { name: "a", role: "admin", scope: {}, via: "bearer" },
      { name: "trace.external_targets", annotations: { readOnlyHint: true } },
      { readOnly: true },
    ),
    null,
  );
});

Deno.test("/mcp instructions tell a tenant-bound account why its tool list is empty and which variable turns trace queries on", async () => {
  await withMcp(false, async (connect) => {
    const bound = await connect("support-app1");
    assert.deepEqual(await toolNames(bound), []);
    const said = bound.getInstructions() ?? "";
    assert.match(
      said,
      /support-app1 is bound to one tenant \(application "app-1", any user\)/,
    );
    assert.match(said, /none of the external or reference tools is offered/);
    assert.match(
      said,
      /trace\.query_traces \(metadata-only trace events\) is off on this server, so tools\/list is empty: to offer it, an operator restarts trace serve with TRACE_MCP_ALLOW_TRACE_QUERIES=true/,
    );
    assert.doesNotMatch(said, /Typical flow/);
    const admin = (await connect("admin-1")).getInstructions() ?? "";
    assert.match(admin, /Typical flow: trace\.external_targets/);
    assert.match(
      admin,
      /trace\.query_traces \(metadata-only trace events\) is off/,
    );
    assert.doesNotMatch(admin, /tools\/list is empty/);
  }, false);
});

Deno.test("/mcp instructions name the tools a principal may use and why the others are missing", async () => {
  await withMcp(false, async (connect) => {
    const bound = (await connect("support-app1")).getInstructions() ?? "";
    assert.match(
      bound,
      /trace\.query_traces reads metadata-only trace events in the caller's scope \(application "app-1", any user\)/,
    );
    assert.doesNotMatch(bound, /Typical flow|tools\/list is empty/);
    const viewer = (await connect("viewer-1")).getInstructions() ?? "";
    assert.match(viewer, /viewer-1 may use trace\.external_targets, /);
    assert.match(
      viewer,
      /Not offered: trace\.external_start, trace\.external_save, trace\.external_replay, trace\.reference_run \(starting runs and saving regressions needs the operator role or above; this account is viewer\)/,
    );
  });
});
