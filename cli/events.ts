/**
 * `trace events ingest|query|export|summary`: thin command-line entry points
 * over the observability index in `lib/obs/`.
 *
 * Reads (`query`, `export`, `summary`) never create a file or table. `ingest`
 * is a writer and provisions the database like `trace serve` does, so an
 * NDJSON pipeline works on a fresh data directory.
 *
 * @module
 */

import { fileProblem } from "../lib/file_errors.ts";
import { type CliIo, mebibytes, readInputBytes } from "./_io.ts";
import { gunzipSync } from "node:zlib";
import { DATA_FLAGS, parseFlags, parseIntegerFlag } from "./_args.ts";
import { withDataContext } from "./_context.ts";
import { withErasurePropagation } from "./obs_erase.ts";
import { PROPAGATION_ENV, propagationByDefault } from "../lib/obs/maint/mod.ts";
import { jsonError, jsonText, printJson } from "./_json.ts";
import { explainSqlite } from "../lib/sqlite_errors.ts";
import type { TraceDb } from "../lib/db.ts";
import { ConfigError, ConflictError, UsageError } from "../lib/errors.ts";
import {
  exportEvents,
  type KindsAbsent,
  kindsAbsentFromScope,
  queryTraceEvents,
  type StoreSelection,
  summarizeTraceEvents,
  type TraceEventPage,
  type TraceFilter,
  traceFilterFromParams,
  type TraceParamsOptions,
  type TraceQuery,
  traceQueryFromParams,
  type TraceQueryParam,
  type TraceSummary,
} from "../lib/obs/query/mod.ts";
import {
  conflictsWithin,
  IngestBatchError,
  IngestConflictError,
  ingestValidated,
  MAX_BATCH_EVENTS,
  parseNdjsonEvents,
  startBulkCheckpoints,
  validateEventBatch,
} from "../lib/obs/ingest/mod.ts";
import {
  describeEventIssue,
  displaySafe,
  type EventIssue,
  modelUsage,
  type NormalizedEvent,
  type TraceEvent,
} from "../lib/obs/mod.ts";
import { plural } from "./_words.ts";
import { absentKindsLine } from "./_absent_kinds.ts";

const FILTER_FLAGS = {
  agent: { type: "string", multiple: true },
  memory: { type: "string", multiple: true },
  application: { type: "string" },
  user: { type: "string" },
  anonymous: { type: "boolean", default: false },
  thread: { type: "string" },
  root: { type: "string" },
  run: { type: "string" },
  turn: { type: "string" },
  kind: { type: "string", multiple: true },
  status: { type: "string", multiple: true },
  tool: { type: "string" },
  success: { type: "string" },
  q: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  resource: { type: "string", multiple: true },
  "resource-type": { type: "string" },
  store: { type: "string" },
} as const;

const DATA_HELP =
  "Data: --data-dir DIR (default $TRACE_DATA_DIR, else the platform data directory) or --db URL";

const FILTER_HELP = `Filters:
  --agent ID / --memory ID   agent or memory ids (repeatable; alternatives)
  --application ID --user ID scope (conjunctive); --anonymous for anonymous events only
  --thread ID --root ID --run ID --turn ID --tool NAME --success true|false
  --kind K --status S        repeatable; statuses: unset, ok, error
  --q ID                     exact event, root, turn or run id
  --since TIME --until TIME  ISO 8601 (inclusive / exclusive)
  --resource ID [--resource-type TYPE]   events referencing a resource (repeatable)
  --store all|trace|conversation|tool_log
${DATA_HELP}`;

type FilterValues = {
  [K in keyof typeof FILTER_FLAGS]?: (typeof FILTER_FLAGS)[K] extends
    { multiple: true } ? string[]
    : (typeof FILTER_FLAGS)[K] extends { type: "boolean" } ? boolean
    : string;
};

const INGEST_FLAGS = {
  ...DATA_FLAGS,
  "batch-size": { type: "string" },
} as const;

