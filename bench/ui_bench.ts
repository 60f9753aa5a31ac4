/**
 * Trace UI benchmark (`deno task bench:ui`): server time of the index health
 * page and its JSON twin over an index of N events (default 1,000,000),
 * against a floor measured in the same run: the bare `obsHealth` call the
 * page is built on. A last row renders the page from already loaded data,
 * which is the part the UI adds.
 *
 * Then the run pages over a ledger of R runs (default 1,000, `--runs R`),
 * each with its checkpoint file, over the same index: the overview, the
 * runs list, a run's detail (with its requests read from the index) and a
 * target's page, against a floor of the same run: reading every stored
 * run's payload by plain SQL (no digest check, no JSON parse), which any
 * page listing runs has to pay at least once. A third table times the trace pages (finder, inspection of a 500-event
 * root, comparison, events export) against their own floor: one plain
 * SELECT of the inspected root's 500 rows. Requests go through `createApp`
 * in process (no socket),
 * signed in with an admin bearer token, and each time covers the whole
 * answer, body included. The longest event-loop stall seen while a request
 * runs is reported too: a page that holds the loop that long holds every
 * other request with it.
 *
 * Events are indexed through the real ingest path in 500-event bundles (a
 * root and its children, as `bench:obs` writes them). Seeding a million takes
 * minutes; `--data-dir DIR` keeps the index there and reuses it when it
 * already holds N events.
 *
 * Usage: deno run -A bench/ui_bench.ts [--events N] [--runs R] [--samples K] [--data-dir DIR] [--json]
 *
 * @module
 */

import { HealthMonitor } from "../lib/obs/maint/mod.ts";
import { parseArgs } from "node:util";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { obsHealth, percentile } from "../lib/obs/maint/mod.ts";
import type { Hono } from "hono";
import { createApp } from "../routes/app.ts";
import { healthPage } from "../routes/pages/traces_health.tsx";
import { Layout } from "../routes/ui/layout.tsx";
import { join } from "node:path";
import { parseStagingConfig } from "../lib/contract/config.ts";
import { recordRun } from "../lib/ledger/runs.ts";
import { findSystem } from "../lib/reference/systems.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { registerNamedTarget, RunJobs, runReference } from "../lib/runs/mod.ts";
import { BASE_TS, BUNDLE } from "./_obs_workload.ts";
import { findingsFor } from "./_synthetic_findings.ts";

const KINDS = ["retrieval", "selection", "memory_search", "llm_call"] as const;
const TOKEN = "bench-ui-admin-token-0123456789";

/**
 * Events of bundle `b`: a root followed by its children, in time order, as
 * `_obs_workload.ts` builds them but spread over four applications with
 * instrumentation attributes, which the health page reads.
 */
function bundle(b: number): Record<string, unknown>[] {
  const root = `b${b}-root`;
  return Array.from({ length: BUNDLE }, (_, i) => {
    const at = BASE_TS + (b * BUNDLE + i) * 10;
    return {
      event_id: i === 0 ? root : `b${b}-c${i}`,
      application_id: `app-${b % 4}`,
      user_id: `user-${b % 16}`,
      agent_id: `agent-${b % 8}`,
      thread_id: `thread-${b % 64}`,
      root_trace_id: root,
      parent_event_id: i === 0 ? null : root,
      kind: i === 0 ? "intent" : KINDS[i % KINDS.length],
      status: i % 97 === 0 ? "error" : "ok",
      started_at: new Date(at).toISOString(),
      ended_at: new Date(at + 5).toISOString(),
      resources: [{ type: "doc", id: `doc-${(b * 7 + i) % 5000}` }],
      attributes: {
        "instrumentation.name": "bench",
        "instrumentation.version": b % 2 ? "1.0.0" : "1.1.0",
      },
    };
  });
}

/** Events the bench seeded (the traced run the run pages add is Trace's own, application `trace`). */
async function indexedEvents(db: TraceDb): Promise<number> {
  const result = await db.client.execute(
    "SELECT COUNT(*) AS n FROM obs_events WHERE application_id <> 'trace'",
  );
  return Number(result.rows[0]?.n ?? 0);
}

async function seed(db: TraceDb, events: number): Promise<number> {
  await migrate(db, ALL_MIGRATIONS);
  const have = await indexedEvents(db);
  if (have === events) return 0;
  if (have !== 0) {
    throw new Error(
      `The data directory holds ${have} events, not ${events}; use an empty --data-dir`,
    );
  }
  const started = performance.now();
  const bundles = Math.ceil(events / BUNDLE);
  for (let b = 0; b < bundles; b++) {
    const batch = bundle(b).slice(0, events - b * BUNDLE);
    await ingestEvents(db, batch, { source: "import" });
    if (b % 200 === 199) progress(`indexed ${(b + 1) * BUNDLE} events`);
  }
  return (performance.now() - started) / 1000;
}

