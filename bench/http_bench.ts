/**
 * HTTP ingest benchmark (`deno task bench:http`). Starts `trace serve` in a
 * process of its own on a fresh data directory (its real listener, with the
 * connection guard in front of `Deno.serve`), then lets N clients (default
 * 20) post batches of events to `POST /api/events` as fast as they are
 * answered, for a bounded time, once per batch size (default 50 and 500).
 *
 * It reports acknowledged events per second, request latency percentiles,
 * the server's resident memory (largest seen while sampling, and its peak),
 * and checks that every acknowledged event is indexed exactly once: the
 * server is stopped (SIGTERM: it finishes requests in progress and
 * checkpoints), then the database is read directly.
 *
 * Clients run in this process with their bodies built ahead (one template
 * per client; each request only substitutes its number and its events'
 * times), so they cost as little as they can on a machine the server
 * shares. Each request's events are later than the request before, as a
 * producer's are: a template that sent the same times again would insert
 * every request's rows at the same 500 places of each time index, a page
 * write per event per index (three times the work of rows that arrive in
 * time order). Event times come in two kinds (`--times`):
 *
 * - `now`: each request carries the events of the last moments before it
 *   is sent, one millisecond apart and ending at the clock's time, as
 *   concurrent producers timestamp what just happened: every client's
 *   events arrive near the newest end of each time index;
 * - `apart`: each client's events lie in a time range of their own, far
 *   from the others' (a day apart), so every time index takes inserts at
 *   one place per client: the harder case.
 *
 * Usage: deno run -A bench/http_bench.ts [--clients N] [--batches 50,500]
 *   [--times now,apart] [--seconds S] [--json]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { percentile } from "../lib/obs/maint/mod.ts";
import { BASE_TS, bundle } from "./_obs_workload.ts";

/** How the events of a request are timed (see the module comment). */
const EVENT_TIMES = ["now", "apart"] as const;
type EventTimes = typeof EVENT_TIMES[number];

/** One run: its settings and what it measured. */
export interface HttpRow {
  clients: number;
  batch: number;
  times: EventTimes;
  seconds: number;
  requests: number;
  failed: number;
  acknowledged: number;
  eventsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  rssMb: number;
  peakRssMb: number;
  /** Acknowledged events found in the index (each once). */
  indexedOnce: number;
  /** Rows in the index in all (acknowledged or not). */
  indexedRows: number;
  /** Distinct (application, event id) pairs among them. */
  distinctIds: number;
}

/** Placeholders of a template: the request number, an event's start and end time. */
const PLACEHOLDER = /@@(REQUEST|START|END)@@/;
const encoder = new TextEncoder();
/** Events of one client's requests: keeps the clients' times apart. */
const CLIENT_SPAN = 10_000_000;

/**
 * A client's body template: `batch` events whose ids hold the request number
 * and whose times are placeholders, split so that odd parts name what goes
 * between the even ones.
 */
function template(client: number, batch: number): string[] {
  const events = bundle(client, `c${client}-r@@REQUEST@@-`).slice(0, batch)
    .map((event) => ({
      ...event,
      started_at: "@@START@@",
      ended_at: "@@END@@",
    }));
  return JSON.stringify(events).split(PLACEHOLDER);
}

/** Start time of each event of a request, as `times` says. */
function eventTimes(
  times: EventTimes,
  client: number,
  request: number,
  batch: number,
): (event: number) => number {
  if (times === "apart") {
    return (event) =>
      BASE_TS + (client * CLIENT_SPAN + request * batch + event) * 10;
  }
  const sent = Date.now();
  return (event) => sent - (batch - event);
}

/** The body of request `request` of `client`: its number, and its events' times. */
function requestBody(
  parts: readonly string[],
  client: number,
  request: number,
  batch: number,
  times: EventTimes,
): Uint8Array<ArrayBuffer> {
  const startOf = eventTimes(times, client, request, batch);
  let body = parts[0]!;
  let event = 0;
  for (let i = 1; i < parts.length; i += 2) {
    const at = startOf(event);
    switch (parts[i]) {
      case "REQUEST":
        body += request;
        break;
      case "START":
        body += new Date(at).toISOString();
        break;
      default:
        body += new Date(at + 5).toISOString();
        event++;
    }
    body += parts[i + 1]!;
  }
  return encoder.encode(body);
}