const INGEST_HELP =
  "Usage: trace events ingest FILE|- [--batch-size N] [--data-dir DIR | --db URL] [--json]\n\n" +
  "FILE is NDJSON, one event per line, or the same gzip-compressed (FILE.gz;\n" +
  "for gzip on stdin, run zcat FILE.gz | trace events ingest -).\n" +
  "Every line is validated before anything is written, and every refused\n" +
  "line is listed (the first 100, then a count); so is an event id the file\n" +
  "repeats with a different payload. Without --batch-size the\n" +
  `file is one batch, written whole or not at all (at most ${MAX_BATCH_EVENTS} events);\n` +
  "with it each batch is written on its own, and if one fails the earlier\n" +
  "ones stay written. Across several batches, once every line is validated,\n" +
  "Ctrl-C (or SIGTERM) stops after the batch being written and names the\n" +
  "lines written (a second one exits at once and names them too); run the\n" +
  "same command again to write the rest: events already written are\n" +
  "skipped as identical retries. A Ctrl-C before that, or with one batch,\n" +
  "ends the command at once (exit 130, no answer): nothing is written.\n" +
  "Reads what trace events export writes: on a line carrying seq and\n" +
  "received_at, those, ts and preview (a size, the content is not exported)\n" +
  "are set anew, so an event without started_at takes the new time.\n" +
  "Provisions the database when missing, like trace serve.\n" +
  "With --json prints one object on stdout: {ok: true, inserted, duplicates,\n" +
  "lines, batches} or, when refused (a flag included) or interrupted, {ok: false,\n" +
  "error: {code, message, items, unlisted_items}, written_lines} (code\n" +
  "interrupted for a Ctrl-C between batches, a second one included).\n" +
  `${DATA_HELP}\n`;

/** `trace events ingest FILE|-`: validate and write NDJSON events. */
export async function eventsIngest(args: string[], io: CliIo): Promise<number> {
  // Read before the flags are: a refused flag answers in the same shape.
  const json = args.includes("--json");
  const progress: IngestProgress = {
    batches: 0,
    inserted: 0,
    duplicates: 0,
    writtenLines: 0,
    interrupted: false,
  };
  let input: string;
  let lines: number;
  let previewless: ReadonlySet<number> = new Set();
  if (json) {
    // A second Ctrl-C answers in the shape of the first, naming the lines written.
    io.setExitAnswer?.((note) =>
      refusalBody(
        {
          code: "interrupted",
          message: `Interrupted again: ${note ?? "exited at once"}`,
        },
        [],
        0,
        progress.writtenLines,
      )
    );
  }
  try {
    const { values, positionals } = parseFlags(
      "events ingest",
      args,
      INGEST_FLAGS,
      { min: 1, max: 1, names: ["FILE (or - for stdin)"] },
    );
    if (values.help) {
      io.out(INGEST_HELP);
      return 0;
    }
    const batchSize = parseBatchSize(values["batch-size"]);
    // Refused before the file is read or the database provisioned.
    const propagates = propagationByDefault(io.env(PROPAGATION_ENV));
    input = positionals[0]!;
    const file = await readValidatedFile(input, io, batchSize);
    lines = file.events.length;
    previewless = file.previewlessLines;
    await withDataContext(
      values,
      io,
      { write: true },
      ({ db, dataDir }) =>
        withErasurePropagation(
          db,
          dataDir,
          io,
          propagates,
          () => ingestBatches(db, file, batchSize, progress, io),
        ),
    );
  } catch (error) {
    throw reportFailure(io, error, progress, { json, previewless });
  } finally {
    io.setExitNote?.(null);
    io.setExitAnswer?.(null);
  }
  if (progress.interrupted) return reportInterrupted(io, progress, json);
  if (lines === 0) io.err(emptyInputWarning(input));
  io.out(
    json
      ? jsonText({
        ok: true,
        inserted: progress.inserted,
        duplicates: progress.duplicates,
        lines,
        batches: progress.batches,
      }) + "\n"
      : `Ingested ${plural(progress.inserted, "event")} (${
        plural(progress.duplicates, "identical retry", "identical retries")
      } skipped)\n`,
  );
  return 0;
}

