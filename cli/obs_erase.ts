/**
 * `trace obs erase` and `trace obs propagation`: subject erasure (dry run,
 * apply with the confirmation the dry run printed, receipt verification,
 * the list of receipts) and the per-application propagation setting.
 * Re-exported by `cli/obs.ts`, which holds the rest of the group.
 *
 * @module
 */

import * as v from "valibot";
import { resolve } from "node:path";
import type { TraceDb } from "../lib/db.ts";
import { OpaqueIdSchema } from "../lib/obs/mod.ts";
import { UsageError } from "../lib/errors.ts";
import { displaySafe, terminalSafe } from "../lib/display.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { formatHead } from "../lib/ledger/head.ts";
import { listReceipts, newReceiptId } from "../lib/ledger/erasure_receipts.ts";
import { requireLedger } from "../lib/ledger/schema.ts";
import { requireObs } from "../lib/obs/schema.ts";
import {
  describeSubjectKind,
  ERASURE_KEY_FILE,
  type ErasureFinish,
  type ErasurePlan,
  erasurePropagationSettings,
  type ErasureResult,
  type ErasureScope,
  type ErasureSubject,
  type ExpiredEnvelopes,
  finishErasures,
  firstIds,
  nothingToApply,
  nothingToApplyAdvice,
  parseErasureSubject,
  PROPAGATION_ENV,
  propagationByDefault,
  setErasurePropagation,
  tombstonedCounts,
  unreachedErasures,
} from "../lib/obs/maint/mod.ts";
import {
  type AppliedErasure,
  enableErasurePropagation,
  eraseSubject,
  erasureKeyFor,
  type ErasureVerification,
  planSubjectErasure,
  type SubjectErasurePlan,
  verifyErasure,
} from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import { type CliIo, mebibytes, readInput } from "./_io.ts";
import { shellWord } from "../lib/shell_word.ts";
import { plural } from "./_words.ts";
import { dataFlagsOf } from "./_run_outputs.ts";

const ERASE_HELP =
  `Usage: trace obs erase --application ID SUBJECT [--apply --confirm VALUE] [--json]
                       [--data-dir DIR] [--db URL]
       trace obs erase --verify RECEIPT_ID --application ID SUBJECT [--json] …
       trace obs erase --receipts [--json] …
       trace obs erase --finish [--json] …

SUBJECT is exactly one of --user ID, --anonymous, --thread ID, --memory ID or
--event-ids FILE (one event id per line, exactly as ingested: spaces count;
- reads stdin).

Removes the subject's events from every place Trace keeps them: previews,
resource refs (selection candidates and outcome artifacts), index rows,
source envelopes, replay drafts drawn from those events, and the records
of registered participants. Without --apply it only counts, per table and
per store, and prints the confirmation value, which pins what the dry run
saw; with --apply --confirm VALUE it erases exactly that, refusing when one
of those events changed or went since. Events of the subject written after
the dry run (a user who is still active) are not erased: the answer counts
them, and another dry run and apply erases them. An apply of event ids none
of which matches an event is refused, and nothing is written; the dry run of
such ids names the receipt that erased them already, if one did. The deletes
run with SQLite secure_delete and are followed by an incremental vacuum and
a WAL checkpoint, so the text leaves the database file too. A first Ctrl-C
before the deletes commit calls the erasure off (nothing changes); after
they commit, the checkpoint still runs and the answer says it was
interrupted. A second Ctrl-C exits at once and says what may be left in the
file.

Each applied erasure appends a receipt to the ledger's chain: a keyed digest
of the subject (HMAC-SHA256 with <data-dir>/${ERASURE_KEY_FILE}, never the raw
ids), the counts removed, the time, and the ledger head after it. The key is
made by trace obs init or trace serve, never by this command; when it is
missing while receipts exist, restore it from a backup.
--verify RECEIPT_ID checks, for the subject given again, that the digest
matches, that nothing the erasure covered remains and that the erasure
reached the database file (exit 0 clean, 1 when something remains or the
checkpoint after it never completed); events written after it are counted
apart. --receipts lists every receipt. --finish
completes erasures that committed but never reached the file (an
interrupted checkpoint, or a reader that kept the WAL): it checkpoints and
truncates the WAL and records that they did (exit 1 while a reader still
keeps the WAL).
`;

