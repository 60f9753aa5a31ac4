/**
 * `trace audit list|verify|head`: the audit trail of privileged operator
 * actions (reveals, account resolutions, artifact lookups, replay plans and
 * drafts, erasures, refused attempts). All only read: they never create a
 * file or table. Stored text (reasons, ids) is printed with terminal
 * controls and bidirectional overrides escaped, in text and JSON alike.
 *
 * @module
 */

import {
  AUDITED_ACTIONS,
  type AuditEntry,
  auditHead,
  type AuditVerification,
  ERASURE_AUDIT_ACTION,
  type ErasureDetail,
  formatAuditHead,
  listAudit,
  parseAuditHead,
  parseErasureDetail,
  requireAuthSchema,
  restoreAuthGuards,
  SUBJECT_KINDS,
  type SubjectKind,
  verifyAudit,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import { errorMessage, UsageError } from "../lib/errors.ts";
import { displaySafe } from "../lib/display.ts";
import { ERASURE_KEY_FILE, erasureKey } from "../lib/obs/maint/mod.ts";
import { erasureDigestOf } from "../lib/runs/mod.ts";
import { quoteValue } from "../lib/echo.ts";
import { closestName } from "../lib/suggest.ts";
import { DATA_FLAGS, parseFlags, parseIntegerFlag, showHelp } from "./_args.ts";
import {
  reportGuards,
  RESTORE_ADVICE,
  RESTORE_GUARDS,
  restoreGuardsIfAsked,
  withRestoreSteps,
} from "./_guards.ts";
import {
  type ContextOptions,
  type DataContext,
  type DataFlags,
  printJson,
  withDataContext,
  withJsonErrors,
} from "./_context.ts";
import type { CliIo, Command } from "./_io.ts";
import { tableLines } from "./_table.ts";

const LIST_HELP =
  `Usage: trace audit list [--limit 50] [--operator NAME] [--action ACTION]
                        [--subject KIND=VALUE] [--json] [--data-dir DIR] [--db URL]

Lists the newest audit entries first: when, operator and role, action,
outcome, the scope and target ids, and the stated reason. Entries never hold
content, tokens or emails; user, thread, memory, event and resource ids are
stored as keyed digests. --subject finds the entries naming one of them
(KIND is ${SUBJECT_KINDS.join(", ")}), e.g. --subject event_id=evt-42,
erasure requests among them: those name their subject by its digest under
<data-dir>/${ERASURE_KEY_FILE}, which is read (never created) to find them
(an erasure of several event ids is found by none of them alone).
An erasure request shows as subject.erase plan or apply, its outcome, and
its selector with a digest prefix (user=#9195ac18b994); --json prints its
whole detail (the full digest, request id and receipt). --action is one of
${AUDITED_ACTIONS.join(", ")}.
The whole trail is verified first, as trace audit verify does: a broken
trail is refused (exit 2; trace audit verify names the entry). --json prints
one object, {schema: "trace.audit-list/1", entries}, entries newest first
and [] when none match. Control characters and bidirectional overrides in
stored text are printed escaped (\\u{…} in text, \\uXXXX in JSON).
`;

const VERIFY_HELP =
  `Usage: trace audit verify [--expect-head HEAD] [--restore-guards] [--json] [--data-dir DIR] [--db URL]

Recomputes every audit entry's digest, checks each column against the chained
entry and the chain linking them, the numbering (a missing seq is a removed
entry), the newest head record and the tables' sequences (entries removed from
the end), and the subject key the entries' digests were made with (each
entry written since payload version 2 names it by fingerprint). An empty
trail beside a subject key or a replay draft, which only an append writes,
was removed whole: that fails too. With --expect-head HEAD (as printed
earlier by trace audit head, kept outside the database) it also checks that
the trail still extends that head: entries removed from its end with their
head records and both sequences wound back, or a replaced file, fail. Opens
the database read-only.

It also checks the trail's guards, the triggers that make its tables refuse
UPDATE and DELETE: one dropped or changed with an outside tool is named in a
warning. --restore-guards re-creates them with the trail's own migration
statements, after verifying (this opens the database for writing; it adds
triggers and changes no row). --json prints {schema: "trace.audit-verify/1",
ok, entries, head, expected_head, broken, restore_steps, missing_guards}
(restore_steps: where the steps to restore a backup are, when broken) (and
restored_guards with --restore-guards).

Exit codes: 0 intact (also with a guard missing: see the warning), 1 broken
(the first broken entry is named), 2 usage error or no audit trail.
`;

const HEAD_HELP = `Usage: trace audit head [--json] [--data-dir DIR] [--db URL]

Prints the audit trail's head, SEQ:sha256:<digest>: the number and chain
digest of its newest entry, after verifying the trail up to it. Keep it
somewhere the database cannot reach (a ticket, a log, another machine) and
check later with trace audit verify --expect-head HEAD that the trail still
extends it.
`;

const VERIFY_FLAGS = {
  ...DATA_FLAGS,
  "expect-head": { type: "string" },
  "restore-guards": { type: "boolean" },
} as const;

/** Commands here only read, and open the database read-only. */
const READ = { write: false, readOnly: true } as const;

const LIST_FLAGS = {
  ...DATA_FLAGS,
  limit: { type: "string" },
  operator: { type: "string" },
  action: { type: "string" },
  subject: { type: "string" },
} as const;

/** `trace audit list`. */
export const auditList: Command = async (args, io) => {
  const { values } = parseFlags("audit list", args, LIST_FLAGS);
  if (values.help) return showHelp(io, LIST_HELP);
  const limit =
    parseIntegerFlag("limit", values.limit, { min: 1, max: 10_000 }) ??
      50;
  const subject = values.subject === undefined
    ? undefined
    : parseSubject(values.subject);
  if (values.action !== undefined) requireAuditedAction(values.action);
  return await withTrail(values, io, async (db, { dataDir }) => {
    const naming = subject ? await erasureNaming(subject, dataDir) : {};
    const entries = await listAudit(db, {
      limit,
      ...(values.operator === undefined ? {} : { operator: values.operator }),
      ...(values.action === undefined ? {} : { action: values.action }),
      ...(subject ? { subject } : {}),
      ...(naming.digest ? { erasureDigest: naming.digest } : {}),
    });
    if (naming.problem && await erasuresListed(db, values)) {
      io.err(
        `warning: erasure requests (action subject.erase) name their subject under ${ERASURE_KEY_FILE}, so none of them is matched: ${naming.problem}\n`,
      );
    }
    if (values.json) printJson(io, auditListAnswer(entries));
    else io.out(renderEntries(entries));
    return 0;
  });
};

/**
 * Whether the trail holds an erasure entry (action subject.erase) that this
 * listing's --operator and --action would show: only such an entry goes
 * unmatched without the erasure key. A data directory that never erased
 * anything has no key, and nothing to warn about. Asked only when the key
 * cannot be read.
 */
async function erasuresListed(
  db: TraceDb,
  values: { operator?: string | undefined; action?: string | undefined },
): Promise<boolean> {
  const action = values.action ?? ERASURE_AUDIT_ACTION;
  if (action !== ERASURE_AUDIT_ACTION) return false;
  const erasures = await listAudit(db, {
    limit: 1,
    action,
    ...(values.operator === undefined ? {} : { operator: values.operator }),
  });
  return erasures.length > 0;
}

/** The answer of `trace audit list --json`: one object, its list empty when nothing matches. */
function auditListAnswer(entries: AuditEntry[]): {
  schema: "trace.audit-list/1";
  entries: Record<string, unknown>[];
} {
  return {
    schema: "trace.audit-list/1",
    entries: entries.map((entry) => ({ seq: entry.seq, ...entry.payload })),
  };
}

/** `trace audit verify`. */
export const auditVerify: Command = async (args, io) => {
  const { values } = parseFlags("audit verify", args, VERIFY_FLAGS);
  if (values.help) return showHelp(io, VERIFY_HELP);
  const expected = values["expect-head"] === undefined
    ? undefined
    : parseAuditHead(values["expect-head"]);
  const restore = values["restore-guards"] === true;
  return await withTrail(values, io, async (db) => {
    const verified = await verifyAudit(
      db,
      expected ? { expectHead: expected } : {},
    );
    const result = await restoreGuardsIfAsked(
      verified,
      restore,
      () => restoreAuthGuards(db),
    );
    if (values.json) printJson(io, withRestoreSteps(result));
    else io.out(renderVerification(result));
    reportGuards(io, "audit", result);
    if (!result.broken) return 0;
    io.err(
      `trace audit verify: Audit trail verification failed at entry seq ${result.broken.seq}: ${result.broken.problem}; ${RESTORE_ADVICE}\n`,
    );
    return 1;
  }, restore ? RESTORE_GUARDS : READ);
};

/** `trace audit head`: the verified head, to keep outside the database. */
export const auditHeadCommand: Command = async (args, io) => {
  const { values } = parseFlags("audit head", args, DATA_FLAGS);
  if (values.help) return showHelp(io, HEAD_HELP);
  return await withTrail(values, io, async (db) => {
    const head = await auditHead(db);
    if (values.json) printJson(io, head);
    else {
      // The head alone on stdout, so `H=$(trace audit head)` keeps just it.
      io.out(`${head.head}\n`);
      io.err(
        `${
          entryCount(head.entries)
        }; check later with: trace audit verify --expect-head ${head.head}\n`,
      );
    }
    return 0;
  });
};

/** Runs `run` on the database opened read-only, once its audit tables are known to exist; a failure is answered as JSON with --json. */
function withTrail(
  flags: DataFlags & { json?: boolean | undefined },
  io: CliIo,
  run: (db: TraceDb, context: DataContext) => Promise<number>,
  access: ContextOptions = READ,
): Promise<number> {
  return withJsonErrors(
    flags,
    io,
    () =>
      withDataContext(flags, io, access, async (context) => {
        await requireAuthSchema(context.db);
        return await run(context.db, context);
      }),
  );
}

/**
 * How erasure entries name `subject`, under the data directory's erasure
 * key (read, never created or changed); without a readable key, why not
 * (the other entries are still listed, then a warning says so).
 */
async function erasureNaming(
  subject: { kind: SubjectKind; value: string },
  dataDir: string,
): Promise<{
  digest?: (applicationId: string) => string | null;
  problem?: string;
}> {
  try {
    const key = await erasureKey(dataDir, { create: false });
    return { digest: erasureDigestOf(subject, key) };
  } catch (error) {
    return { problem: errorMessage(error) };
  }
}

function parseSubject(value: string): { kind: SubjectKind; value: string } {
  const at = value.indexOf("=");
  const kind = value.slice(0, Math.max(at, 0));
  if (at < 1 || !(SUBJECT_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(
      `--subject takes KIND=VALUE with KIND one of ${
        SUBJECT_KINDS.join(", ")
      }; see trace audit list --help`,
    );
  }
  const id = value.slice(at + 1);
  if (id === "") {
    throw new UsageError(
      `--subject ${kind}= has no value: give the id after =, e.g. --subject event_id=evt-42`,
    );
  }
  return { kind: kind as SubjectKind, value: id };
}

/** An action no entry can have would list nothing, which reads as "never happened". */
function requireAuditedAction(action: string): void {
  if ((AUDITED_ACTIONS as readonly string[]).includes(action)) return;
  const near = closestName(action, AUDITED_ACTIONS);
  throw new UsageError(
    `Unknown --action ${quoteValue(action)}${
      near ? ` (did you mean ${near}?)` : ""
    }: audited actions are ${AUDITED_ACTIONS.join(", ")}`,
  );
}

function renderEntries(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) {
    return "No audit entries match. Privileged actions through the trace UI and its API (reveal, account resolution, artifact lookup, replay plans and drafts, erasure requests) are recorded here; an erasure by trace obs erase is listed by trace obs erase --receipts.\n";
  }
  const rows = entries.map((entry) => {
    const p = entry.payload;
    const erasure =
      entry.action === ERASURE_AUDIT_ACTION && typeof p.detail === "string"
        ? parseErasureDetail(p.detail)
        : null;
    const detail = erasure ? erasure.code : p.detail;
    return [
      ...[
        String(entry.seq),
        entry.created_at,
        `${entry.operator} (${String(p.role)})`,
        erasure ? `${entry.action} ${erasureVerb(erasure)}` : entry.action,
        entry.outcome + (detail ? `: ${String(detail)}` : ""),
        [describeTargets(p.targets), erasure ? erasureTarget(erasure) : ""]
          .filter((part) => part !== "").join(" "),
      ].map(displaySafe),
      typeof p.reason === "string" ? quoted(p.reason) : "",
    ];
  });
  return tableLines([
    ["seq", "at", "operator", "action", "outcome", "targets", "reason"],
    ...rows,
  ], { align: ["right"] }).join("\n") + "\n";
}

/** `plan` for a dry run, `apply` for an applied erasure. */
function erasureVerb(detail: ErasureDetail): string {
  return detail.action === "obs.erasure.apply" ? "apply" : "plan";
}

/** The erased subject as a target: its selector and a digest prefix (`--json` has the rest). */
function erasureTarget(detail: ErasureDetail): string {
  return `${detail.selector}=${shortValue(detail.subject_digest)}`;
}

/** `text` made display-safe, in double quotes, its quotes escaped. */
function quoted(text: string): string {
  return `"${displaySafe(text).replaceAll('"', '\\"')}"`;
}

/** Target ids in a short form (digests cut to 12 hex digits). */
function describeTargets(targets: unknown): string {
  if (targets === null || typeof targets !== "object") return "";
  return Object.entries(targets as Record<string, unknown>)
    .map(([key, value]) => `${key}=${shortValue(value)}`)
    .join(" ");
}

function shortValue(value: unknown): string {
  if (value === null) return "anonymous";
  if (typeof value === "object") {
    const ref = value as { type?: string; id?: string };
    return `${ref.type}:${shortValue(ref.id)}`;
  }
  const text = String(value);
  return text.startsWith("hmac-sha256:") ? `#${text.slice(12, 24)}` : text;
}

function renderVerification(result: AuditVerification): string {
  if (result.broken) {
    return `audit trail BROKEN at seq ${result.broken.seq}: ${result.broken.problem}\n`;
  }
  const head = result.head
    ? `; head ${formatAuditHead(result.head)}`
    : "; head 0 (empty)";
  const expected = result.expected_head
    ? `; extends the expected head ${result.expected_head.head}`
    : "";
  return `audit trail intact: ${
    entryCount(result.entries)
  }${head}${expected}\n`;
}

/** `1 entry`, `2 entries`. */
function entryCount(n: number): string {
  return `${n} entr${n === 1 ? "y" : "ies"}`;
}
