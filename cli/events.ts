/**
 * `trace events ingest|query|export|summary` and `trace obs init`: thin
 * command-line entry points over the observability index in `lib/obs/`.
 *
 * @module
 */

import type { CliIo, Command } from "./_io.ts";
import { readInput } from "./_io.ts";
import { DATA_FLAGS, parseFlags } from "./_args.ts";
import { resolveDataDir } from "../lib/data_dir.ts";
import { openDb, type TraceDb } from "../lib/db.ts";
import { UsageError } from "../lib/errors.ts";
import { exportEvents } from "../lib/obs/export.ts";
import { STORE_SELECTIONS, type StoreSelection } from "../lib/obs/filters.ts";
import {
  IngestBatchError,
  ingestEvents,
  type IngestResult,
} from "../lib/obs/ingest.ts";
import type { TraceEvent } from "../lib/obs/model.ts";
import { parseNdjsonEvents } from "../lib/obs/ndjson.ts";
import { queryTraceEvents, type TraceEventPage } from "../lib/obs/query.ts";
import { traceQueryFromParams } from "../lib/obs/query_params.ts";
import { initializeObs, OBS_SCHEMA_VERSION } from "../lib/obs/schema.ts";
import {
  summarizeTraceEvents,
  type TraceSummary,
} from "../lib/obs/summaries.ts";

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

const FILTER_HELP = `Filters:
  --agent ID / --memory ID   agent or memory ids (repeatable; alternatives)
  --application ID --user ID scope (conjunctive); --anonymous for anonymous events only
  --thread ID --root ID --run ID --turn ID --tool NAME --success true|false
  --kind K --status S        repeatable; statuses: unset, ok, error
  --q ID                     exact event, root, turn or run id
  --since TIME --until TIME  ISO 8601 (inclusive / exclusive)
  --resource ID [--resource-type TYPE]   events referencing a resource (repeatable)
  --store all|trace|conversation|tool_log
Data: --data-dir DIR (default $TRACE_DATA_DIR) or --db URL`;

const USAGE =
  `Usage: trace events <ingest FILE|- | query | export | summary> [options]

  ingest FILE|-   Ingest NDJSON events (one batch, all or nothing; --batch-size N splits)
  query           One page of events, newest first (--limit N, --cursor C)
  export          Metadata-only NDJSON of every selected event (--store, default all)
  summary         Aggregate counts of the selected events

${FILTER_HELP}
`;

type FilterValues = {
  [K in keyof typeof FILTER_FLAGS]?: (typeof FILTER_FLAGS)[K] extends
    { multiple: true } ? string[]
    : (typeof FILTER_FLAGS)[K] extends { type: "boolean" } ? boolean
    : string;
};

/** `trace events …`: dispatches to ingest, query, export or summary. */
export const events: Command = async (args, io) => {
  const [sub, ...rest] = args;
  switch (sub) {
    case "ingest":
      return await ingestCommand(rest, io);
    case "query":
      return await queryCommand(rest, io);
    case "export":
      return await exportCommand(rest, io);
    case "summary":
      return await summaryCommand(rest, io);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      io.out(USAGE);
      return sub === undefined ? 2 : 0;
    default:
      throw new UsageError(
        `events: unknown subcommand "${sub}"; see trace events --help`,
      );
  }
};

/** `trace obs init`: provisions the observability tables explicitly. */
export const obsInit: Command = async (args, io) => {
  const { values } = parseFlags("obs init", args, DATA_FLAGS);
  if (values.help) {
    io.out(
      "Usage: trace obs init [--data-dir DIR | --db URL] [--json]\n\nCreates or upgrades the observability index tables.\n",
    );
    return 0;
  }
  return await withDb(values, io, async (db) => {
    const applied = await initializeObs(db);
    const result = {
      schema_version: OBS_SCHEMA_VERSION,
      applied,
      database: db.path ?? db.url,
    };
    io.out(
      values.json
        ? JSON.stringify(result) + "\n"
        : applied.length > 0
        ? `Observability index initialized at schema version ${OBS_SCHEMA_VERSION} (${result.database})\n`
        : `Observability index already at schema version ${OBS_SCHEMA_VERSION} (${result.database})\n`,
    );
    return 0;
  });
};

async function withDb(
  values: { "data-dir"?: string | undefined; db?: string | undefined },
  io: CliIo,
  fn: (db: TraceDb) => Promise<number>,
): Promise<number> {
  const db = await openDb({
    dataDir: resolveDataDir({ flag: values["data-dir"], env: io.env }),
    url: values.db,
  });
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

async function ingestCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("events ingest", args, {
    ...DATA_FLAGS,
    "batch-size": { type: "string" },
  }, { min: 1, max: 1 });
  if (values.help) {
    io.out(
      "Usage: trace events ingest FILE|- [--batch-size N] [--data-dir DIR | --db URL] [--json]\n",
    );
    return 0;
  }
  const batchSize = values["batch-size"] === undefined
    ? Infinity
    : Number(values["batch-size"]);
  if (
    !(batchSize >= 1) ||
    (batchSize !== Infinity && !Number.isInteger(batchSize))
  ) {
    throw new UsageError(
      "events ingest: --batch-size must be a positive integer",
    );
  }
  const text = await readInput(positionals[0]!, io);
  return await withDb(values, io, async (db) => {
    const totals = { batches: 0, inserted: 0, duplicates: 0 };
    try {
      const inputs = parseNdjsonEvents(text);
      for (
        let start = 0;
        start < inputs.length;
        start += Math.min(batchSize, inputs.length)
      ) {
        const result: IngestResult = await ingestEvents(
          db,
          inputs.slice(start, start + batchSize),
          {
            source: "cli",
          },
        );
        totals.batches += 1;
        totals.inserted += result.inserted;
        totals.duplicates += result.duplicates;
      }
    } catch (error) {
      if (!(error instanceof IngestBatchError)) throw error;
      for (const item of error.items) {
        io.err(
          `trace events ingest: item ${item.index}: ${item.field}: ${item.message}\n`,
        );
      }
      if (totals.batches > 0) {
        io.err(
          `trace events ingest: ${totals.batches} earlier batches were written\n`,
        );
      }
      throw error;
    }
    io.out(
      values.json
        ? JSON.stringify(totals) + "\n"
        : `Ingested ${totals.inserted} events (${totals.duplicates} identical retries skipped)\n`,
    );
    return 0;
  });
}

