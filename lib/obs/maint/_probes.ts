/**
 * Query latency samples for health: a few bounded probe queries, each timed
 * over several runs. Samples describe this machine at this moment; health
 * reports them but never raises an alert on them, so alerts stay
 * deterministic.
 *
 * @module
 */

import type { InStatement } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import { outOfTurn, queryTraceEvents } from "../query/mod.ts";
import { percentile, type ProbeLatency, type ProbeTiming } from "./latency.ts";

const round = (ms: number) => Math.round(ms * 1000) / 1000;

async function time(
  samples: number,
  run: () => Promise<unknown>,
): Promise<number[]> {
  const timings: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await run();
    timings.push(performance.now() - start);
  }
  return timings;
}

/** Most samples one latency probe takes (`trace obs health --samples` refuses more). */
export const MAX_LATENCY_SAMPLES = 50;

/** Runs the probe queries `samples` times each (at most {@link MAX_LATENCY_SAMPLES}). */
export async function probeLatency(
  db: TraceDb,
  samples: number,
): Promise<ProbeLatency> {
  const runs = Math.max(1, Math.min(MAX_LATENCY_SAMPLES, Math.floor(samples)));
  const latest = await db.client.execute(
    "SELECT application_id, root_trace_id, kind FROM obs_events ORDER BY ts DESC, seq DESC LIMIT 1",
  );
  const anchor = latest.rows[0];
  const probes: { name: string; run: () => Promise<unknown> }[] = [
    // Out of the read line: a sample times the query, not the clients ahead of it.
    {
      name: "query_page",
      run: () => outOfTurn(() => queryTraceEvents(db, { limit: 250 })),
    },
  ];
  const statement = (name: string, stmt: InStatement) =>
    probes.push({ name, run: () => db.client.execute(stmt) });
  if (anchor) {
    statement("tenant_page", {
      sql: `SELECT seq, ts FROM obs_events WHERE application_id = ?
            ORDER BY ts DESC, seq DESC LIMIT 250`,
      args: [anchor.application_id ?? null],
    });
    statement("root_lookup", {
      sql: "SELECT seq FROM obs_events WHERE root_trace_id = ? LIMIT 1000",
      args: [anchor.root_trace_id ?? null],
    });
    statement("kind_errors", {
      sql:
        "SELECT COUNT(*) AS n FROM obs_events WHERE kind = ? AND status = 'error'",
      args: [anchor.kind ?? null],
    });
  }
  const all: number[] = [];
  const timings: ProbeTiming[] = [];
  for (const probe of probes) {
    const measured = await time(runs, probe.run);
    all.push(...measured);
    timings.push({
      name: probe.name,
      samples: measured.length,
      p50_ms: round(percentile(measured, 50)),
      p95_ms: round(percentile(measured, 95)),
    });
  }
  return {
    probes: timings,
    samples: all.length,
    p50_ms: round(percentile(all, 50)),
    p95_ms: round(percentile(all, 95)),
  };
}
