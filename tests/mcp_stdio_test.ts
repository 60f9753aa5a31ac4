/**
 * `trace mcp` over stdio with the official SDK client, launched exactly as
 * `trace mcp-config` tells a client to launch it: the documented tools, the
 * full flow against the demo app, a refused second start, a run left by a
 * killed server read back as interrupted, and trace queries bound to the
 * local scope.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { main } from "../cli.ts";
import { type DemoServer, startDemoServer } from "../cli/demo.ts";
import { migrate, openDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { captureIo, registerTokenTarget, withTempDir } from "./_helpers.ts";
import {
  assertDocumentedTools,
  callError,
  callOk,
  fullFlow,
  INITIALIZE_REQUEST,
  registerThroughCli,
  writeConfig,
} from "./mcp_support.ts";

interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** What `trace mcp-config --json` prints for these flags. */
async function launchSpec(flags: string[]): Promise<LaunchSpec> {
  const io = captureIo();
  assert.equal(await main(["mcp-config", "--json", ...flags], io), 0);
  return JSON.parse(io.stdout());
}

/** A stdio client of a server launched from `spec`; closes it afterwards. */
async function withStdio<T>(
  spec: LaunchSpec,
  fn: (client: Client, transport: StdioClientTransport) => Promise<T>,
): Promise<T> {
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: { ...spec.env, NO_COLOR: "1" },
    stderr: "ignore",
  });
  const client = new Client({ name: "trace-test", version: "1" });
  await client.connect(transport);
  try {
    return await fn(client, transport);
  } finally {
    await client.close();
  }
}

