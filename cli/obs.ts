/**
 * `trace obs …`: provisioning and maintenance of the observability index
 * (init, backfill, parity, retention, source expiry, subject erasure and its
 * propagation setting, health). Every destructive step is a dry run or a
 * reviewed plan unless asked otherwise. Erasure lives in `obs_erase.ts`.
 *
 * @module
 */

import { join } from "node:path";
import { terminalSafe } from "../lib/display.ts";
import { UsageError } from "../lib/errors.ts";
import { fileProblem } from "../lib/file_errors.ts";
import type { TraceDb } from "../lib/db.ts";
import {
  applyExpiry,
  backfill,
  type BackfillResult,
  checkExpiryConfirmation,
  claimArchive,
  directoryArchive,
  ERASURE_KEY_FILE,
  type ExpiryPlan,
  type ExpiryResult,
  MAX_LATENCY_SAMPLES,
  MAX_RETENTION_DAYS,
  obsHealth,
  parity,
  planExpiry,
  retention,
  type RetentionResult,
  type StorageReport,
} from "../lib/obs/maint/mod.ts";
import { displaySafe, initializeObs } from "../lib/obs/mod.ts";
import { erasureKeyFor, erasureKeyStateFor } from "../lib/runs/mod.ts";
import { parseStrictJson, StrictJsonError } from "../lib/json/strict_json.ts";
import {
  DATA_FLAGS,
  idFlag,
  type IntegerRule,
  parseFlags,
  parseIntegerFlag,
  showHelp,
} from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import { jsonText } from "./_json.ts";
import { dataFlagsOf } from "./_run_outputs.ts";
import { shellWord } from "../lib/shell_word.ts";
import type { CliIo } from "./_io.ts";
import { plural } from "./_words.ts";

export { obsErase, obsPropagation } from "./obs_erase.ts";

const HELPS: Record<string, string> = {
  init:
    "Usage: trace obs init [--json] [--data-dir DIR] [--db URL]\n\nCreates or upgrades the observability tables, and creates the erasure key\n(<data-dir>/erasure.key) when there is none; when receipts made with a key\nexist, a missing key is refused (restore it from a backup) rather than replaced.\n",
  backfill:
    `Usage: trace obs backfill [--apply] [--all] [--page-size N] [--cursor C] [--application ID]
                          [--include-retained] [--json] [--data-dir DIR] [--db URL]

Rebuilds index rows from canonical envelopes, one page per run (or every page
with --all). Without --apply it only reports what would change. Envelopes are
never rewritten. Rows removed by retention stay removed unless
--include-retained is given. Exits 1 when any envelope could not be indexed.
`,
  parity:
    `Usage: trace obs parity [--page-size N] [--page-bound N] [--application ID]
                        [--json] [--data-dir DIR] [--db URL]

Compares the content-free projection of every envelope with its index rows and
records the result for trace obs health. Only a check over every tenant sets
health's parity status; a check with --application is recorded for that
tenant alone and never clears a whole-index mismatch; a tenant with no event
in the index is said so and not recorded. Exit 0 when equal, 1 on
mismatch, 2 when the window is larger than the page bound (narrow it or raise
the bound).
`,
  retention:
    `Usage: trace obs retention [--apply] [--vacuum] [--previews-days N] [--metadata-days N]
                           [--outcomes-days N] [--batch-size N] [--json] [--data-dir DIR] [--db URL]

Defaults: previews 7 days, metadata 30, verified outcomes 365; previews <=
metadata <= outcomes must hold. Without --apply it only counts. With --apply it
deletes in small batches so writers keep going, then returns the freed pages
to the file system in small incremental steps when the database is in
incremental auto-vacuum mode, and reports the bytes before, after and
reclaimed. A database without it keeps the freed pages for new rows; --vacuum
runs a one-time full VACUUM (a rewrite that blocks writers while it runs) that
returns them and switches the file to incremental mode.
A first Ctrl-C stops --apply between batches (each committed): exit 2, and the
same command again removes the rest.
Source envelopes stay (see expiry-plan), but a removed preview's digest in
one is replaced by the preview's size, so nothing left can confirm a guess of
the removed text.
`,
  "expiry-plan":
    `Usage: trace obs expiry-plan --older-than TIME [--limit N] [--application ID]
                             [--out FILE] [--data-dir DIR] [--db URL]

Lists the source envelopes received before TIME (ISO 8601 with a zone, e.g.
2026-08-01T00:00:00Z) with their fingerprints and seals the list. Writes
the plan JSON to FILE (or stdout); review it, then pass it to expiry-apply
with its confirmation string.
Source expiry deletes envelopes only: the index rows and previews of these
events stay queryable until trace obs retention removes them.
`,
  "expiry-apply":
    `Usage: trace obs expiry-apply --plan FILE --confirm STRING --archive-dir DIR
                              [--batch-size N] [--json] [--data-dir DIR] [--db URL]

Writes the planned envelopes to a new NDJSON file in DIR (synced to disk,
under a temporary name until complete, so an expiry-*.ndjson file is always
whole), then deletes exactly those whose fingerprint still matches the plan.
While it runs it holds a lock in DIR (.expiry-*.lock): a second apply of the
same plan there is refused at once. A .expiry-*.partial file that a killed
apply left is unfinished; the next apply of the same plan removes it and
says so. Exits 1 when any planned envelope was refused or a batch failed.
A first Ctrl-C stops it between batches (each committed): exit 2, and applying
the same plan again deletes the rest (counting those deleted before as
already deleted, not refused).
Only envelopes are deleted: index rows and previews of these events are
removed by trace obs retention, not by source expiry, so the events stay
queryable until retention runs.
`,
  health:
    `Usage: trace obs health [--samples N] [--json] [--data-dir DIR] [--db URL]

Reports schema and instrumentation versions, counts, missing links,
truncation, query latency, index readiness, the recorded parity checks and
alerts. Counters of the writing process are unknown from here. Every figure
is computed now: row counts are kept as rows are written, the link checks
read every event (a few seconds at a million events).

Status: failing (a critical alert), degraded (a warning), unknown (nothing
wrong found, but the index holds events no whole-index parity check has
looked at yet: run trace obs parity), or ok. Exits 1 when failing.

--samples N  times each latency probe runs, from 1 to 50 (default 5)
`,
};

