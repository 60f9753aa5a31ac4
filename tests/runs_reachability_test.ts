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
  runExternal,
  RunNotStartedError,
} from "../lib/runs/mod.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { CONFIG, withStagingA } from "./_unrecorded.ts";
import { xmlEscape } from "../lib/render/junit.ts";
import {
  captureIo,
  exists,
  listedTargetIds,
  stagingConfig,
  withDb,
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
    // Its registered config cannot change: base_url is not fixed in place.
    assert.match(
      run.stderr(),
      new RegExp(
        `^trace external-run: Cannot reach the staging adapter at ${url}: cannot connect to 127\\.0\\.0\\.1:\\d+: .+; start it; the registered config of target gone cannot change, so if the adapter moved, register its new base_url under a new target id with trace external-register --target NEW_ID --config FILE and run trace external-run --target NEW_ID \\(nothing was run or recorded\\)\\n$`,
      ),
    );
    assert.doesNotMatch(run.stderr(), /fix base_url/);
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

Deno.test("a run that cannot start still writes its --junit and --summary-md saying why, and no report", async (t) => {
  await withTempDir(async (dir) => {
    const url = `http://127.0.0.1:${closedPort()}`;
    const config = await writeConfig(dir, url);
    const data = ["--data-dir", `${dir}/data`];
    const register = captureIo();
    assert.equal(
      await main(
        ["external-register", "--target", "gone", "--config", config, ...data],
        register,
      ),
      0,
      register.stderr(),
    );
    const tokened = `${dir}/tokened.json`;
    await Deno.writeTextFile(
      tokened,
      JSON.stringify({
        ...JSON.parse(await Deno.readTextFile(config)),
        base_url: "https://127.0.0.1:1",
        token_env: "TRACE_TEST_UNSET_TOKEN",
      }),
    );
    const fresh = `${dir}/fresh`;
    const cases: [string, string[], string][] = [
      // Stopped before the outputs were reserved: reserved for the reason.
      [
        "an unreachable adapter, into a fresh data directory",
        ["external-run", "--config", config, "--data-dir", fresh],
        "transport",
      ],
      [
        "an unknown target",
        ["external-run", "--target", "nope", ...data],
        "not_found",
      ],
      // Stopped once the outputs were reserved.
      [
        "an unreachable registered target",
        ["external-run", "--target", "gone", ...data],
        "transport",
      ],
      [
        "a token_env whose variable is unset",
        ["external-run", "--config", tokened, ...data],
        "config_invalid",
      ],
      [
        "a regression that was never saved",
        ["external-replay", "reg-nope", ...data],
        "not_found",
      ],
    ];
    for (const [name, args, code] of cases) {
      await t.step(name, async () => {
        const out = `${dir}/out/${code}-${args[1]}`;
        const io = captureIo();
        assert.equal(
          await main([
            ...args,
            "--junit",
            `${out}.xml`,
            "--summary-md",
            `${out}.md`,
            "--output",
            `${out}.json`,
            "--html",
            `${out}.html`,
          ], io),
          2,
        );
        assert.equal(io.stdout(), "");
        const lines = io.stderr().trimEnd().split("\n");
        // The reason stays the last line, as without result files.
        const reason = lines.at(-1)!.replace(/^trace [a-z-]+: /, "");
        assert.deepEqual(lines.slice(0, -1), [
          `junit: ${out}.xml (the run did not start)`,
          `summary: ${out}.md (the run did not start)`,
        ]);
        const junit = await Deno.readTextFile(`${out}.xml`);
        assert.match(
          junit,
          /<testsuite [^>]*tests="1" failures="0" errors="1"/,
        );
        assert.ok(
          junit.includes(
            `<error message="${xmlEscape(reason)}" type="${code}">`,
          ),
          junit,
        );
        const summary = await Deno.readTextFile(`${out}.md`);
        assert.match(summary, /: did not start\n/);
        assert.match(summary, new RegExp(`\\*\\*Why\\*\\* \\(\`${code}\`\\)`));
        // There is no report to put in these.
        assert.equal(await exists(`${out}.json`), false);
        assert.equal(await exists(`${out}.html`), false);
      });
    }
    assert.deepEqual(await entries(fresh), [], "nothing created");
    assert.deepEqual(
      await entries(`${dir}/data/external`),
      [],
      "no checkpoint",
    );
    const db = await openDb({ dataDir: `${dir}/data` });
    try {
      const rows = await db.client.execute(
        "SELECT kind FROM ledger_entries ORDER BY seq",
      );
      assert.deepEqual(rows.rows.map((r) => String(r.kind)), ["target"]);
    } finally {
      db.close();
    }
  });
});

Deno.test("a run refused on its command line or its output paths writes no result file", async () => {
  await withTempDir(async (dir) => {
    const url = `http://127.0.0.1:${closedPort()}`;
    const config = await writeConfig(dir, url);
    const fresh = ["--data-dir", `${dir}/fresh`];
    const usage = captureIo();
    assert.equal(
      await main([
        "external-run",
        "--config",
        config,
        "--target",
        "gone",
        "--junit",
        `${dir}/usage.xml`,
        ...fresh,
      ], usage),
      2,
    );
    assert.equal(await exists(`${dir}/usage.xml`), false);

    // A file that exists is kept without --force, and the others of the run
    // are not written either: the warning says so, the reason comes last.
    const kept = `${dir}/kept.xml`;
    await Deno.writeTextFile(kept, "mine\n");
    const clash = captureIo();
    assert.equal(
      await main([
        "external-run",
        "--config",
        config,
        "--junit",
        kept,
        "--summary-md",
        `${dir}/clash.md`,
        ...fresh,
      ], clash),
      2,
    );
    assert.equal(await Deno.readTextFile(kept), "mine\n");
    assert.equal(await exists(`${dir}/clash.md`), false);
    const [warning, reason, ...rest] = clash.stderr().split("\n");
    assert.equal(
      warning,
      `warning: Cannot write --junit ${kept}: the file already exists; choose a new path or pass --force to replace it; no result file says why the run did not start`,
    );
    assert.match(
      reason!,
      /^trace external-run: Cannot reach the staging adapter/,
    );
    assert.deepEqual(rest, [""]);

    // --json owns stdout: one JSON object, no XML beside it.
    const json = captureIo();
    assert.equal(
      await main(
        [
          "external-run",
          "--config",
          config,
          "--junit",
          "-",
          "--json",
          ...fresh,
        ],
        json,
      ),
      2,
    );
    assert.equal(JSON.parse(json.stdout()).error.code, "transport");
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

Deno.test("runExternal() stopped during the adapter probe does not start: no checkpoint, no ledger entry, no interrupted run", async () => {
  await withDb(async (db, dir) => {
    await withStagingA(db);
    const clock = new VirtualClock();
    const ctrlC = new AbortController();
    // The Ctrl-C lands while the probe connects.
    const transport = Object.assign(new FakeTarget(clock, {}), {
      probe: () => Promise.resolve(ctrlC.abort()),
    });
    await assert.rejects(
      runExternal(CONFIG, {
        db,
        dataDir: dir,
        target: {
          id: "staging-a",
          base_url: CONFIG.base_url,
          source: "registered",
        },
        transport,
        clock,
        trace: false,
        signal: ctrlC.signal,
      }),
      (error: unknown) =>
        error instanceof RunNotStartedError &&
        /^Interrupted before the run started: nothing was sent/.test(
          error.message,
        ),
    );
    assert.equal(await exists(`${dir}/external`), false, "no checkpoint");
    const rows = await db.client.execute(
      "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'run'",
    );
    assert.equal(Number(rows.rows[0]!.n), 0, "nothing recorded");
  });
});

/** Runs `fn` against a port that accepts connections and never answers (a TLS handshake there hangs). */
async function withSilentPort<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) held.push(conn);
    } catch {
      // Closed at the end of the test.
    }
  })();
  try {
    return await fn(listener.addr.port);
  } finally {
    listener.close();
    for (const conn of held) {
      try {
        conn.close();
      } catch {
        // Already closed by the client.
      }
    }
    await accepting;
  }
}

