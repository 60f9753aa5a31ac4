/**
 * `/mcp` on the server app with the official SDK's streamable HTTP client,
 * served on an ephemeral loopback port: the documented tools, the full flow
 * against the demo app, and refusal of unauthenticated and cross-origin
 * requests.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type DemoServer, startDemoServer } from "../cli/demo.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { RunJobs } from "../lib/runs/mod.ts";
import { type AppOptions, createApp } from "../routes/app.ts";
import {
  SERVE_UNSET_TOKEN_REFUSAL,
  serveWithoutTokenVariable,
  withDb,
  withListeningChild,
  withServer,
  withTempDir,
} from "./_helpers.ts";
import {
  assertDocumentedTools,
  callError,
  callOk,
  fullFlow,
  INITIALIZE_REQUEST,
  registerThroughCli,
  writeConfig,
} from "./mcp_support.ts";

const TOKEN = "mcp-test-token-0123456789";

interface Served {
  url: URL;
  dataDir: string;
}

/** The app with `/mcp` on an ephemeral loopback port. */
async function withMcpServer(
  mcp: Partial<NonNullable<AppOptions["mcp"]>>,
  fn: (served: Served) => Promise<void>,
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const jobs = new RunJobs({ db, dataDir, trace: false });
    const app = createApp({
      db,
      log: () => {},
      mcp: { dataDir, jobs, authToken: TOKEN, ...mcp },
    });
    try {
      await withServer(
        app.fetch,
        (server) => fn({ url: new URL(`${server.url}/mcp`), dataDir }),
      );
    } finally {
      await jobs.close();
    }
  });
}

async function connect(
  url: URL,
  headers: Record<string, string>,
): Promise<Client> {
  const client = new Client({ name: "trace-test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers } }),
  );
  return client;
}

const BEARER = { Authorization: `Bearer ${TOKEN}` };

/** Posts `body` to `/mcp` as an authenticated client; the status and the JSON answer (`null` for none). */
async function postMcp(url: URL, body: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      ...BEARER,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    json: text === "" ? null : JSON.parse(text),
  };
}

Deno.test("/mcp lists exactly the documented tools to an authenticated client; trace queries only when enabled", async () => {
  await withMcpServer({}, async ({ url }) => {
    const client = await connect(url, BEARER);
    try {
      await assertDocumentedTools(client, false);
    } finally {
      await client.close();
    }
  });
  await withMcpServer({ allowTraceQueries: true }, async ({ url }) => {
    const client = await connect(url, BEARER);
    try {
      await assertDocumentedTools(client, true);
    } finally {
      await client.close();
    }
  });
});

Deno.test("/mcp refuses unauthenticated, wrongly authenticated and cross-origin clients", async () => {
  await withMcpServer({}, async ({ url }) => {
    for (
      const headers of [{}, { Authorization: "Bearer wrong-token-0123456789" }]
    ) {
      await assert.rejects(
        connect(url, headers),
        /Missing or wrong bearer token/,
      );
    }
    await assert.rejects(
      connect(url, { ...BEARER, Origin: "http://evil.example" }),
      /Cross-origin requests are refused/,
    );
    await assert.rejects(
      connect(url, { ...BEARER, "Sec-Fetch-Site": "cross-site" }),
      /Cross-origin requests are refused/,
    );

    const post = (headers: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(INITIALIZE_REQUEST),
      });
    const anonymous = await post({});
    assert.equal(anonymous.status, 401);
    assert.equal(
      anonymous.headers.get("www-authenticate"),
      'Bearer realm="trace"',
    );
    await anonymous.body?.cancel();
    const foreign = await post({ ...BEARER, Origin: "https://evil.example" });
    assert.equal(foreign.status, 403);
    await foreign.body?.cancel();
    const ok = await post(BEARER);
    assert.equal(ok.status, 200);
    assert.equal(
      (await ok.json()).result.serverInfo.name,
      "trace",
    );
    const stream = await fetch(url, { headers: BEARER });
    assert.equal(stream.status, 405);
    await stream.body?.cancel();
  });
});