// The SDK's stdio client drives the child through node:child_process, whose
// pipes Deno's sanitizers count as leaked until the child's exit is reaped.
const CHILD_PROCESS = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name:
    "trace mcp-config prints absolute paths that launch trace mcp with the documented tools",
  ...CHILD_PROCESS,
  fn: async () => {
    await withTempDir(async (dir) => {
      const spec = await launchSpec(["--data-dir", dir]);
      assert.equal(spec.command, Deno.execPath());
      const cli = spec.args.find((a) => a.endsWith("cli.ts"))!;
      assert.ok(isAbsolute(cli) && existsSync(cli), cli);
      const config = spec.args[spec.args.indexOf("--config") + 1]!;
      assert.ok(isAbsolute(config) && existsSync(config), config);
      assert.deepEqual(spec.args.slice(spec.args.indexOf("mcp")), [
        "mcp",
        "--data-dir",
        dir,
        "--anonymous",
      ]);
      assert.deepEqual(spec.env, {});
      await withStdio(spec, (client) => assertDocumentedTools(client, false));
      // A malformed call is an invalid-params error saying what is wrong, not a schema dump.
      await withStdio(spec, async (client) => {
        await assert.rejects(
          client.request(
            {
              method: "tools/call",
              params: { name: "trace.external_targets", arguments: "all" },
            } as never,
            CallToolResultSchema,
          ),
          (error: unknown) => {
            const { code, message } = error as {
              code?: number;
              message?: string;
            };
            return code === -32602 &&
              /tools\/call needs params\.arguments, an object .*\(got a string\)/
                .test(message ?? "") &&
              !(message ?? "").includes("expected");
          },
        );
        assert.ok(await client.listTools(), "the server still answers");
      });

      const queries = await launchSpec([
        "--data-dir",
        dir,
        "--allow-trace-queries",
      ]);
      assert.deepEqual(queries.env, { TRACE_MCP_ALLOW_TRACE_QUERIES: "true" });
      await withStdio(queries, (client) => assertDocumentedTools(client, true));

      const text = captureIo();
      assert.equal(await main(["mcp-config", "--data-dir", dir], text), 0);
      const blocks = text.stdout().split("\n\n");
      const mcpServers = JSON.parse(blocks[0]!.replace(/^(#.*\n)+/, ""));
      assert.deepEqual(mcpServers.mcpServers.trace, {
        command: spec.command,
        args: spec.args,
      });
      const vscode = JSON.parse(blocks[1]!.replace(/^(#.*\n)+/, ""));
      assert.equal(vscode.servers.trace.type, "stdio");
      assert.deepEqual(vscode.servers.trace.args, spec.args);
    });
  },
});

Deno.test({
  name:
    "over stdio: register (CLI) → start → poll → save → replay after the fix → compare, against the demo app",
  ...CHILD_PROCESS,
  fn: async () => {
    let demo: DemoServer = await startDemoServer({ defect: "stale-cache" });
    try {
      await withTempDir(async (dir) => {
        await registerThroughCli(
          dir,
          "demo-staging",
          await writeConfig(dir, demo.url),
        );
        const spec = await launchSpec(["--data-dir", dir]);
        const flow = await withStdio(
          spec,
          (client) =>
            fullFlow(client, "demo-staging", async () => {
              const port = demo.port;
              await demo.shutdown();
              demo = await startDemoServer({ port });
            }),
        );
        const keys = (findings: unknown) =>
          (findings as { code: string; subject: string }[])
            .map((f) => `${f.code}:${f.subject}`).sort();
        assert.deepEqual(
          keys(flow.failing.findings).filter((k) => !k.startsWith("cleanup")),
          ["marker_retrievable:retrieval", "residual_store:cache_records"],
        );
        assert.equal(
          (flow.failing.cleanup as { cleanup_complete: boolean })
            .cleanup_complete,
          false,
        );
        assert.equal(flow.replayed.verdict, "PASS");
        assert.equal(
          (flow.replayed.regression as { status: string }).status,
          "enforced",
        );
        const comparison = flow.comparison as {
          a: { verdict: string };
          b: { verdict: string };
          findings: { fixed: { code: string; subject: string }[] };
          cleanup: {
            a: { cleanup_complete: boolean };
            b: { cleanup_complete: boolean };
          };
        };
        assert.equal(comparison.a.verdict, "FAIL");
        assert.equal(comparison.b.verdict, "PASS");
        assert.deepEqual(
          keys(comparison.findings.fixed).filter((k) =>
            !k.startsWith("cleanup")
          ),
          ["marker_retrievable:retrieval", "residual_store:cache_records"],
        );
        assert.equal(comparison.cleanup.a.cleanup_complete, false);
        assert.equal(comparison.cleanup.b.cleanup_complete, true);
      });
    } finally {
      await demo.shutdown();
    }
  },
});

/**
 * Runs `fn` with a data directory where `slow-staging` is registered: the
 * demo app with a 60 s window, so that a run of it is still running when
 * the test acts on it.
 */
async function withSlowTarget(fn: (dir: string) => Promise<void>) {
  const demo = await startDemoServer();
  try {
    await withTempDir(async (dir) => {
      await registerThroughCli(
        dir,
        "slow-staging",
        await writeConfig(dir, demo.url, 60),
      );
      await fn(dir);
    });
  } finally {
    await demo.shutdown();
  }
}

Deno.test({
  name:
    "over stdio: a second start is refused naming the running run; after the server is killed its run reads interrupted, INCONCLUSIVE",
  ...CHILD_PROCESS,
  fn: () =>
    withSlowTarget(async (dir) => {
      const spec = await launchSpec(["--data-dir", dir]);
      const runId = await withStdio(spec, async (client, transport) => {
        const started = await callOk(client, "trace.external_start", {
          target_id: "slow-staging",
        });
        const refused = await callError(client, "trace.external_start", {
          target_id: "slow-staging",
        });
        assert.match(
          refused,
          new RegExp(
            `run ${started.run_id} is still running in this process`,
          ),
        );
        // Kill it inside the window, once every synthetic id was issued.
        for (;;) {
          const running = await callOk(client, "trace.external_get", {
            run_id: started.run_id,
          });
          assert.equal(running.state, "running");
          if ((running.progress as { phase: string }).phase === "window") {
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        Deno.kill(transport.pid!, "SIGKILL");
        return started.run_id as string;
      });
      await withStdio(spec, async (client) => {
        const view = await callOk(client, "trace.external_get", {
          run_id: runId,
        });
        assert.equal(view.state, "interrupted");
        assert.equal(view.verdict, "INCONCLUSIVE");
        assert.equal(view.findings, null);
        const checkpoint = view.checkpoint as {
          issued: { test: string[]; control: string[] };
        };
        assert.equal(checkpoint.issued.test.length, 2);
        assert.equal(checkpoint.issued.control.length, 1);
        assert.match(String(view.next), /never PASS/);
        assert.match(
          await callError(client, "trace.external_save", { run_id: runId }),
          /it never completed/,
        );
      });
    }),
});

Deno.test({
  name:
    "over stdio: trace queries are bound to the local scope of the flags (anonymous by default)",
  ...CHILD_PROCESS,
  fn: async () => {
    await withTempDir(async (dir) => {
      const db = await openDb({ dataDir: dir });
      try {
        await migrate(db, ALL_MIGRATIONS);
        await ingestEvents(
          db,
          [
            ["a-anon", "app-a", null],
            ["a-user", "app-a", "u1"],
            ["b-anon", "app-b", null],
          ].map(([id, app, user]) => ({
            event_id: id,
            application_id: app,
            user_id: user,
            agent_id: "agent-1",
            kind: "retrieval",
          })),
        );
      } finally {
        db.close();
      }
      const ids = (answer: Record<string, unknown>) =>
        (answer.events as { event_id: string }[]).map((e) => e.event_id)
          .sort();

      const anonymous = await launchSpec([
        "--data-dir",
        dir,
        "--allow-trace-queries",
      ]);
      await withStdio(anonymous, async (client) => {
        const answer = await callOk(client, "trace.query_traces");
        assert.deepEqual(ids(answer), ["a-anon", "b-anon"]);
        assert.match(
          await callError(client, "trace.query_traces", { user_id: "u1" }),
          /outside this principal's trace scope \(anonymous users\)/,
        );
      });

      const appA = await launchSpec([
        "--data-dir",
        dir,
        "--allow-trace-queries",
        "--application",
        "app-a",
        "--user",
        "u1",
      ]);
      await withStdio(appA, async (client) => {
        assert.deepEqual(
          ids(await callOk(client, "trace.query_traces")),
          ["a-user"],
        );
        assert.match(
          await callError(client, "trace.query_traces", {
            application_id: "app-b",
          }),
          /application_id "app-b" is outside this principal's trace scope \(application "app-a"\)/,
        );
      });
    });
  },
});

Deno.test({
  name:
    "over stdio: stdin closed while a run runs cancels it, cleans up, and says so on stderr with the outcome",
  ...CHILD_PROCESS,
  fn: () =>
    withSlowTarget(async (dir) => {
      const { code, answers, err } = await mcpLines(
        ["--data-dir", dir],
        lines([
          ...INITIALIZE,
          {
            jsonrpc: "2.0",
            id: 2,
            method: "tools/call",
            params: {
              name: "trace.external_start",
              arguments: { target_id: "slow-staging" },
            },
          },
        ]),
      );
      assert.equal(code, 0, err);
      const started = answers.find((answer) => answer.id === 2) as {
        result: { structuredContent: { run_id: string } };
      };
      const runId = started.result.structuredContent.run_id;
      assert.match(
        err,
        new RegExp(
          `stdin closed while run ${runId} was running: it is cancelled and cleans up before exiting`,
        ),
      );
      assert.match(
        err,
        new RegExp(
          `run ${runId} ended INCONCLUSIVE; cleanup complete \\(trace external-show ${runId}\\)`,
        ),
      );
      const shown = captureIo();
      await main(
        ["external-show", runId, "--json", "--data-dir", dir],
        shown,
      );
      const view = JSON.parse(shown.stdout());
      assert.equal(view.verdict, "INCONCLUSIVE");
      assert.equal(view.report.cleanup.cleanup_complete, true);
      assert.equal(view.report.state, "interrupted");
    }),
});

Deno.test("trace mcp-config refuses a --db URL with credentials or a query before it lands in a config", async () => {
  for (
    const url of [
      "libsql://u:pw@db.example",
      "libsql://db.example?authToken=tok123",
    ]
  ) {
    for (const flags of [[], ["--json"]]) {
      const io = captureIo();
      assert.equal(await main(["mcp-config", "--db", url, ...flags], io), 2);
      const all = io.stdout() + io.stderr();
      assert.match(
        all,
        /put no credentials or query in --db; set TRACE_DB_AUTH_TOKEN instead/,
      );
      assert.ok(!/pw|tok123/.test(all), all);
    }
  }
});

/**
 * What `trace mcp`, launched as `trace mcp-config` prints for `flags` (its
 * environment block included, then `env`), answered to `input` written at
 * once to its stdin, which is then closed.
 */
async function mcpLines(
  flags: string[],
  input: string,
  env: Record<string, string> = {},
): Promise<{ code: number; answers: Record<string, unknown>[]; err: string }> {
  const spec = await launchSpec(flags);
  const child = new Deno.Command(spec.command, {
    args: spec.args,
    env: { ...spec.env, NO_COLOR: "1", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    // A server that never exits fails the test instead of hanging it.
    signal: AbortSignal.timeout(60_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const out = new TextDecoder().decode(stdout).trim();
  return {
    code,
    answers: out === "" ? [] : out.split("\n").map((line) => JSON.parse(line)),
    err: new TextDecoder().decode(stderr),
  };
}

const INITIALIZE = [
  INITIALIZE_REQUEST,
  { jsonrpc: "2.0", method: "notifications/initialized" },
];

const lines = (messages: unknown[]) =>
  messages.map((message) => `${JSON.stringify(message)}\n`).join("");

async function referenceRunsIn(dir: string): Promise<number> {
  const db = await openDb({ dataDir: dir });
  try {
    const stored = await db.client.execute(
      "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'reference_run'",
    );
    return Number(stored.rows[0]!.n);
  } finally {
    db.close();
  }
}

Deno.test("trace mcp answers a line that is not JSON, or not JSON-RPC, with an error and says so on stderr", async () => {
  await withTempDir(async (dir) => {
    const { answers, err } = await mcpLines(
      ["--data-dir", dir],
      'not json\n{"hello":1}\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n' +
        '{"id":5,"method":"ping"}\n{"jsonrpc":"2.0","hello":1}\n[]\n' +
        '{"jsonrpc":"2.0","id":6,"method":"ping","params":[]}\n',
    );
    // Answers come as each is ready, the ping's after the refusals.
    assert.deepEqual(
      answers.map((a) => [a.id, (a.error as { code: number })?.code]).sort(),
      [
        [null, -32600],
        [null, -32600],
        [null, -32600],
        [null, -32700],
        [
          1,
          undefined,
        ],
        [5, -32600],
        [6, -32600],
      ],
    );
    const messages = answers.map((a) =>
      (a.error as { message: string } | undefined)?.message
    );
    const invalid = (line: number) =>
      `Invalid Request: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got an object without "jsonrpc") at line ${line} of stdin`;
    for (
      const message of [
        "Parse error: unexpected character at line 1 of stdin, column 1",
        // No "jsonrpc": "2.0": answered before the SDK (line 4 with its id 5).
        invalid(2),
        invalid(4),
        // No request, notification or response: the same (line 7 with its id 6).
        'Invalid Request: a JSON-RPC 2.0 message has "method" (a request or notification) or "result" or "error" (a response) (got none of them) at line 5 of stdin',
        'Invalid Request: "params" is an object of named parameters (got an array) at line 7 of stdin',
      ]
    ) assert.ok(messages.includes(message), message);
    // Every batch (the stdio transport takes none, so not the empty one
    // either) is answered by the SDK.
    assert.equal(
      messages.filter((m) =>
        m?.startsWith(
          "Invalid Request: a line on stdin is not a JSON-RPC message",
        )
      ).length,
      1,
    );
    assert.match(
      err,
      /trace mcp: line 1 of stdin refused: unexpected character at column 1\n/,
    );
    assert.match(
      err,
      /trace mcp: line 4 of stdin refused: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" \(got an object without "jsonrpc"\)\n/,
    );
    assert.match(err, /trace mcp: a line on stdin is not a JSON-RPC message/);
  });
});

Deno.test("trace mcp refuses a line that gives a key twice, as /mcp does, and answers the lines around it", async () => {
  await withTempDir(async (dir) => {
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir],
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\n' +
        '{"jsonrpc":"2.0","id":2,"method":"ping","id":3}\r\n' +
        '{"jsonrpc":"2.0","id":4,"method":"ping"}\r\n',
    );
    assert.equal(code, 0, err);
    assert.deepEqual(
      answers.map((a) => [a.id, (a.error as { code: number })?.code]).sort(),
      [[null, -32700], [1, undefined], [4, undefined]],
    );
    const refusal = answers.find((a) => a.id === null)!;
    assert.equal(
      (refusal.error as { message: string }).message,
      "Parse error: a key given twice at line 2 of stdin, column 41",
    );
    assert.match(
      err,
      /trace mcp: line 2 of stdin refused: a key given twice at column 41\n/,
    );
  });
});

/** A `trace.reference_run` call of every system, with request id `id`. */
const REFERENCE_RUN_AS = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "trace.reference_run", arguments: {} },
});

const REFERENCE_RUN = REFERENCE_RUN_AS(2);

Deno.test("trace mcp finishes a tool call in progress when its client closes stdin, and says so", async () => {
  await withTempDir(async (dir) => {
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir],
      lines([...INITIALIZE, REFERENCE_RUN]),
    );
    assert.equal(code, 0, err);
    assert.match(
      err,
      /trace mcp: stdin closed; finishing 1 tool call\(s\) in progress before exiting/,
    );
    const run = answers.find((answer) => answer.id === 2) as {
      result?: { isError?: boolean; structuredContent: { rows: unknown[] } };
    };
    assert.ok(run?.result, `no answer to the run: ${JSON.stringify(answers)}`);
    assert.equal(run.result.isError, undefined, JSON.stringify(run.result));
    const systems = run.result.structuredContent.rows.length;
    assert.ok(systems > 1);
    assert.equal(
      await referenceRunsIn(dir),
      systems,
      `every run recorded; ${err}`,
    );
  });
});

Deno.test("trace mcp also waits for a call its client cancelled, which gets no answer, then exits", async () => {
  await withTempDir(async (dir) => {
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir],
      lines([
        ...INITIALIZE,
        REFERENCE_RUN,
        {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 2 },
        },
      ]),
    );
    assert.equal(code, 0, err);
    assert.equal(answers.find((answer) => answer.id === 2), undefined);
    const recorded = await referenceRunsIn(dir);
    assert.ok(
      recorded > 1,
      `the cancelled run still recorded all: ${recorded}`,
    );
  });
});