const ERASE_FLAGS = {
  ...DATA_FLAGS,
  application: { type: "string" },
  user: { type: "string" },
  anonymous: { type: "boolean", default: false },
  thread: { type: "string" },
  memory: { type: "string" },
  "event-ids": { type: "string" },
  apply: { type: "boolean", default: false },
  confirm: { type: "string" },
  verify: { type: "string" },
  receipts: { type: "boolean", default: false },
  finish: { type: "boolean", default: false },
} as const;

type EraseValues = ReturnType<
  typeof parseFlags<typeof ERASE_FLAGS>
>["values"];

/** `trace obs erase`: dry run, apply, verify a receipt, or list receipts. */
export async function obsErase(args: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags("obs erase", args, ERASE_FLAGS);
  if (values.help) return showHelp(io, ERASE_HELP);
  if (values.finish) return await finishCommand(values, io);
  if (values.receipts) return await listReceiptsCommand(values, io);
  const subject = await subjectFromFlags(values, io);
  if (values.verify !== undefined) {
    return await verifyCommand(values, values.verify, subject, io);
  }
  if (values.apply) return await applyCommand(values, subject, io);
  if (values.confirm !== undefined) {
    throw new UsageError(
      "--confirm takes effect only with --apply; add --apply to erase",
    );
  }
  const plan = await withDataContext(
    values,
    io,
    { write: false, create: false, readsIndex: true },
    async ({ db, dataDir }) => {
      // An index this build cannot read is refused before the key is read.
      await requireObs(db);
      // A dry run changes nothing, the key file included: it never makes one.
      return await planSubjectErasure(db, subject, {
        key: await erasureKeyFor(db, dataDir, { create: false }),
      });
    },
  );
  if (values.json) printJson(io, plan);
  else io.out(renderPlan(plan, subject, values));
  return 0;
}

async function applyCommand(
  values: EraseValues,
  subject: ErasureSubject,
  io: CliIo,
): Promise<number> {
  if (values.confirm === undefined) {
    throw new UsageError(
      "--apply needs --confirm VALUE: run the dry run first (without --apply) and pass the value it prints",
    );
  }
  const confirmation = values.confirm;
  // Reading it installs the handlers: a first Ctrl-C no longer ends the
  // process, so an erasure that committed always reaches the file.
  const signal = io.interrupted;
  const receiptId = newReceiptId();
  io.setExitNote?.("the erasure had not committed: nothing was erased");
  let applied: AppliedErasure;
  try {
    applied = await withDataContext(
      values,
      io,
      // The confirmation was made with the key the dry run read: never a new one.
      { write: true, erasureKey: false },
      async ({ db, dataDir }) => {
        // The confirmation was made with the key the dry run read: never a new one.
        const key = await erasureKeyFor(db, dataDir, { create: false });
        const done = await eraseSubject(db, subject, confirmation, {
          key,
          receiptId,
          ...(signal ? { signal } : {}),
          onCommit: () => io.setExitNote?.(committingNote(receiptId)),
        });
        io.setExitNote?.(null);
        return done;
      },
    );
  } finally {
    io.setExitNote?.(null);
  }
  // Only a signal after the commit gets here: one before it refused the erasure.
  const interrupted = signal?.aborted === true;
  if (values.json) {
    printJson(io, {
      ...applied,
      ...(interrupted ? { interrupted_after_commit: true } : {}),
    });
  } else io.out(renderApplied(applied, subject, interrupted, values));
  return 0;
}