Deno.test("a Ctrl-C while the adapter probe waits on a handshake ends at once as not started, not after the ingest timeout as unreachable", async () => {
  await withSilentPort(async (port) => {
    // Into a data directory without a database (the check before creating
    // one) and into one with a database (the run's own check).
    for (const withDatabase of [false, true]) {
      await withTempDir(async (dir) => {
        if (withDatabase) {
          assert.equal(
            await main(["obs", "init", "--data-dir", dir], captureIo()),
            0,
          );
        }
        const config = `${dir}/staging.json`;
        await Deno.writeTextFile(
          config,
          JSON.stringify({
            base_url: `https://127.0.0.1:${port}`,
            environment: "staging",
            allow_synthetic_writes: true,
            timeout_seconds: { ingest: 60, query: 5, inventory: 5, delete: 5 },
          }),
        );
        const ctrlC = new AbortController();
        const io = Object.assign(captureIo(), { interrupted: ctrlC.signal });
        const timer = setTimeout(() => ctrlC.abort(), 300);
        const started = performance.now();
        let code: number;
        try {
          code = await main(
            ["external-run", "--config", config, "--data-dir", dir, "--json"],
            io,
          );
        } finally {
          clearTimeout(timer);
        }
        const seconds = (performance.now() - started) / 1000;
        const label = `with a database: ${withDatabase}`;
        assert.ok(
          seconds < 10,
          `${label}: ended after ${seconds.toFixed(1)} s`,
        );
        assert.equal(code, 2, io.stderr());
        assert.match(
          io.stderr(),
          /Interrupted before the run started: nothing was sent to the staging adapter or recorded/,
          label,
        );
        assert.doesNotMatch(io.stderr(), /Cannot reach the staging adapter/);
        assert.equal(JSON.parse(io.stdout()).error.code, "refused", label);
        assert.deepEqual(await entries(`${dir}/external`), [], "no checkpoint");
        assert.equal(
          (await entries(dir)).includes("trace.db"),
          withDatabase,
          `${label}: no database created`,
        );
      });
    }
  });
});