function intFlag(
  name: string,
  value: string | undefined,
  rule: IntegerRule = { min: 1 },
): number | undefined {
  return parseIntegerFlag(name, value, rule);
}

// The library bounds a policy too; checking here names the flag and the range.
/**
 * `--application` (or `--application-id`), checked as ingest checks the id events carry: an empty
 * or malformed id is refused rather than read as "every application".
 */
function applicationIdOption(
  value: string | undefined,
): { applicationId?: string } {
  return value === undefined
    ? {}
    : { applicationId: idFlag("application", value) };
}

const DAYS: IntegerRule = { min: 0, max: MAX_RETENTION_DAYS, unit: "days" };

function dataFlags(
  values: { "data-dir"?: string | undefined; db?: string | undefined },
) {
  return { "data-dir": values["data-dir"], db: values.db };
}

/**
 * Opens the index for one maintenance command: readers open the file
 * read-only; writers checkpoint the WAL when they finish, so that `trace.db`
 * alone holds what they wrote.
 */
function withObsDb<T>(
  values: { "data-dir"?: string | undefined; db?: string | undefined },
  io: CliIo,
  fn: (db: TraceDb) => Promise<T>,
  options: { writes: boolean; create?: boolean },
): Promise<T> {
  return withDataContext(
    dataFlags(values),
    io,
    options.writes
      ? {
        write: false,
        create: options.create ?? false,
        checkpoint: true,
        readsIndex: true,
      }
      : { write: false, create: false, readOnly: true, readsIndex: true },
    ({ db }) => fn(db),
  );
}