/** What a second Ctrl-C leaves once the erasure may have committed. */
function committingNote(receiptId: string): string {
  return `the erasure was committing (receipt ${receiptId}; trace obs erase --receipts shows whether it did) and has not reached the database file: the erased text may remain in trace.db or its WAL until trace obs erase --finish completes`;
}

async function finishCommand(
  values: EraseValues,
  io: CliIo,
): Promise<number> {
  const others = values.application !== undefined ||
    values.user !== undefined || values.anonymous ||
    values.thread !== undefined || values.memory !== undefined ||
    values["event-ids"] !== undefined || values.apply ||
    values.confirm !== undefined || values.verify !== undefined ||
    values.receipts;
  if (others) {
    throw new UsageError(
      "--finish completes every erasure that has not reached the database file; give it without a subject, --apply, --confirm, --verify or --receipts",
    );
  }
  const finish = await withDataContext(
    values,
    io,
    { write: true },
    async ({ db }) => await finishErasures(db),
  );
  if (values.json) printJson(io, finish);
  else io.out(renderFinish(finish));
  // Nothing waiting has nothing to finish, whatever a reader does to the WAL.
  return finish.reached_file === false && finish.receipts.length > 0 ? 1 : 0;
}

async function verifyCommand(
  values: EraseValues,
  receiptId: string,
  subject: ErasureSubject,
  io: CliIo,
): Promise<number> {
  if (values.apply || values.confirm !== undefined) {
    throw new UsageError(
      "--verify checks a receipt; give it without --apply or --confirm",
    );
  }
  const verification = await withDataContext(
    values,
    io,
    { write: false, readOnly: true },
    async ({ db, dataDir }) => {
      await requireLedger(db);
      const key = await erasureKeyFor(db, dataDir, { create: false });
      return await verifyErasure(db, receiptId, subject, { key });
    },
  );
  if (values.json) printJson(io, verification);
  else io.out(renderVerification(verification, subject));
  return verification.clean ? 0 : 1;
}

async function listReceiptsCommand(
  values: EraseValues,
  io: CliIo,
): Promise<number> {
  const { receipts, unreached, remote } = await withDataContext(
    values,
    io,
    { write: false, readOnly: true },
    async ({ db }) => {
      await requireLedger(db);
      const receipts = await listReceipts(db);
      const unreached = receipts.length > 0
        ? new Set(await unreachedErasures(db))
        : new Set<string>();
      return { receipts, unreached, remote: db.path === null };
    },
  );
  const reached = (id: string) => remote ? null : !unreached.has(id);
  if (values.json) {
    printJson(io, {
      receipts: receipts.map((r) => ({
        ...r.receipt,
        seq: r.seq,
        head: formatHead(r.head),
        reached_file: reached(r.receipt.receipt_id),
      })),
    });
    return 0;
  }
  if (receipts.length === 0) {
    io.out("No erasure receipts yet: trace obs erase --apply records one\n");
  }
  for (const { receipt, seq } of receipts) {
    const pending = reached(receipt.receipt_id) === false
      ? "  NOT YET IN THE DATABASE FILE (trace obs erase --finish)"
      : "";
    // Metadata stays by design of the content scope, not by a failure.
    const kept = receipt.scope === "content"
      ? "  metadata (span names, app.* attributes) stays by design of scope content"
      : "";
    io.out(
      `${receipt.receipt_id}  ${receipt.erased_at}  ${receipt.trigger}  ${receipt.selector}/${receipt.scope}  ${
        plural(receipt.events, "event")
      }  (ledger entry ${seq})${kept}${pending}\n`,
    );
  }
  return 0;
}

