/**
 * Checkpoints: `<data-dir>/external/<run_id>.json`, rewritten atomically
 * before every ingest so an interrupted run still lists every issued id.
 *
 * @module
 */

import { join } from "node:path";
import * as v from "valibot";
import { describeIssues } from "../issues.ts";
import { ensurePrivateDir } from "../data_dir.ts";
import { errorMessage, StorageError } from "../errors.ts";
import { parseStrictJson } from "../json/strict_json.ts";
import type { RunMarkers, TargetRef, Verdict } from "./report.ts";

/** Checkpoint file contents. */
export interface Checkpoint {
  /** Format identifier. */
  schema: "trace.checkpoint/1";
  /** The run this checkpoint belongs to. */
  run_id: string;
  /** `completed` once the report is finished, also when its window was interrupted. */
  state: "running" | "completed";
  /** Process id of the writing process. */
  pid: number;
  /** `<boot id>:<start ticks>` of the writing process (null where /proc is absent), so PID reuse is detectable. */
  process_identity: string | null;
  /** When the run started, ISO 8601. */
  started_at: string;
  /** When this checkpoint was last written, ISO 8601. */
  updated_at: string;
  /** The system under test. */
  target: TargetRef;
  /**
   * The saved regression this run replays, `null` for any other run (and in
   * checkpoints written before replays were named), so a replay that never
   * completes is still known as one.
   */
  regression_id: string | null;
  /** `sha256:` of the canonical JSON of the validated config. */
  config_digest: string;
  /** The run's random namespaces. */
  namespaces: { test: string; control: string };
  /**
   * The run's markers, so a cleanup after an interrupt can query retrieval;
   * absent from checkpoints written before they were kept.
   */
  markers?: RunMarkers;
  /** Every id issued so far, each written here before its ingest. */
  issued: { test: string[]; control: string[] };
  /** The verdict once the report is finished, else `null`. */
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
      const file = await Deno.open(temp, {
        write: true,
        createNew: true,
        mode: 0o600,
      });
      try {
        const bytes = new TextEncoder().encode(
          JSON.stringify(checkpoint, null, 2) + "\n",
        );
        for (let written = 0; written < bytes.length;) {
          written += await file.write(bytes.subarray(written));
        }
        // The checkpoint is the only record of issued ids if the process dies: make it durable.
        await file.syncData();
      } finally {
        file.close();
      }
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

const Ids = v.array(v.string());

/** A marker is queried as written: an empty one would be found in every answer. */
const Marker = v.pipe(v.string(), v.nonEmpty(), v.maxLength(256));

/** A regression id is spelled as a run id is; other text is not echoed into commands. */
const RegressionId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "not a regression id"),
);

/**
 * A time as checkpoints write it (`Date#toISOString`): the gate orders
 * replays by their start, and a damaged value that sorts past every real
 * one would be the latest for ever.
 */
const IsoTime = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "not a time"),
  v.check((text) => !Number.isNaN(Date.parse(text)), "not a time"),
);

/** Shape of a checkpoint file as read back; older files may lack `process_identity`, `regression_id` and `markers`. */
const CheckpointFileSchema = v.object({
  schema: v.literal("trace.checkpoint/1"),
  run_id: v.string(),
  state: v.picklist(["running", "completed"]),
  pid: v.pipe(v.number(), v.integer()),
  process_identity: v.optional(v.nullable(v.string()), null),
  started_at: IsoTime,
  updated_at: IsoTime,
  target: v.object({
    id: v.string(),
    base_url: v.string(),
    source: v.picklist(["registered", "config", "reference"]),
  }),
  regression_id: v.optional(v.nullable(RegressionId), null),
  config_digest: v.string(),
  namespaces: v.object({ test: v.string(), control: v.string() }),
  markers: v.exactOptional(v.object({ test: Marker, control: Marker })),
  issued: v.object({ test: Ids, control: Ids }),
  verdict: v.nullable(v.picklist(["PASS", "FAIL", "INCONCLUSIVE"])),
});

/** Reads a checkpoint file; `null` when there is none for `runId`. */
export async function readCheckpoint(
  dataDir: string,
  runId: string,
): Promise<Checkpoint | null> {
  const path = join(checkpointDir(dataDir), `${runId}.json`);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw new StorageError(
      `Cannot read checkpoint ${path}: ${
        errorMessage(error)
      }; restore or remove it`,
      { cause: error },
    );
  }
  let parsed: unknown;
  try {
    parsed = parseStrictJson(text);
  } catch (error) {
    throw new StorageError(
      `Checkpoint ${path} is not valid JSON (${
        errorMessage(error)
      }); restore or remove it`,
      { cause: error },
    );
  }
  const result = v.safeParse(CheckpointFileSchema, parsed);
  if (!result.success) {
    throw new StorageError(
      `Checkpoint ${path} is damaged (${
        describeIssues(result.issues)
      }); restore or remove it`,
    );
  }
  return result.output;
}

/** Run ids of the checkpoint files in `dataDir`, in no order (kept reports and temp files skipped). */
export async function checkpointRunIds(dataDir: string): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const entry of Deno.readDir(checkpointDir(dataDir))) {
      const id = /^([A-Za-z0-9][A-Za-z0-9_-]*)\.json$/.exec(entry.name)?.[1];
      if (entry.isFile && id) ids.push(id);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return ids;
}
