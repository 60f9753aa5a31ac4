/** `trace serve` with TRACE_UI_AUTH_ACCOUNTS and TRACE_UI_READ_ONLY: refusing a bad configuration, signing accounts in, the start-up lines. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

const ACCOUNTS = JSON.stringify({
  "support-1": {
    token: "support-token-0123456789",
    role: "analyst",
    application_id: "app-1",
  },
  "admin-1": { token: "admin-one-token-0123456789", role: "admin" },
});

/** Runs `trace serve` with `env` until `fn` is done, then stops it like Ctrl-C. */
async function withServe(
  env: Record<string, string>,
  fn: (origin: string, stderr: () => string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const stop = new AbortController();
    const io = { ...captureIo("", env), interrupted: stop.signal };
    const exit = main(["serve", "--port", "0", "--data-dir", dir], io);
    try {
      for (let i = 0; i < 2400 && !io.stderr().includes("mcp: /mcp"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const origin = /listening on (http:\/\/\S+) /.exec(io.stderr())?.[1];
      assert.ok(origin, io.stderr());
      await fn(origin, io.stderr);
    } finally {
      stop.abort();
      assert.equal(await exit, 0, io.stderr());
    }
  });
}

Deno.test("trace serve and trace demo refuse a credential variable set but empty, before touching files", async () => {
  await withTempDir(async (dir) => {
    for (
      const [name, value, message] of [
        [
          "TRACE_INGEST_TOKEN",
          "",
          "trace serve: TRACE_INGEST_TOKEN is set but empty; unset it for an API open on loopback only, or give it a value\n",
        ],
        [
          "TRACE_UI_AUTH_TOKEN",
          "",
          "trace serve: TRACE_UI_AUTH_TOKEN is set but empty; unset it to run without an admin token, or give it a value\n",
        ],
        [
          "TRACE_UI_AUTH_ACCOUNTS",
          "",
          "trace serve: TRACE_UI_AUTH_ACCOUNTS is set but empty; unset it to run without operator accounts, or give it a value\n",
        ],
        [
          "TRACE_UI_AUTH_ACCOUNTS",
          " {} ",
          'trace serve: TRACE_UI_AUTH_ACCOUNTS holds no account; unset it to run without operator accounts, or add one as {"name": {"token": "...", "role": "..."}}\n',
        ],
      ] as const
    ) {
      // Already interrupted: a server that starts anyway stops at once.
      const io = {
        ...captureIo("", { [name]: value }),
        interrupted: AbortSignal.abort(),
      };
      const args = ["serve", "--port", "0", "--data-dir", `${dir}/data`];
      assert.equal(await main(args, io), 2, `${name}=${value}`);
      assert.equal(io.stderr(), message);
    }
    await assert.rejects(Deno.stat(`${dir}/data`), Deno.errors.NotFound);
    const demo = {
      ...captureIo("", { TRACE_INGEST_TOKEN: "" }),
      interrupted: AbortSignal.abort(),
    };
    const code = await main([
      "demo",
      "--port",
      "0",
      "--trace-to",
      "http://127.0.0.1:9/api/events",
    ], demo);
    assert.equal(code, 2);
    assert.equal(
      demo.stderr(),
      "trace demo: TRACE_INGEST_TOKEN is set but empty; unset it to send trace events without a bearer token, or give it a value\n",
    );
  });
});

Deno.test("trace serve and trace mcp refuse an on/off variable set but empty, in one line, before touching files", async () => {
  await withTempDir(async (dir) => {
    for (
      const name of ["TRACE_MCP_ALLOW_TRACE_QUERIES", "TRACE_UI_READ_ONLY"]
    ) {
      for (const command of ["serve", "mcp"]) {
        // Already interrupted: a server that starts anyway stops at once.
        const io = {
          ...captureIo("", { [name]: "" }),
          interrupted: AbortSignal.abort(),
        };
        const args = command === "serve"
          ? ["serve", "--port", "0", "--data-dir", `${dir}/data`]
          : ["mcp", "--data-dir", `${dir}/data`];
        assert.equal(await main(args, io), 2, `${command} ${name}=""`);
        assert.equal(
          io.stderr(),
          `trace ${command}: ${name} is set but empty; set it to true or false, or unset it\n`,
        );
      }
    }
    await assert.rejects(Deno.stat(`${dir}/data`), Deno.errors.NotFound);
  });
});

Deno.test("trace serve refuses a bad TRACE_UI_AUTH_ACCOUNTS in one line naming the account, never the token, before touching files", async () => {
  await withTempDir(async (dir) => {
    for (
      const [accounts, message] of [
        [
          JSON.stringify({ "ops-1": { token: "tiny-secret", role: "admin" } }),
          /^trace serve: TRACE_UI_AUTH_ACCOUNTS: account "ops-1" token must be at least 16 characters with no whitespace\n$/,
        ],
        [
          JSON.stringify({
            "ops-1": { token: "shared-token-0123456789", role: "admin" },
            "ops-2": { token: "shared-token-0123456789", role: "viewer" },
          }),
          /account "ops-2" has the same token as "ops-1"/,
        ],
        ["{not json", /TRACE_UI_AUTH_ACCOUNTS is not valid JSON/],
      ] as const
    ) {
      const io = captureIo("", { TRACE_UI_AUTH_ACCOUNTS: accounts });
      const code = await main([
        "serve",
        "--port",
        "0",
        "--data-dir",
        `${dir}/data`,
      ], io);
      assert.equal(code, 2);
      assert.match(io.stderr(), message);
      assert.ok(
        !io.stderr().includes("tiny-secret") &&
          !io.stderr().includes("shared-token"),
      );
    }
    const ingest = captureIo("", {
      TRACE_INGEST_TOKEN: "support-token-0123456789",
      TRACE_UI_AUTH_ACCOUNTS: ACCOUNTS,
    });
    assert.equal(
      await main(["serve", "--port", "0", "--data-dir", `${dir}/data`], ingest),
      2,
    );
    assert.match(
      ingest.stderr(),
      /account "support-1" has the same token as TRACE_INGEST_TOKEN/,
    );
    const readOnly = captureIo("", { TRACE_UI_READ_ONLY: "yes" });
    assert.equal(
      await main(
        ["serve", "--port", "0", "--data-dir", `${dir}/data`],
        readOnly,
      ),
      2,
    );
    assert.match(readOnly.stderr(), /TRACE_UI_READ_ONLY must be true or false/);
    assert.deepEqual(
      [...Deno.readDirSync(dir)],
      [],
      "no data directory was made",
    );
  });
});

Deno.test("trace serve with accounts: no one-time login, each account signs in with its token, read-only and the open API are announced", async () => {
  await withServe(
    { TRACE_UI_AUTH_ACCOUNTS: ACCOUNTS, TRACE_UI_READ_ONLY: "true" },
    async (origin, stderr) => {
      assert.doesNotMatch(stderr(), /UI login \(works once\)/);
      assert.match(stderr(), /UI accounts: 2 from TRACE_UI_AUTH_ACCOUNTS/);
      assert.match(
        stderr(),
        /warning: tenant-bound accounts are configured but the API is open on loopback; set TRACE_INGEST_TOKEN/,
      );
      assert.match(stderr(), /read-only: every write is refused/);
      assert.match(
        stderr(),
        /mcp trace queries: off; set TRACE_MCP_ALLOW_TRACE_QUERIES=true to offer trace\.query_traces; until then tenant-bound accounts get no MCP tool\n/,
      );
      assert.ok(!stderr().includes("support-token-0123456789"));
      const bound = await fetch(`${origin}/api/events?application_id=app-2`, {
        headers: { authorization: "Bearer support-token-0123456789" },
      });
      assert.equal(bound.status, 403);
      await bound.body?.cancel();
      const ingest = await fetch(`${origin}/api/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "[]",
      });
      assert.equal(ingest.status, 403, "read-only refuses ingest");
      assert.match(await ingest.text(), /read-only/);
      const login = await fetch(`${origin}/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: "admin-one-token-0123456789" }),
        redirect: "manual",
      });
      assert.equal(login.status, 303);
      await login.body?.cancel();
      assert.match(
        login.headers.get("set-cookie") ?? "",
        /^trace_session_\d+=/,
      );
    },
  );
});

Deno.test("trace serve says when MCP trace queries are on", async () => {
  await withServe(
    { TRACE_UI_AUTH_ACCOUNTS: ACCOUNTS, TRACE_MCP_ALLOW_TRACE_QUERIES: "true" },
    (_origin, stderr) => {
      assert.match(
        stderr(),
        /mcp trace queries: on \(trace\.query_traces, TRACE_MCP_ALLOW_TRACE_QUERIES=true\)\n/,
      );
      return Promise.resolve();
    },
  );
});