/** `trace obs init`: provision or upgrade the index. */
export async function obsInit(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("obs init", args, DATA_FLAGS);
  if (values.help) return showHelp(io, HELPS.init!);
  const { applied, keyCreated, keyPath } = await withDataContext(
    dataFlags(values),
    io,
    { write: false, create: true, checkpoint: true },
    async ({ db, dataDir }) => {
      const applied = await initializeObs(db);
      // Erasure needs the key before its first dry run, which never makes one.
      const keyCreated = await erasureKeyStateFor(db, dataDir) === "absent";
      await erasureKeyFor(db, dataDir);
      return {
        applied,
        keyCreated,
        keyPath: join(dataDir, ERASURE_KEY_FILE),
      };
    },
  );
  if (values.json) {
    printJson(io, { applied, erasure_key_created: keyCreated });
  } else {
    io.out(
      applied.length > 0
        ? `Observability schema provisioned (versions ${applied.join(", ")})\n`
        : "Observability schema already up to date\n",
    );
    if (keyCreated) {
      io.out(
        `Erasure key created at ${
          displaySafe(keyPath)
        }: back it up with the data directory (receipts are checked only with the key that made them)\n`,
      );
    }
  }
  return 0;
}

const BACKFILL_FLAGS = {
  ...DATA_FLAGS,
  apply: { type: "boolean", default: false },
  all: { type: "boolean", default: false },
  "page-size": { type: "string" },
  cursor: { type: "string" },
  application: { type: "string" },
  "include-retained": { type: "boolean", default: false },
} as const;

/** `trace obs backfill`: rebuild index rows from envelopes. */
export async function obsBackfill(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("obs backfill", args, BACKFILL_FLAGS);
  if (values.help) return showHelp(io, HELPS.backfill!);
  const pageSize = intFlag("page-size", values["page-size"]);
  const applicationId = applicationIdOption(values.application);
  const results = await withObsDb(values, io, async (db) => {
    const pages: BackfillResult[] = [];
    let cursor: string | null = values.cursor ?? null;
    do {
      const page = await backfill(db, {
        dryRun: !values.apply,
        cursor,
        includeRetained: values["include-retained"],
        ...(pageSize === undefined ? {} : { pageSize }),
        ...applicationId,
      });
      pages.push(page);
      if (values.json && values.all) printJson(io, page);
      cursor = page.next_cursor;
    } while (values.all && cursor !== null);
    return pages;
  }, { writes: values.apply });
  const failed = results.reduce((n, page) => n + page.failed.length, 0);
  if (values.json) {
    if (!values.all) printJson(io, results[0]);
  } else {
    const sum = (
      key:
        | "scanned"
        | "missing"
        | "changed"
        | "unchanged"
        | "written"
        | "skipped_retained",
    ) => results.reduce((n, page) => n + page[key], 0);
    io.out(
      `${values.apply ? "Backfill" : "Backfill dry run"}: ${
        sum("scanned")
      } envelopes scanned, ` +
        `${sum("missing")} missing, ${sum("changed")} differing, ${
          sum("unchanged")
        } unchanged, ` +
        `${sum("skipped_retained")} skipped (retention), ${
          sum("written")
        } written, ${failed} failed\n`,
    );
    const reasons = new Set(
      results.flatMap((page) => page.write_error ?? []),
    );
    for (const reason of reasons) {
      io.out(`Writing a page failed: ${displaySafe(reason)}\n`);
    }
    const next = results.at(-1)?.next_cursor;
    if (next) io.out(`Next page: ${nextBackfillCommand(values, next)}\n`);
    if (!values.apply) io.out("Nothing was written; add --apply to write\n");
  }
  return failed > 0 ? 1 : 0;
}

/** The backfill that reads the page after `cursor` with the same filters and data. */
function nextBackfillCommand(
  values: {
    apply: boolean;
    "page-size"?: string | undefined;
    application?: string | undefined;
    "include-retained": boolean;
    "data-dir"?: string | undefined;
    db?: string | undefined;
  },
  cursor: string,
): string {
  const words = ["trace", "obs", "backfill"];
  if (values.apply) words.push("--apply");
  words.push("--cursor", cursor);
  if (values["page-size"]) words.push("--page-size", values["page-size"]);
  if (values.application) words.push("--application", values.application);
  if (values["include-retained"]) words.push("--include-retained");
  return words.map(shellWord).join(" ") + dataFlagsOf(values);
}

const PARITY_FLAGS = {
  ...DATA_FLAGS,
  "page-size": { type: "string" },
  "page-bound": { type: "string" },
  application: { type: "string" },
} as const;