Deno.test("/mcp answers malformed tool calls and bodies with JSON-RPC errors that say what is wrong", async () => {
  await withMcpServer({}, async ({ url }) => {
    const send = (body: string) => postMcp(url, body);
    const call = (params: unknown) =>
      send(
        JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }),
      );
    for (
      const [params, message] of [
        [
          { name: "trace.list_targets", arguments: "all" },
          /^Invalid params: tools\/call needs params.arguments, an object .*\(got a string\)/,
        ],
        [
          { name: "trace.list_targets", arguments: [1] },
          /\(got an array\)/,
        ],
        [{ name: 42 }, /params.name, a string \(got a number\)/],
        [{ name: {} }, /params.name, a string \(got an object\)/],
        [{ arguments: {} }, /params.name, a string \(got nothing\)/],
        [
          {
            name: "trace.list_targets",
            arguments: JSON.parse('{"__proto__": {"all": true}}'),
          },
          /arguments give "__proto__", which is no argument of any tool; remove it$/,
        ],
      ] as const
    ) {
      const { status, json } = await call(params);
      assert.equal(status, 200);
      assert.equal(json.id, 7);
      assert.equal(json.error.code, -32602, JSON.stringify(json));
      assert.match(json.error.message, message);
    }
    const twice = await send(
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}',
    );
    assert.equal(twice.status, 400);
    assert.equal(twice.json.error.code, -32700);
    assert.match(
      twice.json.error.message,
      /key given twice at line 1, column \d+/,
    );
    const cut = await send('{"jsonrpc":"2.0",');
    assert.equal(cut.json.error.code, -32700);
    assert.doesNotMatch(cut.json.error.message, /syntax|_/);
    const deep = await send(`${"[".repeat(200)}${"]".repeat(200)}`);
    assert.equal(deep.json.error.code, -32700);
    assert.match(deep.json.error.message, /^Parse error: .*nest.* at line 1/);
    // A well-formed call still reaches the tool.
    const listed = await call({ name: "trace.list_targets", arguments: {} });
    assert.equal(listed.status, 200);
    assert.equal(listed.json.error, undefined, JSON.stringify(listed.json));
  });
});

Deno.test('/mcp answers a message without "jsonrpc": "2.0", and an empty batch, with Invalid Request', async () => {
  await withMcpServer({}, async ({ url }) => {
    for (
      const [body, id, got] of [
        ['{"id":7,"method":"tools/list"}', 7, 'an object without "jsonrpc"'],
        [
          '{"jsonrpc":"1.0","id":"a-1","method":"ping"}',
          "a-1",
          '"jsonrpc" with another version',
        ],
        ['{"jsonrpc":2,"id":3,"method":"ping"}', 3, '"jsonrpc" as a number'],
        // No valid id to answer with: a fraction, an object, a rounded integer.
        ['{"id":1.5,"method":"ping"}', null, 'an object without "jsonrpc"'],
        ['{"id":{"n":1},"method":"ping"}', null, 'an object without "jsonrpc"'],
        ['{"id":9007199254740993}', null, 'an object without "jsonrpc"'],
        ["42", null, "a number"],
        ["null", null, "null"],
      ] as const
    ) {
      const { status, json } = await postMcp(url, body);
      assert.equal(status, 400, body);
      assert.deepEqual(json, {
        jsonrpc: "2.0",
        id,
        error: {
          code: -32600,
          message:
            `Invalid Request: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got ${got})`,
        },
      }, body);
    }
    // One error for an empty batch, not an empty answer.
    assert.deepEqual(await postMcp(url, " [ ] "), {
      status: 400,
      json: {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message:
            "Invalid Request: the batch is empty; send at least one message",
        },
      },
    });
    // Everything else still goes to the transport, as it did.
    const notifications = await postMcp(
      url,
      '[{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    );
    assert.deepEqual(notifications, { status: 202, json: null });
  });
});

