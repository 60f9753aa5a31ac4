import assert from "node:assert/strict";

const BENCH = new URL("../bench/", import.meta.url);

/** Runs one benchmark with `args`; stops on a bad flag before any work. */
async function bench(file: string, args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(file, BENCH).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

Deno.test("the benchmarks refuse a bad flag with one line naming it, before any work", async (t) => {
  const cases: [string, string[], RegExp][] = [
    [
      "runner_bench.ts",
      ["--max", "5"],
      /^deno task bench takes no options, got --max; usage: deno task bench$/,
    ],
    [
      "ui_bench.ts",
      ["--events", "0"],
      /^--events must be a whole number >= 1, got 0; usage: deno task bench:ui /,
    ],
    [
      "ui_bench.ts",
      ["--", "--runs", "x"],
      /^--runs must be a whole number >= 1, got x; usage: deno task bench:ui /,
    ],
    [
      "ui_bench.ts",
      ["--bogus"],
      /^Unknown option '--bogus'; usage: deno task bench:ui /,
    ],
    [
      "http_bench.ts",
      ["--seconds", "abc"],
      /^--seconds must be a positive number, got abc; usage: deno task bench:http /,
    ],
    [
      "http_bench.ts",
      ["--batches", "50,x"],
      /^--batches must be whole numbers of at least 1, got 50,x; usage: deno task bench:http /,
    ],
    [
      "obs_bench.ts",
      ["--max", "5"],
      /^--max must be a number of at least 10000, got 5; usage: deno task bench:obs /,
    ],
  ];
  for (const [file, args, message] of cases) {
    await t.step(`${file} ${args.join(" ")}`, async () => {
      const { code, stdout, stderr } = await bench(file, args);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, "");
      assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);
      assert.match(stderr.trimEnd(), message);
    });
  }
});

Deno.test("bench:ui says why it leaves out the trace pages under two 500-event roots", async () => {
  const { code, stdout, stderr } = await bench("ui_bench.ts", [
    "--events",
    "1",
    "--runs",
    "1",
    "--samples",
    "1",
  ]);
  assert.equal(code, 0, stderr);
  assert.match(
    stdout,
    /\nTrace pages: not measured; they need two 500-event roots \(--events 1000 or more\)\n/,
  );
});

Deno.test("bench:http says which run its targets are set for when it ran none of it", async () => {
  const { renderTargets } = await import("../bench/http_bench.ts");
  const row = {
    clients: 1,
    batch: 50,
    times: "now" as const,
    seconds: 1,
    requests: 10,
    failed: 0,
    acknowledged: 500,
    eventsPerSecond: 500,
    p50Ms: 1,
    p95Ms: 2,
    p99Ms: 3,
    maxMs: 4,
    rssMb: 50,
    peakRssMb: 60,
    indexedOnce: 500,
    indexedRows: 500,
    distinctIds: 500,
  };
  assert.match(
    renderTargets([row]),
    /^- set for 20 clients and 500-event batches; this run had none/,
  );
  assert.match(
    renderTargets([{ ...row, clients: 20, batch: 500 }]),
    /^- 20 clients, 500-event batches, event times now: 500 events\/s \(>= 50,000: not met\)/,
  );
});