/** `trace obs parity`: compare envelopes with index rows. */
export async function obsParity(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("obs parity", args, PARITY_FLAGS);
  if (values.help) return showHelp(io, HELPS.parity!);
  const pageSize = intFlag("page-size", values["page-size"]);
  const pageBound = intFlag("page-bound", values["page-bound"]);
  const applicationId = applicationIdOption(values.application);
  const result = await withObsDb(values, io, (db) =>
    parity(db, {
      record: true,
      ...(pageSize === undefined ? {} : { pageSize }),
      ...(pageBound === undefined ? {} : { pageBound }),
      ...applicationId,
    }), { writes: true });
  if (values.json) printJson(io, result);
  else {
    const scope = result.application_id === null
      ? ""
      : ` (application ${displaySafe(result.application_id)} only)`;
    io.out(
      `Parity${scope} ${result.status}: ${result.envelopes} envelopes, ${result.index_rows} index rows, ` +
        `${result.matched} matched, ${result.mismatched} mismatched, ${result.retained_out} removed by retention, ` +
        `${result.source_expired} source-expired (${result.pages} of at most ${result.page_bound} pages)\n`,
    );
    for (const m of result.mismatches.slice(0, 20)) {
      io.out(
        `  seq ${m.seq}: ${m.code}${
          m.fields ? ` (${m.fields.join(", ")})` : ""
        }\n`,
      );
    }
    if (result.status === "incomplete") {
      io.out(
        `Stopped after seq ${result.stopped_after_seq}: narrow --application or raise --page-bound\n`,
      );
    }
  }
  if (result.nothing_checked && result.application_id !== null) {
    // With --json stdout holds the one object; the note goes beside it.
    (values.json ? io.err : io.out)(
      `No event of application ${
        displaySafe(result.application_id)
      } is in the index: nothing was compared and nothing recorded for trace obs health; check the application id\n`,
    );
  }
  return result.status === "ok" ? 0 : result.status === "mismatch" ? 1 : 2;
}

const RETENTION_FLAGS = {
  ...DATA_FLAGS,
  apply: { type: "boolean", default: false },
  "previews-days": { type: "string" },
  "metadata-days": { type: "string" },
  "outcomes-days": { type: "string" },
  "batch-size": { type: "string" },
  vacuum: { type: "boolean", default: false },
} as const;

/** `trace obs retention`: expire previews, metadata and outcomes. */
export async function obsRetention(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("obs retention", args, RETENTION_FLAGS);
  if (values.help) return showHelp(io, HELPS.retention!);
  const options = {
    dryRun: !values.apply,
    vacuum: values.vacuum,
    previewsDays: intFlag("previews-days", values["previews-days"], DAYS),
    metadataDays: intFlag("metadata-days", values["metadata-days"], DAYS),
    outcomesDays: intFlag("outcomes-days", values["outcomes-days"], DAYS),
    batchSize: intFlag("batch-size", values["batch-size"]),
    // A first Ctrl-C stops an apply between batches, each its own transaction.
    signal: values.apply ? io.interrupted : undefined,
  };
  const defined = Object.fromEntries(
    Object.entries(options).filter(([, v]) => v !== undefined),
  );
  const result = await withObsDb(values, io, (db) => retention(db, defined), {
    writes: values.apply,
  });
  if (values.json) printJson(io, result);
  else {
    const verb = result.dry_run
      ? "would delete"
      : result.interrupted
      ? "deleted before the interrupt"
      : "deleted";
    io.out(
      `Retention (previews ${result.policy.previews_days} d, metadata ${result.policy.metadata_days} d, ` +
        `outcomes ${result.policy.outcomes_days} d) ${verb}: ${
          plural(result.previews, "preview")
        }, ` +
        `${plural(result.events, "event")}, ${
          plural(result.outcome_events, "event")
        } with verified outcomes, ` +
        `${plural(result.resources, "resource ref")}; ${
          redactedEnvelopes(result)
        }\n`,
    );
    if (result.previews_by_receipt > 0) io.out(byReceiptNote(result));
    if (result.storage) printStorage(io, result.storage);
    else {
      io.out(
        values.vacuum
          ? "Nothing was deleted and nothing vacuumed; add --apply to delete, then vacuum\n"
          : "Nothing was deleted; add --apply to delete\n",
      );
    }
  }
  if (!result.interrupted) return 0;
  io.err(
    `trace obs retention: interrupted after ${
      plural(result.batches, "batch", "batches")
    }, each committed; the rest expires when you run the same command again\n`,
  );
  return 2;
}