Deno.test("trace mcp refuses a line over 1 MiB with -32000 and its id, skips it, ignores blank lines, and answers the next", async () => {
  await withTempDir(async (dir) => {
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "trace.external_get",
        arguments: { run_id: "a".repeat(11_000_000) },
      },
    });
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir],
      lines(INITIALIZE) + `${huge}\n\n\r\n` +
        lines([{ jsonrpc: "2.0", id: 3, method: "ping" }]),
    );
    assert.equal(code, 0, err);
    assert.deepEqual(
      answers.map((a) => [a.id, (a.error as { code: number })?.code]).sort(),
      [[1, undefined], [2, -32000], [3, undefined]],
    );
    const refusal = answers.find((a) => a.id === 2)!;
    assert.equal(
      (refusal.error as { message: string }).message,
      "Request too large at line 3 of stdin: the message exceeds 1048576 bytes; send smaller tool arguments",
    );
    assert.match(
      err,
      /trace mcp: line 3 of stdin refused: the message exceeds 1048576 bytes; send smaller tool arguments\n/,
    );
    assert.doesNotMatch(err, /ReadBuffer/);
  });
});

Deno.test("trace mcp answers 60 tool calls in flight at once, none failed for want of a database connection", async () => {
  await withTempDir(async (dir) => {
    const calls = Array.from({ length: 60 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 2,
      method: "tools/call",
      params: { name: "trace.external_runs", arguments: {} },
    }));
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir],
      lines([...INITIALIZE, ...calls]),
    );
    assert.equal(code, 0, err);
    const results = answers.filter((a) => a.id !== 1) as {
      result?: { isError?: boolean };
    }[];
    assert.equal(results.length, calls.length);
    assert.deepEqual(
      results.filter((a) => a.result?.isError !== undefined),
      [],
      err,
    );
    assert.doesNotMatch(err, /internal error|TRANSACTION_ACTIVE/);
  });
});