/** The subject named by the flags, in canonical form. */
async function subjectFromFlags(
  values: EraseValues,
  io: CliIo,
): Promise<ErasureSubject> {
  if (values.application === undefined) {
    throw new UsageError(
      "--application ID is required, with one of --user, --anonymous, --thread, --memory or --event-ids; see trace obs erase --help",
    );
  }
  const input: Record<string, unknown> = { application_id: values.application };
  const given = [
    ["user_id", values.user],
    ["thread_id", values.thread],
    ["memory_id", values.memory],
  ] as const;
  for (const [key, value] of given) if (value !== undefined) input[key] = value;
  if (values.anonymous) input.anonymous = true;
  if (values["event-ids"] !== undefined) {
    input.event_ids = await readEventIds(values["event-ids"], io);
  }
  const selectors = Object.keys(input).length - 1;
  if (selectors !== 1) {
    throw new UsageError(
      `Give exactly one of --user, --anonymous, --thread, --memory or --event-ids (got ${selectors}); see trace obs erase --help`,
    );
  }
  return parseErasureSubject(input);
}

/** Most bytes an --event-ids list may hold (a million ids of 64 characters). */
const MAX_EVENT_IDS_BYTES = 64 * 1024 * 1024;

/**
 * One id per line, taken exactly: an id may begin or end with a space (ingest
 * accepts it), and trimming would erase the id without it, another event.
 * Empty lines are skipped.
 */
async function readEventIds(path: string, io: CliIo): Promise<string[]> {
  let text: string | null;
  try {
    text = await readInput(path, io, MAX_EVENT_IDS_BYTES);
  } catch (error) {
    throw new UsageError(
      `Cannot read --event-ids ${path}: ${fileProblem(error, "read")}`,
      { cause: error },
    );
  }
  if (text === null) {
    throw new UsageError(
      `--event-ids ${path} holds more than ${
        mebibytes(MAX_EVENT_IDS_BYTES)
      }; erase in smaller lists`,
    );
  }
  const ids: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const id = line;
    if (id === "") return;
    // Checked here so a refusal names the file's line, not a list position.
    const parsed = v.safeParse(OpaqueIdSchema, id);
    if (!parsed.success) {
      throw new UsageError(
        `--event-ids ${path} line ${index + 1}: the event id ${
          parsed.issues[0]!.message
        }; fix that line`,
      );
    }
    ids.push(id);
  });
  if (ids.length === 0) {
    throw new UsageError(
      `--event-ids ${path} lists no event id; put one id per line`,
    );
  }
  return ids;
}

function tableLine(counts: ErasurePlan["tables"]): string {
  // Only a content erasure reaches preview digests (envelopes stay, redacted).
  const digests = counts.preview_digests > 0
    ? `, ${counts.preview_digests} preview digests`
    : "";
  return `${counts.obs_envelopes} envelopes, ${counts.obs_events} index rows, ` +
    `${counts.obs_resources} resource refs, ${counts.obs_previews} previews` +
    digests;
}

function participantsLine(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0
    ? "none registered"
    : entries.map(([name, n]) => `${name} ${n}`).join(", ");
}

function subjectWords(subject: ErasureSubject): string {
  return `${
    describeSubjectKind(subject)
  } of application ${subject.application_id}`;
}

function renderPlan(
  plan: SubjectErasurePlan,
  subject: ErasureSubject,
  values: EraseValues,
): string {
  const s = plan.stores;
  return [
    `Erasure dry run for ${
      subjectWords(subject)
    } (subject ${plan.subject_digest})`,
    `  ${plural(plan.events, "event")}: ${tableLine(plan.tables)}`,
    ...unmatchedLine(plan, subject),
    `  by store: trace ${s.trace}, conversation ${s.conversation}, tool_log ${s.tool_log}`,
    `  participants: ${participantsLine(plan.participants)}`,
    ...archiveLines(plan, "dry_run", "  "),
    ...nextLines(plan, subject, values),
    "",
  ].join("\n");
}

/**
 * How to apply the plan; none for event ids that matched nothing, whose
 * apply is refused: what to check instead, with the command that verifies
 * the receipt that erased them already, when there is one.
 */