/** How many envelopes name a removed preview by its size only. */
function redactedEnvelopes(result: RetentionResult): string {
  const one = result.preview_digests === 1;
  const keep = result.dry_run ? "would keep" : one ? "keeps" : "keep";
  return `${
    plural(result.preview_digests, "envelope")
  } ${keep} only the size of ${
    one ? "its" : "their"
  } removed preview, no digest of it`;
}

/**
 * The line naming previews that expired by receipt, not event time: their
 * events are dated after it, which points at a writer's clock or units.
 */
function byReceiptNote(result: RetentionResult): string {
  const { previews_by_receipt: n, cutoffs } = result;
  const one = n === 1;
  return `${n} ${
    one ? "preview was" : "previews were"
  } received before ${cutoffs.previews_before} but dated after it, and ${
    result.dry_run ? "would expire" : "expired"
  } by receipt: check the clock (and time units) of the producer that wrote ${
    one ? "it" : "them"
  }\n`;
}

function printStorage(io: CliIo, storage: StorageReport): void {
  const measured = storage.measured === "files"
    ? "database and WAL files"
    : "database pages";
  io.out(
    `Storage (${measured}): ${storage.bytes_before} -> ${storage.bytes_after} bytes, ` +
      `${storage.bytes_reclaimed} reclaimed (${storage.method}, auto-vacuum ${storage.auto_vacuum}); ` +
      `${storage.free_bytes_after} bytes free inside the file\n`,
  );
  if (storage.note) io.out(`Note: ${storage.note}\n`);
  if (
    storage.method === "none" && storage.auto_vacuum === "none" &&
    storage.free_bytes_after > 0
  ) {
    io.out(
      "Bytes are only returned to the file system with --vacuum (a one-time full rewrite that blocks writers while it runs; later runs reclaim in small steps)\n",
    );
  }
}

/** Writes a new plan file, refusing to overwrite one. */
async function writePlan(path: string, text: string): Promise<void> {
  try {
    await Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 });
  } catch (error) {
    throw new UsageError(
      `Cannot write the plan to ${path}: ${fileProblem(error, "write")}`,
      { cause: error },
    );
  }
}

/** Reads a plan file as JSON (validated by applyExpiry). */
async function readPlan(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new UsageError(
      `Cannot read the plan ${path}: ${fileProblem(error, "read")}`,
      { cause: error },
    );
  }
  try {
    return parseStrictJson(text);
  } catch (error) {
    const where = error instanceof StrictJsonError
      ? ` (${
        error.reason === "empty"
          ? "it is empty"
          : `line ${error.line}, column ${error.column}: ${error.detail}`
      })`
      : "";
    throw new UsageError(
      `Cannot read the plan ${path}: it is not JSON${where}; pass the file trace obs expiry-plan --out wrote`,
      { cause: error },
    );
  }
}

const PLAN_FLAGS = {
  ...DATA_FLAGS,
  "older-than": { type: "string" },
  limit: { type: "string" },
  application: { type: "string" },
  out: { type: "string" },
} as const;

/** `trace obs expiry-plan`: a sealed list of envelopes to expire. */
export async function obsExpiryPlan(
  args: string[],
  io: CliIo,
): Promise<number> {
  const { values } = parseFlags("obs expiry-plan", args, PLAN_FLAGS);
  if (values.help) return showHelp(io, HELPS["expiry-plan"]!);
  const olderThan = values["older-than"];
  if (!olderThan) {
    throw new UsageError(
      "--older-than TIME is required; see trace obs expiry-plan --help",
    );
  }
  const limit = intFlag("limit", values.limit);
  const applicationId = applicationIdOption(values.application);
  const plan = await withObsDb(values, io, (db) =>
    planExpiry(db, {
      olderThan,
      ...(limit === undefined ? {} : { limit }),
      ...applicationId,
    }), { writes: false });
  const text = JSON.stringify(plan, null, 2) + "\n";
  if (values.out) {
    await writePlan(values.out, text);
    io.err(planWrittenNote(plan, values.out, dataFlagsOf(values)));
  } else io.out(jsonText(plan, 2) + "\n");
  return 0;
}

