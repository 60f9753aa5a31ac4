/** Shared pieces of the MCP tests: the documented tool table, clients, calls and the full flow. */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { main } from "../cli.ts";
import type { TraceDb } from "../lib/db.ts";
import type { StagingTransport } from "../lib/contract/protocol.ts";
import {
  createTraceMcpServer,
  localPrincipal,
  type McpToolContext,
} from "../lib/mcp/mod.ts";
import { RunJobs, RunLock } from "../lib/runs/mod.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { captureIo } from "./_helpers.ts";

type Effects = [
  readOnly: boolean,
  destructive: boolean,
  idempotent: boolean,
  openWorld: boolean,
];

const READS: Effects = [true, false, true, false];

/** Every tool as docs/mcp.md documents it: name and annotations, in order. */
export const DOCUMENTED_TOOLS: readonly [string, Effects][] = [
  ["trace.external_targets", READS],
  ["trace.external_plan", READS],
  ["trace.external_start", [false, true, false, true]],
  ["trace.external_get", READS],
  ["trace.external_save", [false, false, true, false]],
  ["trace.external_replay", [false, true, false, true]],
  ["trace.external_compare", READS],
  ["trace.external_runs", READS],
  ["trace.external_regressions", READS],
  ["trace.reference_list", READS],
  ["trace.reference_plan", READS],
  ["trace.reference_run", [false, false, false, false]],
  ["trace.reference_get", READS],
  ["trace.reference_history", READS],
  ["trace.reference_dashboard", READS],
  ["trace.reference_ranking", READS],
  ["trace.reference_explain", READS],
  ["trace.query_traces", READS],
];

/** Asserts the server lists exactly the documented tools (with or without trace queries) and their annotations. */
export async function assertDocumentedTools(
  client: Client,
  traceQueries: boolean,
): Promise<void> {
  const { tools } = await client.listTools();
  const expected = DOCUMENTED_TOOLS.filter(([name]) =>
    traceQueries || name !== "trace.query_traces"
  );
  assert.deepEqual(
    tools.map((t: Tool) => [t.name, [
      t.annotations?.readOnlyHint,
      t.annotations?.destructiveHint,
      t.annotations?.idempotentHint,
      t.annotations?.openWorldHint,
    ]]),
    expected,
  );
}

/** A client connected in process to a server over `context`. */
export async function memoryClient(context: McpToolContext): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createTraceMcpServer(context);
  await server.connect(serverSide);
  const client = new Client({ name: "trace-test", version: "1" });
  await client.connect(clientSide);
  return client;
}

/**
 * An in-memory MCP client over `db` (migrated) with a job runner on virtual
 * time whose runs reach the fake target (or `options.transport`), as the
 * local anonymous principal unless `options.overrides` says otherwise.
 */
export async function withToolClient(
  db: TraceDb,
  dataDir: string,
  fn: (client: Client, context: McpToolContext) => Promise<void>,
  options: {
    overrides?: Partial<McpToolContext>;
    transport?: (clock: VirtualClock) => StagingTransport;
  } = {},
): Promise<void> {
  const clock = new VirtualClock();
  const jobs = new RunJobs({
    db,
    dataDir,
    clock,
    trace: false,
    lock: new RunLock(),
    transport: () =>
      options.transport ? options.transport(clock) : new FakeTarget(clock),
  });
  const context: McpToolContext = {
    db,
    dataDir,
    jobs,
    principal: localPrincipal({ user_id: null }),
    allowTraceQueries: false,
    ...options.overrides,
  };
  const client = await memoryClient(context);
  try {
    await fn(client, context);
  } finally {
    await client.close();
    await jobs.close();
  }
}

/** Calls a tool that must succeed; returns its structured answer (and checks the text twin). */
export async function callOk(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = await client.callTool({
    name,
    arguments: args,
  }) as CallToolResult;
  const text = result.content[0]?.type === "text" ? result.content[0].text : "";
  assert.notEqual(result.isError, true, `${name} failed: ${text}`);
  assert.deepEqual(JSON.parse(text), result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}

/** Calls a tool that must fail; returns its one-line message. */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const result = await client.callTool({
    name,
    arguments: args,
  }) as CallToolResult;
  assert.equal(result.isError, true, `${name} did not fail`);
  assert.equal(result.content.length, 1);
  const text = result.content[0]?.type === "text" ? result.content[0].text : "";
  assert.ok(text.length > 0 && !text.includes("\n"), `not one line: ${text}`);
  assert.doesNotMatch(text, /\bat .*\.ts:\d+/, "a stack trace leaked");
  return text;
}

