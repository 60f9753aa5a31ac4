/** The `trace` command end to end: demo + external-run in child processes, and config refusals. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import {
  captureIo,
  listedTargetIds,
  withListeningChild,
  withTempDir,
} from "./_helpers.ts";
import { withCountingListener } from "./_tcp_servers.ts";
import { interruptedCheckpoint } from "./browser/_runs.ts";
import { checkpointDir } from "../lib/runner/checkpoint.ts";
import { join } from "node:path";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

function trace(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  });
}

async function withDemoProcess<T>(
  defect: string | null,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  const args = ["demo", "--port", "0", "--quiet", "--defect-delay-ms", "300"];
  if (defect) args.push("--defect", defect);
  return await withListeningChild(trace(args), fn);
}

async function writeConfig(
  dir: string,
  baseUrl: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const path = `${dir}/staging.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      base_url: baseUrl,
      environment: "staging",
      allow_synthetic_writes: true,
      deletion_window_seconds: 1,
      sample_interval_seconds: 0.25,
      ...extra,
    }),
  );
  return path;
}

Deno.test("trace external-run passes the healthy demo with exit 0 and complete cleanup", async () => {
  await withTempDir(async (dir) => {
    await withDemoProcess(null, async (url) => {
      const config = await writeConfig(dir, url);
      const out = await trace([
        "external-run",
        "--config",
        config,
        "--json",
        "--data-dir",
        dir,
      ]).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stderr);
      const report = JSON.parse(new TextDecoder().decode(out.stdout));
      assert.equal(report.verdict, "PASS");
      assert.equal(report.cleanup.cleanup_complete, true);
      assert.match(
        stderr,
        new RegExp(`checkpoint: ${dir}/external/${report.run_id}\\.json`),
      );
    });
  });
});

Deno.test("trace external-run fails the stale-cache demo with exit 1 and cleanup_complete false", async () => {
  await withTempDir(async (dir) => {
    await withDemoProcess("stale-cache", async (url) => {
      const config = await writeConfig(dir, url);
      const output = `${dir}/report.json`;
      const out = await trace([
        "external-run",
        "--config",
        config,
        "--json",
        "--data-dir",
        dir,
        "--output",
        output,
      ])
        .output();
      assert.equal(out.code, 1, new TextDecoder().decode(out.stderr));
      const report = JSON.parse(await Deno.readTextFile(output));
      assert.equal(report.verdict, "FAIL");
      assert.equal(report.cleanup.cleanup_complete, false);
      assert.deepEqual(
        JSON.parse(new TextDecoder().decode(out.stdout)),
        report,
      );
    });
  });
});

const BAD_CONFIGS: [string, Record<string, unknown>, RegExp][] = [
  [
    "an unknown key close to none",
    { retries: 3 },
    /retries: unknown key; remove it \(see fixtures\/staging-adapter\.json for the allowed keys\)$/m,
  ],
  [
    "a key without its unit",
    { deletion_window: 5 },
    /deletion_window: unknown key \(did you mean deletion_window_seconds\?\); rename or remove it \(see fixtures\/staging-adapter\.json/,
  ],
  [
    // The unknown key is named, not the required one it stands in for.
    "a key without its qualifier, in place of a required one",
    { base_url: undefined, url: "http://127.0.0.1:9" },
    /url: unknown key \(did you mean base_url\?\); rename or remove it/,
  ],
  [
    // Three keys end in _seconds: no one of them is suggested.
    "a qualifier that several keys end in",
    { seconds: 5 },
    /seconds: unknown key; remove it \(see fixtures\/staging-adapter\.json for the allowed keys\)$/m,
  ],
  [
    "a mistyped key",
    { enviroment: "staging" },
    /enviroment: unknown key \(did you mean environment\?\)/,
  ],
  [
    "a mistyped timeout key",
    { timeout_seconds: { querry: 5 } },
    /timeout_seconds\.querry: unknown key \(did you mean query\?\); rename or remove it \(allowed keys: ingest, query, inventory, delete\)/,
  ],
  [
    "a non-staging environment",
    { environment: "production" },
    /environment: must be "staging"/,
  ],
  [
    "writes not allowed",
    { allow_synthetic_writes: false },
    /allow_synthetic_writes: must be true/,
  ],
  [
    "credentials in the URL",
    { base_url: "http://user:pw@127.0.0.1:9" },
    /base_url: must not contain credentials/,
  ],
  ["plain HTTP to a non-loopback host", {
    base_url: "http://staging.example.com",
  }, /base_url: plain http/],
  ["a window shorter than the interval", {
    deletion_window_seconds: 1,
    sample_interval_seconds: 2,
  }, /sample_interval_seconds: must not exceed/],
  [
    "a token over plain HTTP",
    { token_env: "STAGING_TOKEN" },
    /token_env: requires an https/,
  ],
  [
    "a boolean document count",
    { document_count: true },
    /document_count: must be an integer/,
  ],
  [
    "an interval under 50 ms",
    { sample_interval_seconds: 0.001 },
    /sample_interval_seconds: must be at least 0\.05/,
  ],
  [
    "a window of more than 10,000 samples",
    { deletion_window_seconds: 3600, sample_interval_seconds: 0.1 },
    /sample_interval_seconds: gives more than 10000 samples/,
  ],
];

Deno.test("trace external-run refuses bad configs with one line, exit 2 and no request", async (t) => {
  for (const [name, override, message] of BAD_CONFIGS) {
    await t.step(name, async () => {
      await withTempDir(async (dir) => {
        await withCountingListener(async (url, count) => {
          const config = await writeConfig(dir, url, override);
          const io = captureIo();
          const code = await main([
            "external-run",
            "--config",
            config,
            "--data-dir",
            dir,
          ], io);
          assert.equal(code, 2);
          assert.match(io.stderr(), message);
          assert.equal(io.stderr().trim().split("\n").length, 1, io.stderr());
          assert.equal(count(), 0);
        });
      });
    });
  }
});

Deno.test("trace external-run says in a few words why a config file cannot be used", async () => {
  await withTempDir(async (dir) => {
    const array = `${dir}/array.json`;
    await Deno.writeTextFile(array, "[1, 2]");
    const bom = `${dir}/bom.json`;
    await Deno.writeTextFile(
      bom,
      '\uFEFF{"base_url":"http://127.0.0.1:9","environment":"staging","allow_synthetic_writes":true}',
    );
    const cases: [string, string][] = [
      [`${dir}/missing.json`, "no such file; check the path"],
      [dir, "it is a directory; name a file"],
      [array, "must be a JSON object"],
      [bom, "starts with a byte-order mark; save it as UTF-8 without BOM"],
    ];
    for (const [path, words] of cases) {
      const io = captureIo();
      const code = await main([
        "external-run",
        "--config",
        path,
        "--data-dir",
        `${dir}/data`,
      ], io);
      assert.equal(code, 2, path);
      assert.match(
        io.stderr(),
        /^trace external-run: (Cannot read|Invalid) config /,
      );
      assert.ok(io.stderr().trimEnd().endsWith(words), io.stderr());
      assert.doesNotMatch(io.stderr(), /os error|readfile/);
    }
  });
});

Deno.test("trace external-run with an unset token_env sends nothing and registers nothing", async () => {
  await withTempDir(async (dir) => {
    await withCountingListener(async (url, count) => {
      const https = url.replace("http:", "https:");
      const other = await writeConfig(dir, https);
      const data = ["--data-dir", `${dir}/data`];
      const registered = captureIo();
      assert.equal(
        await main([
          "external-register",
          "--target",
          "existing",
          "--config",
          other,
          ...data,
        ], registered),
        0,
        registered.stderr(),
      );
      const config = await writeConfig(dir, https, {
        token_env: "TRACE_TEST_UNSET_TOKEN",
      });
      const io = captureIo();
      const code = await main([
        "external-run",
        "--config",
        config,
        "--output",
        `${dir}/out.json`,
        ...data,
      ], io);
      assert.equal(code, 2);
      assert.match(io.stderr(), /TRACE_TEST_UNSET_TOKEN is unset or empty/);
      assert.equal(io.stderr().trim().split("\n").length, 1, io.stderr());
      assert.equal(count(), 0);
      await assert.rejects(
        () => Deno.stat(`${dir}/out.json`),
        Deno.errors.NotFound,
      );
      assert.deepEqual(await listedTargetIds(data), ["existing"]);
    });
  });
});

Deno.test("trace external-run refuses duplicate keys and reads the config from stdin", async () => {
  await withTempDir(async (dir) => {
    const io = captureIo(
      '{"base_url":"http://127.0.0.1:9","base_url":"http://127.0.0.1:8"}',
    );
    assert.equal(
      await main(["external-run", "--config", "-", "--data-dir", dir], io),
      2,
    );
    assert.match(io.stderr(), /config \(stdin\): not valid JSON .*duplicate/i);
  });
});

Deno.test("trace external-plan sends nothing and states the request budget", async () => {
  await withTempDir(async (dir) => {
    await withCountingListener(async (url, count) => {
      const config = await writeConfig(dir, url);
      const io = captureIo();
      assert.equal(
        await main(["external-plan", "--config", config, "--json"], io),
        0,
      );
      const plan = JSON.parse(io.stdout());
      assert.equal(plan.timing.samples, 5);
      // Cleanup: two deletes, then up to one poll per sample (two inventories, two marker queries).
      assert.equal(plan.request_budget.max_requests, 4 + 4 + 1 + 20 + 2 + 20);
      assert.match(plan.namespaces.test, /^trace-test-/);
      assert.equal(count(), 0);
    });
  });
});

Deno.test("trace external-plan refuses a token_env naming an unset variable, as a run does, with the remedy a registered target allows", async () => {
  await withTempDir(async (dir) => {
    const config = await writeConfig(dir, "https://staging.example.test", {
      token_env: "TRACE_TEST_UNSET_TOKEN",
    });
    const data = ["--data-dir", `${dir}/data`];
    const words =
      "trace external-plan: Cannot read bearer token: environment variable TRACE_TEST_UNSET_TOKEN is unset or empty; set it or remove token_env\n";
    const byConfig = captureIo();
    assert.equal(
      await main(["external-plan", "--config", config, ...data], byConfig),
      2,
    );
    assert.equal(byConfig.stderr(), words);
    assert.equal(byConfig.stdout(), "");
    const registered = captureIo();
    assert.equal(
      await main([
        "external-register",
        "--target",
        "tokened",
        "--config",
        config,
        ...data,
      ], registered),
      0,
      registered.stderr(),
    );
    // A registered target keeps its config: the remedy is to set the variable.
    const registeredWords =
      'Cannot read bearer token: environment variable TRACE_TEST_UNSET_TOKEN is unset or empty; set TRACE_TEST_UNSET_TOKEN to the staging token where this command runs (target "tokened" keeps the config it was registered with; to run without a token, register a config without token_env under a new id)\n';
    for (const command of ["external-plan", "external-run"]) {
      const byTarget = captureIo();
      assert.equal(
        await main([command, "--target", "tokened", ...data], byTarget),
        2,
      );
      assert.equal(byTarget.stderr(), `trace ${command}: ${registeredWords}`);
    }
    // A cleanup of a run of it reads the same stored config.
    const listing = captureIo();
    await main(["external-targets", "--json", ...data], listing);
    const { config_digest } = JSON.parse(listing.stdout()).targets[0];
    const checkpoint = await interruptedCheckpoint(`${dir}/data`, "tokened");
    await Deno.writeTextFile(
      join(checkpointDir(`${dir}/data`), `${checkpoint.run_id}.json`),
      JSON.stringify({ ...checkpoint, config_digest }),
    );
    const cleanup = captureIo();
    assert.equal(
      await main(["external-cleanup", checkpoint.run_id, ...data], cleanup),
      2,
    );
    assert.equal(
      cleanup.stderr(),
      `trace external-cleanup: ${registeredWords}`,
    );
    // Set, the same config plans.
    const set = captureIo("", { TRACE_TEST_UNSET_TOKEN: "t0ken" });
    assert.equal(
      await main(["external-plan", "--target", "tokened", ...data], set),
      0,
      set.stderr(),
    );
    assert.match(set.stdout(), /^Plan for tokened /);
  });
});

Deno.test("trace external-plan names a huge token_env clipped, and says what to do with a token holding spaces", async () => {
  await withTempDir(async (dir) => {
    const name = `T${"A".repeat(5000)}`;
    const huge = await writeConfig(dir, "https://staging.example.test", {
      token_env: name,
    });
    const io = captureIo();
    assert.equal(await main(["external-plan", "--config", huge], io), 2);
    assert.match(
      io.stderr(),
      /environment variable TA{79}… \(5001 characters\) is unset or empty; set it or remove token_env\n$/,
    );
    const spaced = await writeConfig(dir, "https://staging.example.test", {
      token_env: "TRACE_TEST_SPACED_TOKEN",
    });
    const set = captureIo("", { TRACE_TEST_SPACED_TOKEN: "Bearer t0ken" });
    assert.equal(await main(["external-plan", "--config", spaced], set), 2);
    assert.match(
      set.stderr(),
      /TRACE_TEST_SPACED_TOKEN: it contains spaces or non-ASCII characters; set the variable to the token alone\n$/,
    );
  });
});

Deno.test("trace with an unknown command or flag exits 2 with a hint", async () => {
  const io = captureIo();
  assert.equal(await main(["external-runn"], io), 2);
  assert.match(
    io.stderr(),
    /unknown command "external-runn"; did you mean "external-run"\?/,
  );
  const flags = captureIo();
  assert.equal(await main(["external-plan", "--confg", "x"], flags), 2);
  assert.match(flags.stderr(), /--confg/);
});