/**
 * What to do with a plan just written: the apply command, with the plan path
 * quoted and the same `--data-dir` / `--db`, so that it runs as printed against
 * the data the plan lists; or, for an empty plan, that there is nothing to do.
 */
function planWrittenNote(
  plan: ExpiryPlan,
  out: string,
  dataFlags: string,
): string {
  if (plan.entries.length === 0) {
    return `No envelope was received before ${plan.older_than}${
      plan.application_id === null
        ? ""
        : ` for application ${displaySafe(plan.application_id)}`
    }: the plan written to ${terminalSafe(out)} lists none, nothing to apply\n`;
  }
  return `Plan for ${plan.entries.length} envelopes written to ${
    terminalSafe(out)
  }${plan.more ? " (more remain; plan again after applying)" : ""}\n` +
    `Review it, then: trace obs expiry-apply --plan ${
      shellWord(out)
    } --confirm "${plan.confirmation}" --archive-dir DIR${dataFlags}\n`;
}

const APPLY_FLAGS = {
  ...DATA_FLAGS,
  plan: { type: "string" },
  confirm: { type: "string" },
  "archive-dir": { type: "string" },
  "batch-size": { type: "string" },
} as const;

// Expiry deletes envelopes only; users expect the events to vanish from queries.
const EXPIRY_INDEX_NOTE =
  "Index rows and previews of these events are removed by trace obs retention, not by source expiry; until then they stay queryable";

/** `trace obs expiry-apply`: archive and delete a reviewed plan. */
export async function obsExpiryApply(
  args: string[],
  io: CliIo,
): Promise<number> {
  // An empty --confirm is answered with the confirmation the plan expects.
  const { values } = parseFlags("obs expiry-apply", args, APPLY_FLAGS, {
    emptyExplained: ["confirm"],
  });
  if (values.help) return showHelp(io, HELPS["expiry-apply"]!);
  const { plan: planPath, confirm, "archive-dir": archiveDir } = values;
  if (!planPath || confirm === undefined || !archiveDir) {
    throw new UsageError(
      "--plan FILE, --confirm STRING and --archive-dir DIR are required; see trace obs expiry-apply --help",
    );
  }
  const batchSize = intFlag("batch-size", values["batch-size"]);
  const plan = checkExpiryConfirmation(await readPlan(planPath), confirm);
  const label = plan.fingerprint.slice(0, 16);
  // Held until the apply ends: a second apply of this plan is refused.
  await using claim = await claimArchive(archiveDir, label);
  if (claim.removedPartials.length > 0) {
    io.err(
      `Removed ${
        plural(
          claim.removedPartials.length,
          "unfinished archive",
          "unfinished archives",
        )
      } of this plan that a stopped apply left in ${
        terminalSafe(archiveDir)
      }\n`,
    );
  }
  const archive = directoryArchive(
    archiveDir,
    label,
    (write) =>
      io.err(
        `Archived ${write.envelopes} envelopes to ${
          terminalSafe(write.path)
        } (${write.bytes} bytes, synced)\n`,
      ),
  );
  io.setExitNote?.(
    "Batches committed before it stay deleted; apply the same plan again to delete the rest",
  );
  const result = await withObsDb(
    values,
    io,
    (db) =>
      applyExpiry(db, plan, confirm, archive, {
        ...(batchSize === undefined ? {} : { batchSize }),
        // A first Ctrl-C stops between batches, each its own transaction.
        ...(io.interrupted ? { signal: io.interrupted } : {}),
      }),
    { writes: true },
  ).finally(() => io.setExitNote?.(null));
  if (values.json) {
    printJson(io, result);
    if (result.deleted > 0) io.err(`${EXPIRY_INDEX_NOTE}\n`);
  } else {
    io.out(
      `Source expiry ${result.status}: ${result.deleted} of ${result.planned} envelopes deleted${
        result.already_deleted > 0
          ? ` (${result.already_deleted} deleted before, as planned)`
          : ""
      }, ` +
        `${result.refused.length} refused, ${result.failed_batches.length} failed batches, ` +
        `${result.not_attempted} not attempted\n`,
    );
    for (const r of result.refused.slice(0, 20)) {
      io.out(`  seq ${r.seq}: ${r.code}\n`);
    }
    for (const f of result.failed_batches) {
      io.out(
        `  batch seq ${f.first_seq}..${f.last_seq} (${f.rows} rows): ${f.error}; plan again\n`,
      );
    }
    if (result.deleted > 0) io.out(`${EXPIRY_INDEX_NOTE}\n`);
  }
  if (!result.interrupted) return result.status === "applied" ? 0 : 1;
  io.err(interruptedExpiryNote(result));
  return 2;
}