/** Polls `trace.external_get` until the run leaves `running`. */
export async function pollRun(
  client: Client,
  runId: string,
): Promise<Record<string, unknown>> {
  for (let polls = 0; polls < 600; polls++) {
    const view = await callOk(client, "trace.external_get", { run_id: runId });
    if (view.state !== "running") return view;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${runId} never left the running state`);
}

/** Writes a staging config for `baseUrl` with a short window. */
export async function writeConfig(
  dir: string,
  baseUrl: string,
  windowSeconds = 1,
): Promise<string> {
  const path = `${dir}/staging-${crypto.randomUUID()}.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      base_url: baseUrl,
      environment: "staging",
      allow_synthetic_writes: true,
      document_count: 2,
      deletion_window_seconds: windowSeconds,
      sample_interval_seconds: 0.5,
    }),
  );
  return path;
}

/** Registers a target through the CLI, as an operator would before handing ids to an assistant. */
export async function registerThroughCli(
  dataDir: string,
  targetId: string,
  configPath: string,
): Promise<void> {
  const io = captureIo();
  const code = await main(
    [
      "external-register",
      "--target",
      targetId,
      "--config",
      configPath,
      "--data-dir",
      dataDir,
    ],
    io,
  );
  assert.equal(code, 0, io.stderr());
}

/** Unknown targets, URL-like ids and endpoint arguments are refused before anything runs. */
export async function assertTargetRefusals(client: Client): Promise<void> {
  assert.match(
    await callError(client, "trace.external_start", {
      target_id: "http://127.0.0.1:8787",
    }),
    /not a URL or host; register the endpoint with trace external-register/,
  );
  assert.match(
    await callError(client, "trace.external_start", { target_id: "unknown" }),
    /Cannot find target "unknown"; register it with trace external-register/,
  );
  assert.match(
    await callError(client, "trace.external_plan", {
      target_id: "unknown",
      base_url: "http://127.0.0.1:8787",
    }),
    /base_url: unknown key/,
  );
}

/** What the full flow hands back for the caller's own checks. */
export interface FlowResult {
  failing: Record<string, unknown>;
  replayed: Record<string, unknown>;
  comparison: Record<string, unknown>;
}

/**
 * The assistant's flow: targets → plan → start → poll → save → (fix) →
 * replay → poll → compare. `fix` runs between the save and the replay.
 */
export async function fullFlow(
  client: Client,
  targetId: string,
  fix: () => Promise<void>,
): Promise<FlowResult> {
  await assertTargetRefusals(client);
  const listed = await callOk(client, "trace.external_targets");
  assert.deepEqual(
    (listed.targets as { target_id: string }[]).map((t) => t.target_id),
    [targetId],
  );
  const plan = await callOk(client, "trace.external_plan", {
    target_id: targetId,
  });
  assert.equal((plan.target as { id: string }).id, targetId);

  const started = await callOk(client, "trace.external_start", {
    target_id: targetId,
  });
  assert.equal(started.state, "running");
  const failing = await pollRun(client, started.run_id as string);
  assert.equal(failing.state, "completed");
  assert.equal(failing.verdict, "FAIL");
  assert.ok(
    (failing.findings as { code: string; subject: string }[]).some((f) =>
      f.code === "marker_retrievable" || f.subject === "cache_records"
    ),
    JSON.stringify(failing.findings),
  );
  assert.equal(typeof (failing.cleanup as object), "object");
  const samples = failing.samples as { marker_seen: boolean }[];
  assert.deepEqual(failing.final_sample, samples.at(-1));
  assert.equal(samples.at(-1)!.marker_seen, true);

  const saved = await callOk(client, "trace.external_save", {
    run_id: started.run_id,
  });
  const regression = saved.regression as { regression_id: string };
  await fix();
  const replay = await callOk(client, "trace.external_replay", {
    regression_id: regression.regression_id,
  });
  assert.equal(replay.regression_id, regression.regression_id);
  const replayed = await pollRun(client, replay.run_id as string);
  assert.equal(replayed.state, "completed");
  const comparison = await callOk(client, "trace.external_compare", {
    run_a: started.run_id,
    run_b: replay.run_id,
  });
  return { failing, replayed, comparison };
}

/** A raw JSON-RPC `initialize` request, as a client sends it first. */
export const INITIALIZE_REQUEST = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "trace-test", version: "1" },
  },
} as const;