Deno.test("trace mcp honours TRACE_UI_READ_ONLY as trace serve does: only reading tools, writes refused with the reason", async () => {
  await withTempDir(async (dir) => {
    const spec = await launchSpec(["--data-dir", dir, "--read-only"]);
    assert.deepEqual(spec.env, { TRACE_UI_READ_ONLY: "true" });
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir, "--read-only"],
      lines([
        ...INITIALIZE,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        REFERENCE_RUN_AS(3),
      ]),
    );
    assert.equal(code, 0, err);
    const [initialized, listed, refused] = [1, 2, 3].map((id) =>
      answers.find((answer) => answer.id === id) as {
        result: {
          instructions: string;
          tools: { name: string }[];
          isError?: boolean;
          content: { text: string }[];
        };
      }
    );
    const names = listed!.result.tools.map((tool) => tool.name);
    const writes = [
      "trace.external_start",
      "trace.external_save",
      "trace.external_replay",
      "trace.reference_run",
    ];
    assert.ok(names.includes("trace.external_runs"), names.join());
    assert.deepEqual(names.filter((name) => writes.includes(name)), []);
    assert.equal(refused!.result.isError, true);
    assert.equal(
      refused!.result.content[0]!.text,
      "trace.reference_run: This server is read-only (TRACE_UI_READ_ONLY=true): starting runs and saving regressions is refused",
    );
    assert.match(
      initialized!.result.instructions,
      /Not offered: trace\.external_start, trace\.external_save, trace\.external_replay, trace\.reference_run \(this server is read-only \(TRACE_UI_READ_ONLY=true\)/,
    );
    assert.match(
      err,
      /13 tools on stdio .*; read-only: every tool that writes is refused \(TRACE_UI_READ_ONLY=true\)/,
    );
    assert.equal(await referenceRunsIn(dir), 0, "nothing was recorded");
  });
});