/** The warning for input that held no event: an empty file, or nothing piped in. */
function emptyInputWarning(path: string): string {
  return path === "-"
    ? "warning: standard input held no events; check what is piped in\n"
    : `warning: ${
      displaySafe(path)
    } held no events; check the path (NDJSON, one event per line)\n`;
}

/**
 * Reports a failed ingest (a JSON object on stdout with --json, else each
 * refused line on stderr) and returns the error to throw: for a refused
 * batch, a summary that does not repeat the lines already listed.
 */
function reportFailure(
  io: CliIo,
  error: unknown,
  progress: IngestProgress,
  { json, previewless }: {
    json: boolean;
    /** Export lines whose preview was left out. */
    previewless: ReadonlySet<number>;
  },
): unknown {
  const items = error instanceof IngestBatchError ||
      error instanceof IngestConflictError
    ? error.items
    : [];
  const where = json ? "items" : "above";
  const exportedHere = error instanceof IngestConflictError &&
    items.length > 0 &&
    items.every((item) =>
      item.line !== undefined && previewless.has(item.line)
    );
  const said = exportedHere
    ? exportedAgainError(error, items.length, where)
    : summaryError(error, items.length, where);
  const unlisted = error instanceof IngestBatchError ? error.unlisted : 0;
  if (json) {
    // Nothing more reaches a reader that stopped reading.
    if (said instanceof Deno.errors.BrokenPipe) return said;
    // Worded as main() would word it, so stdout and stderr agree.
    const explained = explainSqlite(said);
    printJson(
      io,
      refusalBody(jsonError(explained), items, unlisted, progress.writtenLines),
    );
    return explained;
  }
  for (const item of items) {
    io.err(`  ${displaySafe(describeEventIssue(item))}\n`);
  }
  if (unlisted > 0) io.err(`  … ${plural(unlisted, "more refused line")}\n`);
  if (items.length > 0 && progress.batches > 0) {
    io.err(
      `Lines 1-${progress.writtenLines} were written in ${
        plural(progress.batches, "earlier batch", "earlier batches")
      } (${
        plural(progress.inserted, "new event")
      }); after fixing, resend from line ${progress.writtenLines + 1}\n`,
    );
  }
  return said;
}

/** The `--json` answer of a refused or interrupted ingest. */
function refusalBody(
  error: { code: string; message: string },
  items: readonly EventIssue[],
  unlisted: number,
  writtenLines: number,
) {
  return {
    ok: false,
    error: {
      code: error.code,
      message: error.message,
      items: items.map((item) => ({
        line: item.line ?? null,
        field: item.field,
        message: item.message,
      })),
      unlisted_items: unlisted,
    },
    written_lines: writtenLines,
  };
}

/**
 * The error to end with once the refused lines are listed: names them once,
 * where they are (`above` on stderr, `items` in the JSON answer). The code
 * stays the CLI's for the same refusal (`config_invalid`, `conflict`); the
 * HTTP API answers a refused batch `invalid_request` (routes/_errors.ts).
 */