/** What an interrupted apply did, and that the same plan finishes it. */
function interruptedExpiryNote(result: ExpiryResult): string {
  const done = `${result.archived} of ${result.planned} envelopes archived, ${
    plural(result.deleted, "envelope", "envelopes")
  } deleted`;
  if (result.archived === 0) {
    return `trace obs expiry-apply: interrupted before the archive: ${done}; apply the same plan again\n`;
  }
  return `trace obs expiry-apply: interrupted between batches, each committed: ${done}; ` +
    "apply the same plan again to delete the rest\n";
}

const HEALTH_FLAGS = { ...DATA_FLAGS, samples: { type: "string" } } as const;

/** `trace obs health`: versions, counts, links, latency and alerts. */
export async function obsHealthCommand(
  args: string[],
  io: CliIo,
): Promise<number> {
  const { values } = parseFlags("obs health", args, HEALTH_FLAGS);
  if (values.help) return showHelp(io, HELPS.health!);
  const samples = intFlag("samples", values.samples, {
    min: 1,
    max: MAX_LATENCY_SAMPLES,
  });
  const report = await withDataContext(
    dataFlags(values),
    io,
    { write: false, create: false, readOnly: true, readsIndex: true },
    async ({ db, dataDir }) =>
      obsHealth(db, {
        ...(samples === undefined ? {} : { latencySamples: samples }),
        erasureKey: await erasureKeyStateFor(db, dataDir),
      }),
  );
  if (values.json) printJson(io, report);
  else {
    const counts = report.counts;
    io.out(
      `Observability health: ${report.status} (schema ${
        report.schema.version ?? "missing"
      }/${report.schema.expected}, ` +
        `indexes ${
          report.indexes.ready
            ? "ready"
            : `missing ${report.indexes.missing.length}`
        })\n`,
    );
    if (counts) {
      io.out(
        `Rows: ${counts.envelopes} envelopes, ${counts.events} events, ${counts.resources} resources, ` +
          `${counts.previews} previews; ${counts.expiry_grants} expiry grants, ` +
          `${counts.erased_events} erased event ids\n`,
      );
    }
    if (report.links) {
      const links = report.links;
      io.out(
        `Links: ${links.missing_parent_links} missing parents, ${links.unindexed_envelopes} unindexed envelopes, ` +
          `${links.unregistered_coverage_profiles} unregistered profiles (checked at ${links.checked_at})\n`,
      );
    }
    if (report.latency) {
      io.out(
        `Query latency: p50 ${report.latency.p50_ms} ms, p95 ${report.latency.p95_ms} ms\n`,
      );
    }
    io.out(
      `Parity (all tenants): ${report.parity.status}${
        "checked_at" in report.parity
          ? ` at ${report.parity.checked_at}`
          : `; run trace obs parity${dataFlagsOf(values)}`
      }\n`,
    );
    for (const tenant of report.parity_by_tenant) {
      io.out(
        `Parity (application ${
          displaySafe(tenant.application_id ?? "")
        } only): ${tenant.status} at ${tenant.checked_at}\n`,
      );
    }
    for (const alert of report.alerts) {
      io.out(
        `  ${alert.severity} ${alert.code}${
          alert.count === null ? "" : ` (${alert.count})`
        }: ${alert.message}\n`,
      );
    }
  }
  return report.status === "failing" ? 1 : 0;
}