Deno.test("trace mcp refuses a TRACE_UI_READ_ONLY that is neither true nor false before it serves, as trace serve does", async () => {
  for (const value of ["yes", "TRUE", "1"]) {
    await withTempDir(async (dir) => {
      const io = captureIo("", { TRACE_UI_READ_ONLY: value });
      assert.equal(await main(["mcp", "--data-dir", dir], io), 2, value);
      assert.match(
        io.stderr(),
        /TRACE_UI_READ_ONLY must be true or false, got .*; set it to true to refuse every write/,
      );
    });
  }
});

Deno.test("trace mcp refuses a target whose token_env its client did not give it, saying to add the variable to the env of the client's entry", async () => {
  await withTempDir(async (dir) => {
    await registerTokenTarget(dir, "staging-token", "TRACE_TEST_UNSET_TOKEN");
    const call = (id: number, name: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: { target_id: "staging-token" } },
    });
    const { code, answers, err } = await mcpLines(
      ["--data-dir", dir],
      lines([
        ...INITIALIZE,
        call(2, "trace.external_plan"),
        call(3, "trace.external_start"),
      ]),
    );
    assert.equal(code, 0, err);
    for (const id of [2, 3]) {
      const { result } = answers.find((answer) => answer.id === id) as {
        result: { isError?: boolean; content: { text: string }[] };
      };
      assert.equal(result.isError, true);
      assert.equal(
        result.content[0]!.text,
        'Cannot read bearer token: environment variable TRACE_TEST_UNSET_TOKEN is unset or empty; trace mcp has only the environment its MCP client started it with: add "env": {"TRACE_TEST_UNSET_TOKEN": "…"} to the client\'s configuration entry for the trace server (trace mcp-config prints that entry), then restart the server from the client',
      );
    }
  });
});