Deno.test("/mcp answers a JSON-RPC 2.0 message that is no request, response or notification with Invalid Request and its id", async () => {
  await withMcpServer({}, async ({ url }) => {
    const only =
      'a request or notification has only "jsonrpc", "id", "method" and "params"';
    for (
      const [body, id, reason] of [
        [
          '{"jsonrpc":"2.0","id":5}',
          5,
          'a JSON-RPC 2.0 message has "method" (a request or notification) or "result" or "error" (a response) (got none of them)',
        ],
        [
          '{"jsonrpc":"2.0","id":"a","method":7}',
          "a",
          '"method" is a string, the name of the method to call (got a number)',
        ],
        [
          '{"jsonrpc":"2.0","method":null}',
          null,
          '"method" is a string, the name of the method to call (got null)',
        ],
        [
          '{"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}',
          6,
          '"params" is an object of named parameters (got an array)',
        ],
        [
          '{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}',
          6,
          '"params" is an object of named parameters (got a string)',
        ],
        [
          '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
          null,
          '"id" is a string or an integer (got a number with a fraction)',
        ],
        [
          '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}',
          null,
          '"id" is a string or an integer (got an integer past ±(2^53 - 1), which a double rounds; send it as a string)',
        ],
        [
          '{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}',
          null,
          '"id" is a string or an integer (got an object)',
        ],
        [
          '{"jsonrpc":"2.0","id":null,"method":"ping"}',
          null,
          '"id" is a string or an integer (got null)',
        ],
        [
          '{"jsonrpc":"2.0","id":8,"method":"ping","extra":1}',
          8,
          `${only} (got 1 other member)`,
        ],
        [
          '{"jsonrpc":"2.0","id":8,"method":"ping","result":{},"error":{}}',
          8,
          `${only} (got 2 other members)`,
        ],
      ] as const
    ) {
      const { status, json } = await postMcp(url, body);
      assert.equal(status, 400, body);
      assert.deepEqual(json, {
        jsonrpc: "2.0",
        id,
        error: { code: -32600, message: `Invalid Request: ${reason}` },
      }, body);
    }
    // Responses still reach the transport, which takes them without an answer.
    for (
      const body of [
        '{"jsonrpc":"2.0","id":5,"result":{}}',
        '{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}',
      ]
    ) {
      assert.deepEqual(await postMcp(url, body), { status: 202, json: null });
    }
    // Valid requests are answered as before.
    assert.deepEqual(
      await postMcp(
        url,
        '{"jsonrpc":"2.0","id":9,"method":"ping","params":{}}',
      ),
      { status: 200, json: { jsonrpc: "2.0", id: 9, result: {} } },
    );
  });
});

