/**
 * Runner overhead benchmark (`deno task bench`). Measures the engine against
 * a zero-latency in-process adapter and reports each figure as a ratio to a
 * floor measured in the same process: the same request sequence sent straight
 * to the adapter with no engine around it. Machines are shared and noisy, so
 * only ratios are meaningful across runs.
 *
 * @module
 */

import {
  parseStagingConfig,
  type StagingConfig,
} from "../lib/contract/config.ts";
import type { Operation, StagingTransport } from "../lib/contract/protocol.ts";
import {
  type CheckpointSink,
  fileCheckpointSink,
  memoryCheckpointSink,
} from "../lib/runner/checkpoint.ts";
import type { Clock } from "../lib/runner/clock.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import { sampleCount } from "../lib/runner/plan.ts";

/** A clock whose sleeps cost nothing, so only CPU work is measured. */
class InstantClock implements Clock {
  #offset = 0;
  now = () => performance.now() + this.#offset;
  wallNow = () => new Date();
  sleep = (ms: number) => {
    if (ms > 0) this.#offset += ms;
    return Promise.resolve();
  };
}

/** The cheapest adapter that still satisfies the contract. */
class ZeroLatencyAdapter implements StagingTransport {
  #docs = new Map<string, Map<string, string>>();
  requests = 0;
  post(
    op: Operation,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    this.requests++;
    const ns = body.namespace as string;
    const docs = this.#docs.get(ns) ?? new Map<string, string>();
    this.#docs.set(ns, docs);
    switch (op) {
      case "ingest":
        docs.set(body.id as string, body.text as string);
        return Promise.resolve({ id: body.id });
      case "query":
        return Promise.resolve({ text: docs.values().next().value ?? "" });
      case "inventory":
        return Promise.resolve({
          complete: true,
          source_records: docs.size,
          vector_records: docs.size,
          cache_records: 0,
        });
      case "delete":
        for (const id of body.ids as string[]) docs.delete(id);
        return Promise.resolve({ acknowledged: true });
    }
  }
}

function config(documents: number, windowSeconds: number): StagingConfig {
  return parseStagingConfig({
    base_url: "http://127.0.0.1:1",
    environment: "staging",
    allow_synthetic_writes: true,
    document_count: documents,
    deletion_window_seconds: windowSeconds,
    sample_interval_seconds: 1,
  });
}

async function engineRun(
  cfg: StagingConfig,
  sink: () => CheckpointSink = memoryCheckpointSink,
): Promise<{ ms: number; requests: number }> {
  const adapter = new ZeroLatencyAdapter();
  const start = performance.now();
  const report = await runDeletionContract(cfg, {
    transport: adapter,
    target: { id: "bench", base_url: cfg.base_url, source: "reference" },
    checkpoint: sink(),
    clock: new InstantClock(),
  });
  const ms = performance.now() - start;
  if (report.verdict !== "PASS") {
    throw new Error(`bench run was ${report.verdict}, expected PASS`);
  }
  return { ms, requests: adapter.requests };
}

/** The same request sequence with no engine: the floor. */
async function floorRun(cfg: StagingConfig): Promise<number> {
  const adapter = new ZeroLatencyAdapter();
  const samples = sampleCount(
    cfg.deletion_window_seconds,
    cfg.sample_interval_seconds,
  );
  const ids = Array.from(
    { length: cfg.document_count },
    (_, i) => `trace-doc-${i}`,
  );
  const start = performance.now();
  for (const id of ids) {
    await adapter.post("ingest", { namespace: "t", id, text: `x ${id}` });
  }
  await adapter.post("ingest", { namespace: "c", id: "ctl", text: "control" });
  for (const ns of ["t", "c", "t", "c"]) {
    await adapter.post(ns === "t" ? "query" : "inventory", {
      namespace: ns,
      query: "x",
    });
  }
  await adapter.post("delete", { namespace: "t", ids });
  for (let s = 0; s < samples; s++) {
    for (const op of ["inventory", "query", "inventory", "query"] as const) {
      await adapter.post(op, { namespace: "t", query: "x" });
    }
  }
  await adapter.post("delete", { namespace: "t", ids });
  await adapter.post("delete", { namespace: "c", ids: ["ctl"] });
  await adapter.post("inventory", { namespace: "t" });
  await adapter.post("inventory", { namespace: "c" });
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(
  label: string,
  cfg: StagingConfig,
  rounds: number,
  sink?: () => CheckpointSink,
) {
  for (let i = 0; i < 3; i++) await engineRun(cfg, sink), await floorRun(cfg);
  const engine: number[] = [];
  const floor: number[] = [];
  let requests = 0;
  for (let i = 0; i < rounds; i++) {
    const run = await engineRun(cfg, sink);
    engine.push(run.ms);
    requests = run.requests;
    floor.push(await floorRun(cfg));
  }
  const samples = sampleCount(
    cfg.deletion_window_seconds,
    cfg.sample_interval_seconds,
  );
  return {
    label,
    samples,
    requests,
    engineMs: median(engine),
    floorMs: median(floor),
  };
}

// `deno task bench -- X` passes the separator through; nothing after it is read,
// so a flag meant for another benchmark is refused rather than ignored.
const extra = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
if (extra.length > 0) {
  // deno-lint-ignore no-console
  console.error(
    `deno task bench takes no options, got ${extra[0]}; usage: deno task bench`,
  );
  Deno.exit(2);
}

const perSample = await measure(
  "window of 301 samples, 3 documents",
  config(3, 300),
  15,
);
const fullRun = await measure(
  "full run, 100 documents, 11 samples",
  config(100, 10),
  15,
);
const tempDir = await Deno.makeTempDir({ prefix: "trace-bench-" });
const fileRun = await measure(
  "same, checkpoints written (and synced) to disk",
  config(100, 10),
  15,
  () => fileCheckpointSink(tempDir, `run-${crypto.randomUUID()}`),
);
await Deno.remove(tempDir, { recursive: true });

const rows = [perSample, fullRun, fileRun].map((m) =>
  `| ${m.label} | ${m.requests} | ${m.engineMs.toFixed(2)} ms | ${
    m.floorMs.toFixed(2)
  } ms | ${(m.engineMs / m.floorMs).toFixed(1)}x |`
);
const overheadPerSampleUs =
  ((perSample.engineMs - perSample.floorMs) / perSample.samples) * 1000;
// deno-lint-ignore no-console
console.log(
  [
    "| workload | requests | engine | floor (same requests, no engine) | ratio |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    `Engine overhead per sample (4 requests): ${
      overheadPerSampleUs.toFixed(1)
    } µs above the floor`,
  ].join("\n"),
);
