/**
 * Checkpoints: `<data-dir>/external/<run_id>.json`, rewritten atomically
 * before every ingest so an interrupted run still lists every issued id.
 *
 * @module
 */

import { join } from "node:path";
import { ensurePrivateDir } from "../data_dir.ts";
import type { RunReport, TargetRef, Verdict } from "./report.ts";

/** Checkpoint file contents. */
export interface Checkpoint {
  schema: "trace.checkpoint/1";
  run_id: string;
  state: "running" | "completed";
  pid: number;
  started_at: string;
  updated_at: string;
  target: TargetRef;
  config_digest: string;
  namespaces: { test: string; control: string };
  issued: { test: string[]; control: string[] };
  verdict: Verdict | null;
}

/** Where checkpoints are written; the runner only sees this seam. */
export interface CheckpointSink {
  /** Persists `checkpoint` durably before returning. */
  write(checkpoint: Checkpoint): Promise<void>;
  /** Human-readable location, printed to stderr. */
  readonly location: string;
}

/** Directory of checkpoints inside a data directory. */
export function checkpointDir(dataDir: string): string {
  return join(dataDir, "external");
}

/** A sink writing `<data-dir>/external/<run_id>.json` via temp file + rename. */
export function fileCheckpointSink(
  dataDir: string,
  runId: string,
): CheckpointSink {
  const dir = checkpointDir(dataDir);
  const path = join(dir, `${runId}.json`);
  return {
    location: path,
    async write(checkpoint) {
      await ensurePrivateDir(dir);
      const temp = `${path}.${crypto.randomUUID()}.tmp`;
      await Deno.writeTextFile(
        temp,
        JSON.stringify(checkpoint, null, 2) + "\n",
        { mode: 0o600 },
      );
      await Deno.rename(temp, path);
    },
  };
}

/** A sink that keeps checkpoints in memory (reference suite, tests). */
export function memoryCheckpointSink(): CheckpointSink & {
  latest(): Checkpoint | null;
} {
  let latest: Checkpoint | null = null;
  return {
    location: "(memory)",
    write(checkpoint) {
      latest = structuredClone(checkpoint);
      return Promise.resolve();
    },
    latest: () => latest,
  };
}

/** Reads a checkpoint file; `null` when there is none for `runId`. */
export async function readCheckpoint(
  dataDir: string,
  runId: string,
): Promise<Checkpoint | null> {
  try {
    const text = await Deno.readTextFile(
      join(checkpointDir(dataDir), `${runId}.json`),
    );
    return JSON.parse(text) as Checkpoint;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** The checkpoint a finished report leaves behind. */
export function completedCheckpoint(
  base: Checkpoint,
  report: RunReport,
  now: Date,
): Checkpoint {
  return {
    ...base,
    state: "completed",
    updated_at: now.toISOString(),
    verdict: report.verdict,
  };
}