Deno.test("/mcp refuses a batch holding a message that is no JSON-RPC 2.0 message with one Invalid Request naming the first", async () => {
  await withMcpServer({}, async ({ url }) => {
    const ping = (id: number) =>
      JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
    for (
      const [body, reason] of [
        [
          "[1]",
          'item [0]: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got a number)',
        ],
        [
          `[${ping(1)},{"id":2,"method":"ping"},{"jsonrpc":"2.0","id":3}]`,
          'item [1]: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got an object without "jsonrpc")',
        ],
        [
          `[${ping(1)},[${ping(2)}]]`,
          'item [1]: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got an array)',
        ],
        [
          `[${ping(1)},{"jsonrpc":"2.0","id":2,"method":"ping","params":[]}]`,
          'item [1]: "params" is an object of named parameters (got an array)',
        ],
      ] as const
    ) {
      const { status, json } = await postMcp(url, body);
      assert.equal(status, 400, body);
      assert.deepEqual(json, {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: the batch was refused whole at ${reason}`,
        },
      }, body);
    }
    // A batch of valid messages is answered as before.
    assert.deepEqual(
      await postMcp(url, `[${ping(1)},${ping(2)}]`),
      {
        status: 200,
        json: [
          { jsonrpc: "2.0", id: 1, result: {} },
          { jsonrpc: "2.0", id: 2, result: {} },
        ],
      },
    );
  });
});

Deno.test("/mcp refuses every request while TRACE_UI_AUTH_TOKEN is unset, and saying so", async () => {
  await withMcpServer({ authToken: undefined }, async ({ url }) => {
    await assert.rejects(
      connect(url, BEARER),
      /set TRACE_UI_AUTH_TOKEN/,
    );
  });
  await withDb((db, dataDir) => {
    assert.throws(
      () =>
        createApp({
          db,
          mcp: {
            dataDir,
            jobs: new RunJobs({ db, dataDir }),
            authToken: "short",
          },
        }),
      /TRACE_UI_AUTH_TOKEN must be at least 16 characters/,
    );
    return Promise.resolve();
  });
});

Deno.test("over HTTP: register (CLI) → start → poll → save → replay after the fix → compare, against the demo app", async () => {
  let demo: DemoServer = await startDemoServer({ defect: "stale-cache" });
  try {
    await withMcpServer({}, async ({ url, dataDir }) => {
      await registerThroughCli(
        dataDir,
        "demo-staging",
        await writeConfig(dataDir, demo.url),
      );
      const client = await connect(url, BEARER);
      try {
        const flow = await fullFlow(client, "demo-staging", async () => {
          const port = demo.port;
          await demo.shutdown();
          demo = await startDemoServer({ port });
        });
        assert.equal(flow.failing.verdict, "FAIL");
        assert.equal(flow.replayed.verdict, "PASS");
        const comparison = flow.comparison as {
          findings: { fixed: unknown[]; still_present: unknown[] };
        };
        assert.ok(comparison.findings.fixed.length >= 2);
        assert.deepEqual(comparison.findings.still_present, []);
      } finally {
        await client.close();
      }
    });
  } finally {
    await demo.shutdown();
  }
});

Deno.test("over HTTP: a second start is refused naming the running run", async () => {
  const demo = await startDemoServer();
  try {
    // Closing the server's job manager cancels the long run; its cleanup still runs.
    await withMcpServer({}, async ({ url, dataDir }) => {
      await registerThroughCli(
        dataDir,
        "slow-staging",
        await writeConfig(dataDir, demo.url, 60),
      );
      const client = await connect(url, BEARER);
      try {
        const started = await callOk(client, "trace.external_start", {
          target_id: "slow-staging",
        });
        // A client on another machine gets paths below the data directory only.
        assert.match(String(started.checkpoint), /^external\/run-[^/]+\.json$/);
        assert.ok(!JSON.stringify(started).includes(dataDir));
        const unknown = await callError(client, "trace.external_get", {
          run_id: "run-20260101T000000Z-000000000000",
        });
        assert.match(unknown, /the server's data directory/);
        assert.ok(!unknown.includes(dataDir), unknown);
        assert.doesNotMatch(unknown, /--data-dir/);
        assert.match(
          await callError(client, "trace.external_start", {
            target_id: "slow-staging",
          }),
          new RegExp(`run ${started.run_id} is still running in this process`),
        );
      } finally {
        await client.close();
      }
    });
  } finally {
    await demo.shutdown();
  }
});

Deno.test("over HTTP: 40 tool calls in flight at once all succeed, each waiting its turn for a database connection", async () => {
  await withMcpServer({}, async ({ url }) => {
    const client = await connect(url, BEARER);
    try {
      const listed = await Promise.all(
        Array.from({ length: 40 }, () => callOk(client, "trace.external_runs")),
      );
      assert.ok(listed.every((answer) => Array.isArray(answer.runs)));
    } finally {
      await client.close();
    }
  });
});

Deno.test("/mcp of trace serve refuses a target whose token_env the server was started without, saying to restart it with the variable set", async () => {
  await withTempDir(async (dir) => {
    const dataDir = `${dir}/data`;
    const command = await serveWithoutTokenVariable(dataDir, TOKEN);
    await withListeningChild(command, async (url) => {
      const client = await connect(new URL(`${url}/mcp`), BEARER);
      try {
        for (const tool of ["trace.external_plan", "trace.external_start"]) {
          assert.equal(
            await callError(client, tool, { target_id: "staging-token" }),
            SERVE_UNSET_TOKEN_REFUSAL,
            tool,
          );
        }
        const runs = await callOk(client, "trace.external_runs");
        assert.deepEqual(runs.runs, [], "nothing was started");
      } finally {
        await client.close();
      }
    });
  });
});