function nextLines(
  plan: SubjectErasurePlan,
  subject: ErasureSubject,
  values: EraseValues,
): string[] {
  if (nothingToApply(subject, plan.events)) {
    const earlier = plan.earlier_receipt_id;
    const advice = nothingToApplyAdvice(
      earlier,
      earlier === null
        ? { tombstoned: tombstonedCounts(subject, plan.erased_event_ids) }
        : { verifyCommand: verifyCommandLine(earlier, values) },
    );
    return [`Nothing was changed, and ${advice}`];
  }
  return [
    "Nothing was changed. To erase, run the same command with:",
    `  --apply --confirm "${plan.confirmation}"`,
  ];
}

/** `trace obs erase --verify` of `receiptId` with the subject and data flags this command was given. */
function verifyCommandLine(receiptId: string, values: EraseValues): string {
  return `trace obs erase --verify ${shellWord(receiptId)}${
    subjectFlagsOf(values)
  }${dataFlagsOf(values)}`;
}

/**
 * The subject's flags as given, an `--event-ids` file made absolute as the
 * data directory is (the command may be run from elsewhere).
 */
function subjectFlagsOf(values: EraseValues): string {
  const ids = values["event-ids"];
  const given: [string, string | undefined][] = [
    ["--application", values.application],
    ["--user", values.user],
    ["--thread", values.thread],
    ["--memory", values.memory],
    ["--event-ids", ids === undefined || ids === "-" ? ids : resolve(ids)],
  ];
  const words = given.flatMap(([flag, value]) =>
    value === undefined ? [] : [flag, value]
  );
  if (values.anonymous) words.push("--anonymous");
  return words.map((w) => ` ${shellWord(w)}`).join("");
}

/**
 * Ids are compared exactly, so a near miss (case, a space) matches nothing:
 * say so before an apply, and after one (the first five; `--json` lists
 * them all).
 */
function unmatchedLine(
  counted: {
    events: number;
    unmatched_event_ids?: string[];
    erased_event_ids?: string[];
  },
  subject: ErasureSubject,
): string[] {
  const where = `application ${subject.application_id}`;
  const unmatched = counted.unmatched_event_ids ?? [];
  const erased = counted.erased_event_ids ?? [];
  if (unmatched.length > 0) {
    return [
      `  ${unmatched.length} of the ${subject.ids.length} listed ids match no event of ${where} (ids are compared exactly: case and spaces count): ${
        firstIds(unmatched)
      }`,
      ...(erased.length > 0
        ? [
          `  of them, an earlier erasure removed ${erased.length} (the index keeps a tombstone of each): ${
            firstIds(erased)
          }`,
        ]
        : []),
    ];
  }
  if (counted.events > 0) return [];
  return [
    `  nothing matched in ${where}: ids are compared exactly (case and spaces count); trace events query --application ${
      shellWord(subject.application_id)
    } lists its events`,
  ];
}

/** Archive files a dry run's text names one per line; its `--json` lists them all. */
const ARCHIVES_NAMED = 20;

/**
 * Envelopes source expiry archived before, deleted since or not: the
 * archive files hold them, and no erasure opens those files, so each
 * recorded one is named with what to do, and those without a recorded
 * location are counted apart. A dry run names the first few; an apply
 * names every one, since the records go with the erased events and nothing
 * can list them afterwards.
 */