function progress(text: string): void {
  // deno-lint-ignore no-console
  console.error(text);
}

/** Longest gap between timer ticks while `run` runs, in ms. */
async function withStallMeter<T>(
  run: () => Promise<T>,
): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  try {
    const value = await run();
    worst = Math.max(worst, performance.now() - last);
    return { value, stallMs: worst };
  } finally {
    clearInterval(timer);
  }
}

interface Figures {
  name: string;
  p50: number;
  p95: number;
  stall: number;
}

async function measure(
  name: string,
  samples: number,
  run: () => Promise<void>,
): Promise<Figures> {
  const times: number[] = [];
  let stall = 0;
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const { stallMs } = await withStallMeter(run);
    times.push(performance.now() - started);
    stall = Math.max(stall, stallMs);
  }
  return {
    name,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    stall,
  };
}

const USAGE =
  "usage: deno task bench:ui [--events N] [--runs R] [--samples K] [--data-dir DIR] [--json]";

interface UiBenchOptions {
  events: number;
  runs: number;
  samples: number;
  dataDir: string | undefined;
  json: boolean;
}

/** The flags, or the one line that says which is wrong. */
function parseOptions(args: string[]): UiBenchOptions | string {
  let values;
  try {
    ({ values } = parseArgs({
      // `deno task bench:ui -- --events N` passes the separator through.
      args: args[0] === "--" ? args.slice(1) : args,
      options: {
        events: { type: "string", default: "1000000" },
        runs: { type: "string", default: "1000" },
        samples: { type: "string", default: "10" },
        "data-dir": { type: "string" },
        json: { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    return `${(error as Error).message.split(".")[0]}; ${USAGE}`;
  }
  for (const flag of ["events", "runs", "samples"] as const) {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 1) {
      return `--${flag} must be a whole number >= 1, got ${
        values[flag]
      }; ${USAGE}`;
    }
  }
  return {
    events: Number(values.events),
    runs: Number(values.runs),
    samples: Number(values.samples),
    dataDir: values["data-dir"],
    json: values.json,
  };
}

async function main(args: string[]): Promise<number> {
  const options = parseOptions(args);
  if (typeof options === "string") {
    // deno-lint-ignore no-console
    console.error(options);
    return 2;
  }
  const { events, runs, samples } = options;
  const keep = options.dataDir;
  const dir = keep ?? await Deno.makeTempDir({ prefix: "trace-ui-bench-" });
  await Deno.mkdir(dir, { recursive: true });
  const db = await openDb({ dataDir: dir });
  try {
    const seedSeconds = await seed(db, events);
    const app = createApp({ db, uiAuthToken: TOKEN, log: () => {} });
    const request = pageReader(app);
    // One warm-up each, so the first sample does not pay for compilation.
    await obsHealth(db, { processCounters: true });
    await request("/traces/health");
    await request("/traces/health.json");
    const rows: Figures[] = [];
    rows.push(
      await measure("floor: obsHealth()", samples, async () => {
        await obsHealth(db, { processCounters: true });
      }),
    );
    rows.push(
      await measure(
        "GET /traces/health",
        samples,
        () => request("/traces/health"),
      ),
    );
    rows.push(
      await measure(
        "GET /traces/health.json",
        samples,
        () => request("/traces/health.json"),
      ),
    );
    rows.push(await measureRender(db, samples));
    report(rows, { events, samples, seedSeconds }, options.json);
    const runRows = await measureRunPages(db, dir, runs, samples);
    report(runRows, { events, samples, seedSeconds: 0, runs }, options.json);
    reportTracePages(
      await measureTracePages(db, request, samples, events),
      options.json,
    );
  } finally {
    db.close();
    if (!keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return 0;
}

/** The health page rendered to HTML from data loaded beforehand. */
async function measureRender(db: TraceDb, samples: number): Promise<Figures> {
  const spec = healthPage(new HealthMonitor(db, { processCounters: true }));
  // The health page's loader reads nothing from the request.
  const data = await spec.load(undefined as never, {});
  const url = new URL("http://127.0.0.1:8788/traces/health");
  const principal = {
    name: "token",
    role: "admin",
    scope: {},
    via: "bearer",
  } as const;
  return await measure("render only (data loaded)", samples, async () => {
    const body = spec.render(data, {
      now: Date.now(),
      url,
      jsonHref: "/traces/health.json",
      principal,
      dataLocation: "bench",
      dataFlags: "",
      serverOrigin: "http://127.0.0.1:8788",
      csrf: null,
    });
    const frame = {
      title: "Index health",
      path: url.pathname,
      principal,
      csrf: null,
      site: { version: "bench", dataLocation: "bench", dataFlags: "" },
    };
    String(await Layout({ frame, children: body }));
  });
}

/** The run pages over `runs` stored runs (seeded once per data directory). */
async function measureRunPages(
  db: TraceDb,
  dataDir: string,
  runs: number,
  samples: number,
): Promise<Figures[]> {
  const seeded = await seedRuns(db, dataDir, runs);
  const jobs = new RunJobs({ db, dataDir });
  const app = createApp({
    db,
    uiAuthToken: TOKEN,
    log: () => {},
    runs: { dataDir, jobs },
  });
  const request = pageReader(app);
  const pages = [
    "/",
    "/runs",
    "/runs?verdict=FAIL&target=target-3",
    `/runs/${seeded.detailRunId}`,
    `/targets/${seeded.targetId}`,
    "/targets",
  ];
  for (const path of pages) await request(path);
  const rows: Figures[] = [
    await measure(`floor: SELECT ${runs} run payloads`, samples, async () => {
      await db.client.execute(
        "SELECT payload FROM ledger_entries WHERE kind IN ('run', 'reference_run')",
      );
    }),
  ];
  for (const path of pages) {
    rows.push(await measure(`GET ${path}`, samples, () => request(path)));
  }
  await jobs.close();
  return rows;
}

/**
 * `runs` ledger rows copied from one real traced reference run (whose
 * events are in the index), spread over 10 registered targets, each with
 * a checkpoint file as external runs leave them.
 */
async function seedRuns(
  db: TraceDb,
  dataDir: string,
  runs: number,
): Promise<{ detailRunId: string; targetId: string }> {
  const have = await db.client.execute(
    "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'run'",
  );
  const traced = await db.client.execute(
    "SELECT payload FROM ledger_entries WHERE kind = 'reference_run' LIMIT 1",
  );
  if (Number(have.rows[0]?.n ?? 0) >= runs && traced.rows[0]) {
    const report = JSON.parse(String(traced.rows[0].payload)) as RunReport;
    return { detailRunId: report.run_id, targetId: "target-3" };
  }
  progress(`seeding ${runs} runs`);
  const [source] = await runReference(db, {
    systems: [findSystem("demo-stale-cache")!],
  });
  const template = source!.report;
  for (let t = 0; t < 10; t++) {
    await registerNamedTarget(
      db,
      `target-${t}`,
      parseStagingConfig({
        base_url: `http://127.0.0.1:${9000 + t}`,
        environment: "staging",
        allow_synthetic_writes: true,
      }),
    );
  }
  const from = Date.parse("2026-10-01T00:00:00Z");
  const verdicts = ["PASS", "FAIL", "INCONCLUSIVE", "PASS"] as const;
  await Deno.mkdir(join(dataDir, "external"), { recursive: true });
  for (let i = 0; i < runs; i++) {
    const at = new Date(from + i * 600_000);
    const stamp = at.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
    const runId = `run-${stamp}-${i.toString(16).padStart(12, "0")}`;
    const targetId = `target-${i % 10}`;
    const verdict = verdicts[i % verdicts.length]!;
    const report: RunReport = {
      ...structuredClone(template),
      run_id: runId,
      kind: "external",
      verdict,
      findings: findingsFor(template.findings, verdict),
      started_at: at.toISOString(),
      finished_at: new Date(at.getTime() + 6000).toISOString(),
      target: {
        id: targetId,
        base_url: "http://127.0.0.1:9000",
        source: "registered",
      },
    };
    await recordRun(db, report);
    await Deno.writeTextFile(
      join(dataDir, "external", `${runId}.json`),
      JSON.stringify({
        schema: "trace.checkpoint/1",
        run_id: runId,
        state: "completed",
        pid: 1,
        process_identity: null,
        started_at: report.started_at,
        updated_at: report.finished_at,
        target: report.target,
        config_digest: report.config_digest,
        namespaces: report.namespaces,
        issued: report.issued,
        verdict: report.verdict,
      }),
    );
  }
  return { detailRunId: template.run_id, targetId: "target-3" };
}

function report(
  rows: Figures[],
  run: { events: number; samples: number; seedSeconds: number; runs?: number },
  json: boolean,
): void {
  const floor = rows[0]!.p50;
  if (json) {
    // deno-lint-ignore no-console
    console.log(JSON.stringify({ ...run, rows }));
    return;
  }
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const lines = [
    `${run.runs ? `${run.runs.toLocaleString("en-US")} runs, ` : ""}${
      run.events.toLocaleString("en-US")
    } events, ${run.samples} samples each${
      run.seedSeconds ? `, seeded in ${run.seedSeconds.toFixed(1)} s` : ""
    }`,
    "",
    "| request | p50 | p95 | p50 / floor | longest loop stall |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...rows.map((row) =>
      `| ${row.name} | ${ms(row.p50)} | ${ms(row.p95)} | ${
        (row.p50 / floor).toFixed(2)
      }x | ${ms(row.stall)} |`
    ),
  ];
  // deno-lint-ignore no-console
  console.log(lines.join("\n"));
}

/** The newest full bundle: its root, application and agent. */
function newestBundle(events: number) {
  const b = Math.floor(events / BUNDLE) - 1;
  return {
    root: `b${b}-root`,
    application: `app-${b % 4}`,
    agent: `agent-${b % 8}`,
    thread: `thread-${b % 64}`,
    other: `b${b - 1}-root`,
    otherApplication: `app-${(b - 1) % 4}`,
  };
}

/** The trace pages, each timed as a whole request, against one root page read. */
async function measureTracePages(
  db: TraceDb,
  request: (path: string) => Promise<void>,
  samples: number,
  events: number,
): Promise<Figures[]> {
  if (events < 2 * BUNDLE) return [];
  const b = newestBundle(events);
  const inspect =
    `application_id=${b.application}&root_trace_id=${b.root}&agent_id=${b.agent}&selected=${b.root}`;
  const paths: [string, string][] = [
    ["GET /traces/find (no filter)", "/traces/find"],
    [
      "GET /traces/find (thread id, event selected)",
      `/traces/find?q=${b.thread}&selected=${b.root}`,
    ],
    ["GET /traces/find.json (status=error)", "/traces/find.json?status=error"],
    ["GET /traces/inspect (500-event root)", `/traces/inspect?${inspect}`],
    [
      "GET /traces/inspect.json (500-event root)",
      `/traces/inspect.json?${inspect}`,
    ],
    [
      "GET /traces/compare (two 500-event roots)",
      `/traces/compare?baseline=${b.root}&baseline_application_id=${b.application}&candidate=${b.other}&candidate_application_id=${b.otherApplication}`,
    ],
    ["GET /traces/events.json?store=all", "/traces/events.json?store=all"],
  ];
  for (const [, path] of paths) await request(path);
  const rows: Figures[] = [
    await measure(
      "floor: the root's 500 rows, one SELECT",
      samples,
      async () => {
        await db.client.execute({
          sql: `SELECT * FROM obs_events
                WHERE application_id = ? AND root_trace_id = ?
                ORDER BY ts, seq LIMIT 500`,
          args: [b.application, b.root],
        });
      },
    ),
  ];
  for (const [name, path] of paths) {
    rows.push(await measure(name, samples, () => request(path)));
  }
  return rows;
}

function reportTracePages(rows: Figures[], json: boolean): void {
  if (rows.length === 0) {
    // A small --events run is still a run: say why its third table is missing.
    if (!json) {
      // deno-lint-ignore no-console
      console.log(
        `\nTrace pages: not measured; they need two ${BUNDLE}-event roots (--events ${
          2 * BUNDLE
        } or more)`,
      );
    }
    return;
  }
  const floor = rows[0]!.p50;
  if (json) {
    // deno-lint-ignore no-console
    console.log(JSON.stringify({ trace_pages: rows }));
    return;
  }
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  // deno-lint-ignore no-console
  console.log([
    "",
    "| trace page | p50 | p95 | p50 / floor | longest loop stall |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...rows.map((row) =>
      `| ${row.name} | ${ms(row.p50)} | ${ms(row.p95)} | ${
        (row.p50 / floor).toFixed(2)
      }x | ${ms(row.stall)} |`
    ),
  ].join("\n"));
}

/** Reads a page of `app` in memory as the admin; anything but 200 is an error. */
function pageReader(app: Hono): (path: string) => Promise<void> {
  return async (path) => {
    const response = await app.request(`http://127.0.0.1:8788${path}`, {
      headers: { host: "127.0.0.1:8788", authorization: `Bearer ${TOKEN}` },
    });
    if (response.status !== 200) {
      throw new Error(`${path} answered ${response.status}`);
    }
    await response.arrayBuffer();
  };
}

if (import.meta.main) Deno.exit(await main(Deno.args));