function summaryError(
  error: unknown,
  listed: number,
  where: "above" | "items",
): unknown {
  const place = where === "above" ? "listed above" : "listed in items";
  if (error instanceof IngestBatchError) {
    return new ConfigError(
      `Cannot ingest the batch: ${plural(error.refused, "event")} refused (${
        listed < error.refused ? `the first ${listed}` : "each"
      } ${place}); fix them and resend the whole batch`,
      { cause: error },
    );
  }
  if (error instanceof IngestConflictError) {
    return new ConflictError(
      `Cannot ingest the batch: ${
        plural(error.items.length, "event")
      } ${place} would change an event stored or sent earlier; a changed observation needs a new event_id`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The summary when every refused line is an export line whose event is
 * stored here with its preview: not a changed observation, the export read
 * back into the index it came from.
 */
function exportedAgainError(
  error: IngestConflictError,
  listed: number,
  where: "above" | "items",
): ConflictError {
  return new ConflictError(
    `Cannot ingest the batch: ${plural(listed, "event")} ${
      where === "above" ? "listed above" : "listed in items"
    } ${listed === 1 ? "is" : "are"} already stored here, with a preview ${
      listed === 1 ? "its export line does" : "their export lines do"
    } not hold; read an export into another data directory`,
    { cause: error },
  );
}

function parseBatchSize(flag: string | undefined): number {
  return parseIntegerFlag("batch-size", flag, {
    min: 1,
    max: MAX_BATCH_EVENTS,
  }) ?? Infinity;
}

/** What an ingest has written so far; a failure reports it. */
interface IngestProgress {
  batches: number;
  inserted: number;
  duplicates: number;
  /** Source lines up to this one are written (0: none). */
  writtenLines: number;
  /** A Ctrl-C or SIGTERM stopped the writing between two batches. */
  interrupted: boolean;
}

/** The events of a file, each validated, with the line each came from. */
interface ValidatedFile {
  events: NormalizedEvent[];
  lines: number[];
  /** Export lines whose preview was left out. */
  previewlessLines: ReadonlySet<number>;
}

/**
 * Reads and validates every line of FILE before anything is written: a bad
 * line anywhere refuses the whole file. A file may hold more events than
 * one batch (`--batch-size` splits it); without the flag it must fit one.
 */
async function readValidatedFile(
  path: string,
  io: CliIo,
  batchSize: number,
): Promise<ValidatedFile> {
  const { events, lines, previewlessLines } = parseNdjsonEvents(
    await readEventsFile(path, io),
    {
      maxEvents: Infinity,
      maxValues: Infinity,
      exportLines: true,
    },
  );
  if (batchSize === Infinity && events.length > MAX_BATCH_EVENTS) {
    throw new ConfigError(
      `Cannot ingest ${
        path === "-" ? "standard input" : path
      }: its ${events.length} events are more than one batch holds (${MAX_BATCH_EVENTS}); pass --batch-size ${MAX_BATCH_EVENTS} or less to write it in batches`,
    );
  }
  const validated = validateEventBatch(events, { lines });
  const conflicts = conflictsWithin(validated, { lines });
  if (conflicts.length > 0) throw new IngestConflictError(conflicts);
  return {
    events: validated,
    lines,
    previewlessLines: new Set(previewlessLines),
  };
}

/**
 * Writes `file` in slices of `size`, recording each written slice in
 * `progress`. Across several slices, the first Ctrl-C stops before the next
 * one, the exit note names what is written (the caller clears it once it has
 * answered), and a worker copies the WAL of a large file into the database
 * file meanwhile, as under `trace serve`.
 */
async function ingestBatches(
  db: TraceDb,
  file: ValidatedFile,
  size: number,
  progress: IngestProgress,
  io: CliIo,
): Promise<void> {
  const step = Math.min(size, Math.max(file.events.length, 1));
  const several = file.events.length > step;
  const signal = several ? io.interrupted : undefined;
  const checkpoints = several
    ? startBulkCheckpoints(db, file.events.length)
    : null;
  try {
    for (let start = 0; start < file.events.length; start += step) {
      if (signal?.aborted) {
        progress.interrupted = true;
        break;
      }
      if (several) {
        // A batch that committed before the exit may not be counted yet.
        io.setExitNote?.(
          `${
            writtenText(progress)
          }, and perhaps the batch in flight; ${RESUME_TEXT}`,
        );
      }
      const lines = file.lines.slice(start, start + step);
      const result = await ingestValidated(
        db,
        file.events.slice(start, start + step),
        {
          source: "cli",
          lines,
          // This batch's lines only: the index reads them into a set per batch.
          previewlessLines: lines.filter((line) =>
            file.previewlessLines.has(line)
          ),
        },
      );
      progress.batches += 1;
      progress.inserted += result.inserted;
      progress.duplicates += result.duplicates;
      progress.writtenLines = lines.at(-1) ?? progress.writtenLines;
    }
    if (several) {
      io.setExitNote?.(
        progress.interrupted
          ? `${writtenText(progress)}; ${RESUME_TEXT}`
          : `every line is written (${plural(progress.inserted, "new event")})`,
      );
    }
  } finally {
    await checkpoints?.stop();
  }
}

const RESUME_TEXT =
  "run the same command again to write the rest: events already written are skipped as identical retries";

/** Which lines `progress` has written, and how many new events they held. */
function writtenText(progress: IngestProgress): string {
  return progress.writtenLines === 0
    ? "no line is written"
    : `lines 1-${progress.writtenLines} are written (${
      plural(progress.inserted, "new event")
    })`;
}

/** Answers an ingest a Ctrl-C stopped between batches: what is written and how to finish; exit 2. */
function reportInterrupted(
  io: CliIo,
  progress: IngestProgress,
  json: boolean,
): number {
  const message = `Interrupted: ${writtenText(progress)}; ${RESUME_TEXT}`;
  if (json) {
    printJson(
      io,
      refusalBody(
        { code: "interrupted", message },
        [],
        0,
        progress.writtenLines,
      ),
    );
  }
  io.err(`trace events ingest: ${message}\n`);
  return 2;
}

/** Most bytes of NDJSON a file may hold (after gzip): all of it is held, parsed and validated at once. */
export const MAX_EVENTS_FILE_BYTES = 256 * 1024 * 1024;

/** Reads FILE (or stdin for `-`), inflating gzip, turning OS errors into what to do about them. */
async function readEventsFile(path: string, io: CliIo): Promise<string> {
  const name = path === "-" ? "standard input" : path;
  const tooLarge = () =>
    new ConfigError(
      `Cannot read ${name}: it holds more than ${
        mebibytes(MAX_EVENTS_FILE_BYTES)
      } of NDJSON; split it into smaller files`,
    );
  let bytes: Uint8Array | null;
  try {
    bytes = await readInputBytes(path, io, MAX_EVENTS_FILE_BYTES);
  } catch (error) {
    throw new ConfigError(`Cannot read ${name}: ${fileProblem(error)}`, {
      cause: error,
    });
  }
  if (bytes === null) throw tooLarge();
  // Recognised by its magic bytes, whatever the file is called.
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    bytes = gunzip(name, bytes);
    if (bytes === null) throw tooLarge();
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ConfigError(
      `Cannot read ${name}: it is not UTF-8 text; save it as UTF-8 NDJSON`,
    );
  }
}

/**
 * The inflated bytes, or `null` past {@link MAX_EVENTS_FILE_BYTES}. Through
 * `node:zlib`, which stops at the bound and reads every member of a gzip
 * file (`cat a.gz b.gz` is valid gzip; `DecompressionStream` stops after
 * the first).
 */
function gunzip(name: string, bytes: Uint8Array): Uint8Array | null {
  try {
    return gunzipSync(bytes, { maxOutputLength: MAX_EVENTS_FILE_BYTES });
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw new ConfigError(
      `Cannot read ${name}: the gzip data is corrupt; check the file or send it uncompressed`,
      { cause: error },
    );
  }
}

/** Query parameter of each filter flag (and the flag messages name for it). */
const FLAG_BY_PARAM: Record<TraceQueryParam, string> = {
  application_id: "application",
  user_id: "user",
  thread_id: "thread",
  root_trace_id: "root",
  run_id: "run",
  turn_id: "turn",
  tool: "tool",
  success: "success",
  q: "q",
  start_time: "since",
  end_time: "until",
  resource_type: "resource-type",
  store: "store",
  agent_id: "agent",
  memory_id: "memory",
  kind: "kind",
  status: "status",
  resource: "resource",
  anonymous: "anonymous",
  limit: "limit",
  cursor: "cursor",
};

/** Messages about the query name the flags the user typed. */
const FLAG_LABELS: TraceParamsOptions = {
  label: (param) => `--${FLAG_BY_PARAM[param]}`,
};

/** Turns filter (and paging) flags into the query-string form shared with the HTTP API. */
function filterParams(
  values: FilterValues & { limit?: string; cursor?: string },
): URLSearchParams {
  const params = new URLSearchParams();
  for (const [param, flag] of Object.entries(FLAG_BY_PARAM)) {
    const value = (values as Record<string, string | string[] | boolean>)[
      flag
    ];
    if (value === undefined || value === false) continue;
    if (value === true) params.set(param, "true");
    else if (Array.isArray(value)) {
      for (const item of value) params.append(param, item);
    } else params.set(param, value);
  }
  return params;
}

/** `trace events query`: one page of events, newest first. */
export async function eventsQuery(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("events query", args, {
    ...DATA_FLAGS,
    ...FILTER_FLAGS,
    limit: { type: "string" },
    cursor: { type: "string" },
  });
  if (values.help) {
    io.out(
      `Usage: trace events query [filters] [--limit N] [--cursor C] [--json]\n\n` +
        "Each line: time, kind, status, event id, root, agent (or memory), then what the\n" +
        "event names of thread, user, tool, model and tokens=INPUT/OUTPUT, then the\n" +
        "operation, duration and outcome. --json prints the page as the API returns it.\n" +
        "An empty page whose --kind names a kind no event in the application (and user)\n" +
        "carries ends with a line naming it and the kinds stored there (--json: kinds_absent).\n\n" +
        `${FILTER_HELP}\n`,
    );
    return 0;
  }
  const query = flagProblemsAreUsage(() =>
    traceQueryFromParams(filterParams(values), FLAG_LABELS)
  );
  return await withDataContext(values, io, READ, async ({ db }) => {
    const page = await queryTraceEvents(db, query);
    const absent = await absentKinds(db, query, page);
    if (values.json) {
      io.out(
        jsonText(absent ? { ...page, kinds_absent: absent } : page) + "\n",
      );
    } else {
      io.out(formatPage(page));
      if (absent) io.out(absentKindsLine(query, absent) + "\n");
    }
    return 0;
  });
}

/**
 * On an empty page of a query on kinds, the asked kinds no event in its
 * tenant scope carries (with the kinds it holds), else `null`: a kind that
 * exists but matches nothing under the other filters needs no words.
 */
async function absentKinds(
  db: TraceDb,
  query: TraceQuery,
  page: TraceEventPage,
): Promise<KindsAbsent | null> {
  if (page.events.length > 0 || !query.kinds?.length) return null;
  return await kindsAbsentFromScope(db, query, query.kinds);
}

/** Reads never create a database file or a table. */
/** Readers open the file read-only, so they also work on read-only media. */
const READ = {
  write: false,
  create: false,
  readOnly: true,
  readsIndex: true,
} as const;

function formatEvent(event: TraceEvent): string {
  const who = event.agent_id
    ? `agent=${displaySafe(event.agent_id)}`
    : `memory=${displaySafe(event.memory_id ?? "")}`;
  const head = `${event.ts}  ${event.kind.padEnd(14)}  ${
    event.status.padEnd(5)
  }  ${displaySafe(event.event_id)}  root=${
    displaySafe(event.root_trace_id)
  }  ${who}`;
  return [head, eventScope(event), eventDetails(event)]
    .filter((part) => part !== "").join("  ");
}

/**
 * Who and what the event names beyond its agent: thread, user, tool (unless
 * the operation already shows it), model and tokens as INPUT/OUTPUT.
 */
function eventScope(event: TraceEvent): string {
  const parts: string[] = [];
  const add = (label: string, value: string | null) => {
    if (value !== null) parts.push(`${label}=${displaySafe(value)}`);
  };
  add("thread", event.thread_id);
  add("user", event.user_id);
  if (operation(event) !== toolOperation(event)) add("tool", event.tool);
  const usage = modelUsage(event.attributes);
  add("model", usage.model);
  if (usage.input_tokens !== null || usage.output_tokens !== null) {
    parts.push(
      `tokens=${usage.input_tokens ?? "-"}/${usage.output_tokens ?? "-"}`,
    );
  }
  return parts.join(" ");
}

/** The operation an event names: `app.op`, else `gen_ai.operation.name`, else its tool. */
function operation(event: TraceEvent): string | null {
  return attributeText(event, "app.op") ??
    attributeText(event, "gen_ai.operation.name") ?? toolOperation(event);
}

function toolOperation(event: TraceEvent): string | null {
  return event.tool === null ? null : `tool:${event.tool}`;
}

/**
 * What an event did, when it says: the operation (`app.op`, else
 * `gen_ai.operation.name`, else the tool), the duration (`app.duration_ms`,
 * else the span of its times) and the outcome (`app.outcome`, else the
 * recorded outcome, else success).
 */
function eventDetails(event: TraceEvent): string {
  const parts: string[] = [];
  const op = operation(event);
  if (op !== null) parts.push(`op=${displaySafe(op)}`);
  const duration = durationMs(event);
  if (duration !== null) parts.push(`${formatMs(duration)}`);
  const outcome = attributeText(event, "app.outcome") ??
    event.outcome?.status ??
    (event.success === null ? null : event.success ? "ok" : "failed");
  if (outcome !== null) parts.push(`outcome=${displaySafe(outcome)}`);
  return parts.join("  ");
}

function attributeText(event: TraceEvent, key: string): string | null {
  const value = event.attributes[key];
  return typeof value === "string" ? value : null;
}

function durationMs(event: TraceEvent): number | null {
  const recorded = event.attributes["app.duration_ms"];
  if (typeof recorded === "number") return recorded;
  if (event.started_at === null || event.ended_at === null) return null;
  return Date.parse(event.ended_at) - Date.parse(event.started_at);
}

function formatMs(ms: number): string {
  return ms >= 1000
    ? `${(ms / 1000).toFixed(2)} s`
    : `${Math.round(ms * 10) / 10} ms`;
}

function formatPage(page: TraceEventPage): string {
  const lines = page.events.map(formatEvent);
  lines.push(
    `${plural(page.rows_in_window, "event")}${
      page.has_more ? `; more: --cursor ${page.next_cursor}` : "; no more"
    }`,
    `read: ${page.read_completeness}  instrumentation coverage: ${page.instrumentation_coverage}  outcomes: ${page.outcome_verification}`,
  );
  return lines.join("\n") + "\n";
}

/** `trace events export`: metadata-only NDJSON of the selected events. */
export async function eventsExport(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("events export", args, {
    ...DATA_FLAGS,
    ...FILTER_FLAGS,
  });
  if (values.help) {
    io.out(
      `Usage: trace events export [--store all|trace|conversation|tool_log] [filters]\n\nWrites metadata-only NDJSON (never preview content) to stdout: one event per\nline, nothing when none match (the count goes to stderr). --json changes\nnothing; an error is one JSON object, {"error": {code, message}}.\ntrace events ingest reads it into another data directory (without previews).\n\n${FILTER_HELP}\n`,
    );
    return 0;
  }
  // The filter's check covers --store too, so it is refused as query's is.
  const scope = filterFromFlags(values);
  const store = (values.store ?? "all") as StoreSelection;
  return await withDataContext(values, io, READ, async ({ db }) => {
    const result = await exportEvents(
      db,
      { store, scope },
      (line) => io.out(line),
    );
    io.err(
      `Exported ${plural(result.rows, "event")} from store ${result.store}\n`,
    );
    return 0;
  });
}

/** The filter the flags select; a bad value is a usage error, as every flag's is. */
function filterFromFlags(values: FilterValues): TraceFilter {
  return flagProblemsAreUsage(() =>
    traceFilterFromParams(filterParams(values), FLAG_LABELS)
  );
}

/**
 * Runs a parse of flag values shared with the HTTP API, whose refusal is a
 * `ConfigError` there: on the command line a bad flag value is `usage`
 * (cli/_args.ts), whichever flag and command it is.
 */
function flagProblemsAreUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new UsageError(error.message, { cause: error });
  }
}