function archiveLines(
  expired: ExpiredEnvelopes & { scope: ErasureScope },
  answer: "dry_run" | "applied",
  indent = "",
): string[] {
  const total = expired.archived_envelopes + expired.expired_unrecorded;
  if (total === 0) return [];
  const kept = expired.archived_unexpired;
  const item = `${indent}  `;
  const named = answer === "applied"
    ? expired.expired_archives
    : expired.expired_archives.slice(0, ARCHIVES_NAMED);
  const more = expired.expired_archives.length - named.length;
  return [
    `${indent}Source expiry archived the ${
      total === 1 ? "envelope" : "envelopes"
    } of ${total} of these events earlier, ids and preview digests included; no erasure opens its archives, so clean them yourself, or delete them once no longer needed:`,
    ...named.map((archive) =>
      `${item}remove the subject's lines from ${
        terminalSafe(archive.location)
      } (${plural(archive.envelopes, "envelope")})`
    ),
    ...(more > 0
      ? [
        `${item}${more} more archive files hold some: --json names them all, and the apply names every one (the records go with the erased events)`,
      ]
      : []),
    ...(kept > 0
      ? [
        `${item}${
          keptLine(kept, answer === "applied" && expired.scope === "all")
        }`,
      ]
      : []),
    ...(expired.expired_unnamed > 0
      ? [
        `${item}${
          plural(expired.expired_unnamed, "envelope")
        } went to an archive that named no location (a library archive callback): remove the subject where that archive keeps its copies`,
      ]
      : []),
    ...(expired.expired_unrecorded > 0
      ? [
        `${item}${
          plural(expired.expired_unrecorded, "envelope")
        } expired before schema version 7, which recorded no archive location: search the --archive-dir of earlier trace obs expiry-apply runs for the subject's ids`,
      ]
      : []),
  ];
}

/** Envelopes an expiry archived but never deleted: still in the index, unless this erasure (scope `all`) just removed them. */
function keptLine(kept: number, removed: boolean): string {
  const [was, it, its] = kept === 1
    ? ["was", "it", "its"]
    : ["were", "them", "their"];
  const where = removed
    ? `this erasure removed ${it} from the index, not from ${its} archive`
    : `the index still holds ${it} too`;
  return `${kept} of them ${was} not deleted by source expiry (an apply stopped between its batches, or a batch failed): ${where}`;
}

/** A `content` erasure keeps metadata on purpose: say so, so it reads as neither a leak nor a complete removal. */
function contentScopeLine(scope: string): string[] {
  if (scope !== "content") return [];
  return [
    "Scope content: previews and their digests were erased; metadata (span names, app.* attributes, ids and times) stays by design of this scope, so it is neither a leak nor a complete removal",
  ];
}

function storageLine(result: ErasureResult): string {
  const reached = result.reached_file === null
    ? "remote database: the server's own settings decide what reaches its files"
    : result.reached_file
    ? "zeroed with secure_delete, WAL checkpointed into the file"
    : "zeroed with secure_delete, but a reader kept the WAL, so the erased text may remain in the file: run trace obs erase --finish once that reader ends";
  const bytes = result.storage
    ? `; ${result.storage.bytes_before} -> ${result.storage.bytes_after} bytes (${result.storage.method})`
    : "";
  return `Storage: ${reached}${bytes}`;
}

/**
 * The `--verify` command of the receipt an apply made, with the data flags
 * it was given: complete but for a user, thread or memory id, which output
 * after an erasure never echoes (the operator has it), so the line says which
 * flag to add.
 */
function checkLaterLine(
  receiptId: string,
  subject: ErasureSubject,
  values: EraseValues,
): string {
  const words = [
    "trace",
    "obs",
    "erase",
    "--verify",
    receiptId,
    "--application",
    subject.application_id,
  ];
  const ids = values["event-ids"];
  if (subject.kind === "anonymous") words.push("--anonymous");
  if (subject.kind === "events" && ids !== undefined) {
    words.push("--event-ids", ids === "-" ? ids : resolve(ids));
  }
  const command = words.map(shellWord).join(" ") + dataFlagsOf(values);
  const withheld: Record<string, string | undefined> = {
    user: "--user",
    thread: "--thread",
    memory: "--memory",
  };
  const flag = withheld[subject.kind];
  return flag === undefined
    ? `Check later: ${command}`
    : `Check later, adding the same ${flag}: ${command}`;
}