/** Turns filter flags into the query-string form shared with the HTTP API. */
function filterParams(values: FilterValues): URLSearchParams {
  const params = new URLSearchParams();
  const single = {
    application: "application_id",
    user: "user_id",
    thread: "thread_id",
    root: "root_trace_id",
    run: "run_id",
    turn: "turn_id",
    tool: "tool",
    success: "success",
    q: "q",
    since: "start_time",
    until: "end_time",
    "resource-type": "resource_type",
    store: "store",
  } as const;
  for (const [flag, param] of Object.entries(single)) {
    const value = values[flag as keyof typeof single];
    if (value !== undefined) params.set(param, value);
  }
  const repeated = {
    agent: "agent_id",
    memory: "memory_id",
    kind: "kind",
    status: "status",
    resource: "resource",
  } as const;
  for (const [flag, param] of Object.entries(repeated)) {
    for (const value of values[flag as keyof typeof repeated] ?? []) {
      params.append(param, value);
    }
  }
  if (values.anonymous) params.set("anonymous", "true");
  return params;
}

async function queryCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("events query", args, {
    ...DATA_FLAGS,
    ...FILTER_FLAGS,
    limit: { type: "string" },
    cursor: { type: "string" },
  });
  if (values.help) {
    io.out(
      `Usage: trace events query [filters] [--limit N] [--cursor C] [--json]\n\n${FILTER_HELP}\n`,
    );
    return 0;
  }
  const params = filterParams(values);
  if (values.limit !== undefined) params.set("limit", values.limit);
  if (values.cursor !== undefined) params.set("cursor", values.cursor);
  const query = traceQueryFromParams(params);
  return await withDb(values, io, async (db) => {
    const page = await queryTraceEvents(db, query);
    io.out(values.json ? JSON.stringify(page) + "\n" : formatPage(page));
    return 0;
  });
}

function formatEvent(event: TraceEvent): string {
  const who = event.agent_id
    ? `agent=${event.agent_id}`
    : `memory=${event.memory_id}`;
  return `${event.ts}  ${event.kind.padEnd(14)} ${
    event.status.padEnd(5)
  } ${event.event_id}  root=${event.root_trace_id}  ${who}`;
}

function formatPage(page: TraceEventPage): string {
  const lines = page.events.map(formatEvent);
  lines.push(
    `${page.rows_in_window} events${
      page.has_more ? `; more: --cursor ${page.next_cursor}` : "; no more"
    }`,
    `read: ${page.read_completeness}  instrumentation coverage: ${page.instrumentation_coverage}  outcomes: ${page.outcome_verification}`,
  );
  return lines.join("\n") + "\n";
}

async function exportCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("events export", args, {
    ...DATA_FLAGS,
    ...FILTER_FLAGS,
  });
  if (values.help) {
    io.out(
      `Usage: trace events export [--store all|trace|conversation|tool_log] [filters]\n\nWrites metadata-only NDJSON (never preview content) to stdout.\n\n${FILTER_HELP}\n`,
    );
    return 0;
  }
  const store = (values.store ?? "all") as StoreSelection;
  if (!STORE_SELECTIONS.includes(store)) {
    throw new UsageError(
      `events export: --store must be one of ${STORE_SELECTIONS.join(", ")}`,
    );
  }
  const { limit: _limit, cursor: _cursor, ...scope } = traceQueryFromParams(
    filterParams(values),
  );
  return await withDb(values, io, async (db) => {
    const result = await exportEvents(
      db,
      { store, scope },
      (line) => io.out(line),
    );
    io.err(
      `trace events export: ${result.rows} events from store ${result.store}\n`,
    );
    return 0;
  });
}

async function summaryCommand(args: string[], io: CliIo): Promise<number> {
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
  const { limit: _limit, cursor: _cursor, ...scope } = traceQueryFromParams(
    filterParams(values),
  );
  return await withDb(values, io, async (db) => {
    const summary = await summarizeTraceEvents(db, scope);
    io.out(
      values.json ? JSON.stringify(summary) + "\n" : formatSummary(summary),
    );
    return 0;
  });
}

function formatSummary(summary: TraceSummary): string {
  const kinds = summary.by_kind.map((k) => `${k.kind}=${k.events}`).join(" ");
  return [
    `${summary.events} events in ${summary.roots} roots (${
      summary.first_ts ?? "-"
    } .. ${summary.last_ts ?? "-"})`,
    `errors: ${summary.errors}  kinds: ${kinds || "-"}`,
    `stores: ${
      Object.entries(summary.by_store).map(([k, n]) => `${k}=${n}`).join(" ")
    }`,
    `groups: ${summary.groups.length}${
      summary.groups_truncated ? " (first 1000 only)" : ""
    }`,
    `read: ${summary.read_completeness}  instrumentation coverage: ${summary.instrumentation_coverage}  outcomes: ${summary.outcome_verification}`,
  ].join("\n") + "\n";
}