/** `trace events summary`: aggregate counts of the selected events. */
export async function eventsSummary(
  args: string[],
  io: CliIo,
): Promise<number> {
  const { values } = parseFlags("events summary", args, {
    ...DATA_FLAGS,
    ...FILTER_FLAGS,
  });
  if (values.help) {
    io.out(
      `Usage: trace events summary [filters] [--json]\n\n${FILTER_HELP}\n`,
    );
    return 0;
  }
  const scope = filterFromFlags(values);
  return await withDataContext(values, io, READ, async ({ db }) => {
    const summary = await summarizeTraceEvents(db, scope);
    io.out(
      values.json ? jsonText(summary) + "\n" : formatSummary(summary),
    );
    return 0;
  });
}

/** Groups a text summary lists; `--json` lists up to 1,000. */
const TEXT_GROUPS = 10;

function formatSummary(summary: TraceSummary): string {
  const kinds = summary.by_kind.map((k) => `${k.kind}=${k.events}`).join(" ");
  const lines = [
    `${plural(summary.events, "event")} in ${plural(summary.roots, "root")} (${
      summary.first_ts ?? "-"
    } .. ${summary.last_ts ?? "-"})`,
  ];
  if (summary.window.truncated) {
    lines.push(
      summary.window.basis === "selected"
        ? `window: the newest ${summary.window.limit} events the filters select; older ones were not read`
        : `window: the newest ${summary.window.limit} events of the index, of which the filters kept ${summary.events}; add --application, --agent, --thread or another scope to read further back`,
    );
  }
  lines.push(
    `errors: ${summary.errors}  kinds: ${kinds || "-"}${
      summary.kinds_truncated ? " (first 100 only)" : ""
    }`,
    `stores: ${
      Object.entries(summary.by_store).map(([k, n]) => `${k}=${n}`).join(" ")
    }`,
    `groups: ${summary.groups.length}${
      summary.groups_truncated ? " (first 1000 only)" : ""
    }: events by agent (or memory) and thread, most recent first`,
  );
  for (const group of summary.groups.slice(0, TEXT_GROUPS)) {
    const who = group.agent_id !== null
      ? `agent=${displaySafe(group.agent_id)}`
      : `memory=${displaySafe(group.memory_id ?? "-")}`;
    const thread = group.thread_id === null
      ? "no thread"
      : `thread=${displaySafe(group.thread_id)}`;
    lines.push(
      `  ${who} ${thread}: ${plural(group.events, "event")}, ${
        plural(group.errors, "error")
      }, ${group.first_ts} .. ${group.last_ts}`,
    );
  }
  if (summary.groups.length > TEXT_GROUPS) {
    lines.push(
      `  … ${
        summary.groups.length - TEXT_GROUPS
      } more groups; --json lists them`,
    );
  }
  lines.push(
    `read: ${summary.read_completeness}  instrumentation coverage: ${summary.instrumentation_coverage}  outcomes: ${summary.outcome_verification}`,
  );
  return lines.join("\n") + "\n";
}