/** The command that reviews the subject again, without its ids (the operator has them). */
function againCommand(subject: ErasureSubject): string {
  const flag = {
    user: "--user",
    anonymous: "--anonymous",
    thread: "--thread",
    memory: "--memory",
    events: "--event-ids",
  }[subject.kind];
  const same = subject.kind === "anonymous" ? flag : `the same ${flag}`;
  return `trace obs erase --application ${subject.application_id} with ${same}`;
}

/** What an erasure bounded by its dry run left of the subject, and how to erase it. */
function laterLine(later: number, subject: ErasureSubject): string[] {
  if (later === 0) return [];
  return [
    `Not erased: ${
      plural(later, "event")
    } of the subject arrived after the dry run; ${rerunAdvice(subject)}`,
  ];
}

function renderApplied(
  applied: AppliedErasure,
  subject: ErasureSubject,
  interrupted: boolean,
  values: EraseValues,
): string {
  const { result, receipt } = applied;
  return [
    `Erased ${plural(result.events, "event")} of ${subjectWords(subject)}: ${
      tableLine(result.tables)
    }`,
    `  participants: ${participantsLine(result.participants)}`,
    ...unmatchedLine(result, subject),
    ...laterLine(result.later_events, subject),
    ...contentScopeLine(result.scope),
    ...archiveLines(result, "applied"),
    `Receipt ${receipt.receipt.receipt_id}: ledger entry ${receipt.seq}, head ${
      formatHead(receipt.head)
    }`,
    storageLine(result),
    ...(interrupted
      ? [
        "Interrupted: the erasure had already committed, so it was finished first, the checkpoint included",
      ]
      : []),
    checkLaterLine(receipt.receipt.receipt_id, subject, values),
    "",
  ].join("\n");
}

function renderVerification(
  v: ErasureVerification,
  subject: ErasureSubject,
): string {
  const r = v.remaining;
  const state = r.clean
    ? r.later_events === 0
      ? "nothing of it remains"
      : "nothing the erasure covered remains"
    : `${plural(r.events, "event")} ${r.events === 1 ? "remains" : "remain"}: ${
      tableLine(r.tables)
    }; participants: ${participantsLine(r.participants)}`;
  const file = v.reached_file === false
    ? "; but the erasure has not reached the database file (no checkpoint after it completed): the erased text may remain in trace.db or its WAL until trace obs erase --finish completes"
    : "";
  return `Receipt ${v.receipt_id} (ledger entry ${v.seq}, ${v.receipt.scope} of ${
    plural(v.receipt.events, "event")
  } on ${v.receipt.erased_at}): the subject matches; ${state}${file}${
    laterNote(v, subject)
  }\n${contentScopeLine(v.receipt.scope).map((line) => line + "\n").join("")}`;
}

/** Events of the subject written after the erasure's bound, and what they mean for this receipt. */
function laterNote(v: ErasureVerification, subject: ErasureSubject): string {
  const later = v.remaining.later_events;
  if (later === 0) return "";
  const events = `${plural(later, "event")} of the subject`;
  if (v.receipt.trigger === "propagation") {
    return `\n${events} written after the deletion (after index position ${v.receipt.up_to_seq}) are not part of this erasure`;
  }
  return `\nStill there: ${events} written after this erasure's dry run (after index position ${v.receipt.up_to_seq}), which it did not cover; to erase them, ${
    rerunAdvice(subject)
  }`;
}

/** How to erase what arrived after a dry run: review it in a new one. */
function rerunAdvice(subject: ErasureSubject): string {
  return `run the dry run again (${
    againCommand(subject)
  }) and apply the value it prints`;
}