/** Starts `trace serve` on a free port; resolves with its origin once it listens. */
async function startServer(dataDir: string): Promise<{
  child: Deno.ChildProcess;
  origin: string;
  drained: Promise<void>;
}> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli.ts",
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
    ],
    stdout: "null",
    stderr: "piped",
    // Without the caller's tokens: the benchmark's clients send none.
    env: withoutTokens(),
    clearEnv: true,
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await lines.read();
    if (done) {
      throw new Error(`trace serve exited before listening: ${buffered}`);
    }
    buffered += value;
    const match = /listening on (http:\/\/\S+) /.exec(buffered);
    if (match) {
      // The request log keeps coming on stderr: read it so the server never blocks on it.
      const drained = (async () => {
        while (!(await lines.read()).done) { /* discard */ }
      })();
      return { child, origin: match[1]!, drained };
    }
  }
}

/** Resident memory of `pid` in MB: current and peak. */
async function rss(pid: number): Promise<{ now: number; peak: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

interface ClientResult {
  latencies: number[];
  failed: number;
  /** Request numbers that were acknowledged (every event inserted). */
  acknowledged: number[];
}

async function runClient(
  origin: string,
  client: number,
  batch: number,
  times: EventTimes,
  until: number,
): Promise<ClientResult> {
  const parts = template(client, batch);
  const result: ClientResult = { latencies: [], failed: 0, acknowledged: [] };
  for (let request = 0; performance.now() < until; request++) {
    const body = requestBody(parts, client, request, batch, times);
    const t0 = performance.now();
    try {
      const response = await fetch(`${origin}/api/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const answer = await response.json() as { inserted?: number };
      result.latencies.push(performance.now() - t0);
      if (response.status === 200 && answer.inserted === batch) {
        result.acknowledged.push(request);
      } else result.failed++;
    } catch {
      result.failed++;
    }
  }
  return result;
}

/** Counts, in the stopped server's database, the acknowledged events and all rows. */
function checkIndexed(
  dataDir: string,
  batch: number,
  results: ClientResult[],
): { indexedOnce: number; indexedRows: number; distinctIds: number } {
  const db = new DatabaseSync(`${dataDir}/trace.db`, { readOnly: true });
  try {
    const ids: string[] = [];
    results.forEach((result, client) => {
      for (const request of result.acknowledged) {
        const prefix = `c${client}-r${request}-b${client}`;
        ids.push(`${prefix}-root`);
        for (let i = 1; i < batch; i++) ids.push(`${prefix}-c${i}`);
      }
    });
    const found = db.prepare(
      `SELECT COUNT(*) AS n FROM obs_events
       WHERE event_id IN (SELECT value FROM json_each(?))`,
    ).get(JSON.stringify(ids)) as { n: number };
    const all = db.prepare(
      `SELECT COUNT(*) AS n,
         COUNT(DISTINCT application_id || char(0) || event_id) AS d
       FROM obs_events`,
    ).get() as { n: number; d: number };
    return { indexedOnce: found.n, indexedRows: all.n, distinctIds: all.d };
  } finally {
    db.close();
  }
}

async function runOnce(
  clients: number,
  batch: number,
  times: EventTimes,
  seconds: number,
): Promise<HttpRow> {
  const dataDir = await Deno.makeTempDir({ prefix: "trace-http-bench-" });
  const { child, origin, drained } = await startServer(dataDir);
  try {
    let sampledRss = 0;
    const sampler = setInterval(async () => {
      sampledRss = Math.max(sampledRss, (await rss(child.pid)).now);
    }, 250);
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    const results = await Promise.all(
      Array.from(
        { length: clients },
        (_, c) => runClient(origin, c, batch, times, until),
      ),
    );
    const elapsed = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const memory = await rss(child.pid);
    child.kill("SIGTERM");
    await child.status;
    await drained;
    const latencies = results.flatMap((r) => r.latencies);
    const acknowledged = results.reduce((n, r) =>
      n + r.acknowledged.length, 0) *
      batch;
    return {
      clients,
      batch,
      times,
      seconds: elapsed,
      requests: latencies.length,
      failed: results.reduce((n, r) => n + r.failed, 0),
      acknowledged,
      eventsPerSecond: acknowledged / elapsed,
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      rssMb: Math.max(sampledRss, memory.now),
      peakRssMb: memory.peak,
      ...checkIndexed(dataDir, batch, results),
    };
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already stopped.
    }
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

const f = (n: number, digits = 0) =>
  n.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });

function renderTable(rows: HttpRow[]): string {
  const lines = [
    "| clients | events per request | event times | seconds | requests | failed | events/s | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) | server RSS (MB) / peak | acknowledged | indexed exactly once |",
    "|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.clients} | ${r.batch} | ${r.times} | ${f(r.seconds, 1)} | ${
        f(r.requests)
      } | ${r.failed} | ${f(r.eventsPerSecond)} | ${f(r.p50Ms, 1)} | ${
        f(r.p95Ms, 1)
      } | ${f(r.p99Ms, 1)} | ${f(r.maxMs, 1)} | ${f(r.rssMb)} / ${
        f(r.peakRssMb)
      } | ${f(r.acknowledged)} | ${exactlyOnce(r) ? "yes" : "NO"} |`,
    );
  }
  return lines.join("\n");
}

/** Every acknowledged event is in the index, once, and nothing else is. */
function exactlyOnce(r: HttpRow): boolean {
  return r.indexedOnce === r.acknowledged && r.indexedRows === r.acknowledged &&
    r.distinctIds === r.indexedRows;
}

const mark = (ok: boolean) => ok ? "met" : "not met";

/** The target lines, or one line saying which run the targets are set for. */
export function renderTargets(rows: HttpRow[]): string {
  const judged = rows.filter((r) => r.batch === 500 && r.clients === 20);
  if (judged.length === 0) {
    return "- set for 20 clients and 500-event batches; this run had none (run with the defaults to judge them)";
  }
  return judged.map((r) =>
    `- ${r.clients} clients, 500-event batches, event times ${r.times}: ${
      f(r.eventsPerSecond)
    } events/s (>= 50,000: ${mark(r.eventsPerSecond >= 50_000)}), p99 ${
      f(r.p99Ms, 1)
    } ms (< 250 ms: ${mark(r.p99Ms < 250)})`
  ).join("\n");
}

const USAGE =
  "usage: deno task bench:http [--clients N] [--batches 50,500] [--times now,apart] [--seconds S] [--json]";

async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: args[0] === "--" ? args.slice(1) : args,
      options: {
        clients: { type: "string", default: "20" },
        batches: { type: "string", default: "50,500" },
        times: { type: "string", default: "now,apart" },
        seconds: { type: "string", default: "20" },
        json: { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    // deno-lint-ignore no-console
    console.error(`${(error as Error).message.split(".")[0]}; ${USAGE}`);
    return 2;
  }
  const clients = Number(values.clients);
  const seconds = Number(values.seconds);
  const batches = values.batches.split(",").map(Number);
  const times = values.times.split(",");
  const whole = (n: number) => Number.isInteger(n) && n >= 1;
  const wrong = !whole(clients)
    ? `--clients must be a whole number of at least 1, got ${values.clients}`
    : !batches.every(whole)
    ? `--batches must be whole numbers of at least 1, got ${values.batches}`
    : !(seconds > 0)
    ? `--seconds must be a positive number, got ${values.seconds}`
    : null;
  if (wrong !== null) {
    // deno-lint-ignore no-console
    console.error(`${wrong}; ${USAGE}`);
    return 2;
  }
  if (!times.every((t): t is EventTimes => EVENT_TIMES.includes(t as never))) {
    // deno-lint-ignore no-console
    console.error(`--times takes now, apart or both; ${USAGE}`);
    return 2;
  }
  const rows: HttpRow[] = [];
  for (const timing of times) {
    for (const batch of batches) {
      // deno-lint-ignore no-console
      console.error(
        `${clients} clients, ${batch}-event batches, event times ${timing}, ${seconds} s`,
      );
      rows.push(await runOnce(clients, batch, timing, seconds));
    }
  }
  // deno-lint-ignore no-console
  console.log(
    values.json
      ? JSON.stringify({ runs: rows })
      : `${renderTable(rows)}\n\nTargets:\n${renderTargets(rows)}`,
  );
  return rows.every(exactlyOnce) ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));

/** This process's environment without the server's token variables. */
function withoutTokens(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.TRACE_INGEST_TOKEN;
  delete env.TRACE_UI_AUTH_TOKEN;
  delete env.TRACE_UI_AUTH_ACCOUNTS;
  return env;
}