function renderFinish(finish: ErasureFinish): string {
  const n = finish.receipts.length;
  const which = n === 0
    ? "No erasure was waiting to reach the database file"
    : `${plural(n, "erasure")} (${finish.receipts.join(", ")})`;
  if (finish.reached_file === null) {
    return `${which}; remote database: the server's own settings decide what reaches its files\n`;
  }
  if (finish.reached_file === false) {
    return `${which}${
      n === 0 ? "" : " still not in the database file"
    }: a reader keeps the WAL from being truncated; run trace obs erase --finish again once it ends\n`;
  }
  const bytes = finish.storage
    ? ` (${finish.storage.bytes_before} -> ${finish.storage.bytes_after} bytes)`
    : "";
  return n === 0
    ? `${which}; WAL checkpointed and truncated${bytes}\n`
    : `${which} reached the database file: WAL checkpointed and truncated${bytes}\n`;
}

const PROPAGATION_HELP =
  `Usage: trace obs propagation [--application ID (--on | --off | --default)] [--json]
                             [--data-dir DIR] [--db URL]

Shows or sets, per application, whether an ingested memory deletion erases
the content Trace holds of what it deleted, with a receipt: kind
memory_delete (the OTLP GenAI operation delete_memory) erases that of the
memory it names, or of the user when no memory is named; kind
memory_store_delete (delete_memory_store) erases that of the store it
names. An application without a setting follows
${PROPAGATION_ENV}=true|false in the ingesting process (default false;
set but empty, or any other value, is refused). Deletions of single records are only indexed.
`;

const PROPAGATION_FLAGS = {
  ...DATA_FLAGS,
  application: { type: "string" },
  on: { type: "boolean", default: false },
  off: { type: "boolean", default: false },
  default: { type: "boolean", default: false },
} as const;

/** `trace obs propagation`: show or set the per-application opt-in. */
export async function obsPropagation(
  args: string[],
  io: CliIo,
): Promise<number> {
  const { values } = parseFlags("obs propagation", args, PROPAGATION_FLAGS);
  if (values.help) return showHelp(io, PROPAGATION_HELP);
  const choices = [values.on, values.off, values.default].filter(Boolean);
  if (choices.length > 1) {
    throw new UsageError("Give one of --on, --off or --default, not several");
  }
  if (choices.length === 1 && values.application === undefined) {
    throw new UsageError("--on, --off and --default need --application ID");
  }
  // Alone it would list every application, which reads as that one's answer.
  if (choices.length === 0 && values.application !== undefined) {
    throw new UsageError(
      "--application needs one of --on, --off or --default; leave it out to list every setting",
    );
  }
  const setting = values.on ? true : values.off ? false : null;
  // Read first: a value that is refused changes no setting.
  const byDefault = propagationByDefault(io.env(PROPAGATION_ENV));
  const settings = await withDataContext(
    values,
    io,
    { write: false, create: false },
    async ({ db }) => {
      if (choices.length === 1) {
        await setErasurePropagation(db, values.application!, setting);
      }
      return await erasurePropagationSettings(db);
    },
  );
  if (values.json) {
    printJson(io, { default: byDefault, applications: settings });
    return 0;
  }
  io.out(
    `Default (${PROPAGATION_ENV} in this environment): ${
      byDefault ? "on" : "off"
    }\n`,
  );
  for (const s of settings) {
    io.out(`  ${displaySafe(s.application_id)}: ${s.enabled ? "on" : "off"}\n`);
  }
  return 0;
}

/**
 * Runs `fn` (an ingest) with memory-deletion propagation on, as every
 * ingesting process must; the key is read only if a deletion propagates.
 * `byDefault` is {@link propagationByDefault} of the environment, read by
 * the caller before it opens the database, so a bad value is refused first.
 */
export async function withErasurePropagation<T>(
  db: TraceDb,
  dataDir: string,
  io: CliIo,
  byDefault: boolean,
  fn: () => Promise<T>,
): Promise<T> {
  const stop = enableErasurePropagation({
    key: () => erasureKeyFor(db, dataDir),
    byDefault,
    onError: (message) => io.err(message + "\n"),
  });
  try {
    return await fn();
  } finally {
    stop();
  }
}
