/**
 * `trace audit list|verify`: the audit trail of privileged operator actions
 * (reveals, account resolutions, artifact lookups, replay plans and drafts,
 * refused attempts). Both only read: they never create a file or table.
 *
 * @module
 */

import {
  type AuditEntry,
  type AuditVerification,
  listAudit,
  requireAuthSchema,
  SUBJECT_KINDS,
  type SubjectKind,
  verifyAudit,
} from "../lib/auth/mod.ts";
import { UsageError } from "../lib/errors.ts";
import { DATA_FLAGS, parseFlags, parseIntegerFlag, showHelp } from "./_args.ts";
import { printJson, withDataContext, withJsonErrors } from "./_context.ts";
import type { Command } from "./_io.ts";
import { tableLines } from "./_table.ts";

const LIST_HELP =
  `Usage: trace audit list [--limit 50] [--operator NAME] [--action ACTION]
                        [--subject KIND=VALUE] [--json] [--data-dir DIR] [--db URL]

Lists the newest audit entries first: when, operator and role, action,
outcome, the scope and target ids, and the stated reason. Entries never hold
content, tokens or emails; user, thread, memory, event and resource ids are
stored as keyed digests. --subject finds the entries naming one of them
(KIND is ${SUBJECT_KINDS.join(", ")}), e.g. --subject event_id=evt-42.
Every listed entry is checked against its digest; an altered one is refused
(exit 2; trace audit verify names it). --json prints NDJSON: one entry per
line, nothing when none match.
`;

const VERIFY_HELP =
  `Usage: trace audit verify [--json] [--data-dir DIR] [--db URL]

Recomputes every audit entry's digest and the chain linking them, and checks
the head records (which catch a removed last entry). Keep the printed head
digest elsewhere to detect a replaced file.

Exit codes: 0 intact, 1 broken (the first broken entry is named), 2 usage
error or no audit trail.
`;

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
  return await withJsonErrors(
    values,
    io,
    () =>
      withDataContext(values, io, READ, async ({ db }) => {
        await requireAuthSchema(db);
        const entries = await listAudit(db, {
          limit,
          ...(values.operator === undefined
            ? {}
            : { operator: values.operator }),
          ...(values.action === undefined ? {} : { action: values.action }),
          ...(subject ? { subject } : {}),
        });
        if (values.json) {
          for (const entry of entries) {
            printJson(io, { seq: entry.seq, ...entry.payload });
          }
        } else io.out(renderEntries(entries));
        return 0;
      }),
  );
};

/** `trace audit verify`. */
export const auditVerify: Command = async (args, io) => {
  const { values } = parseFlags("audit verify", args, DATA_FLAGS);
  if (values.help) return showHelp(io, VERIFY_HELP);
  return await withJsonErrors(
    values,
    io,
    () =>
      withDataContext(values, io, READ, async ({ db }) => {
        await requireAuthSchema(db);
        const result = await verifyAudit(db);
        if (values.json) printJson(io, result);
        else io.out(renderVerification(result));
        if (!result.broken) return 0;
        io.err(
          `trace audit verify: Audit trail verification failed at entry seq ${result.broken.seq}: ${result.broken.problem}; restore trace.db from a backup (trace ledger backup) or investigate who changed it\n`,
        );
        return 1;
      }),
  );
};

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
  return { kind: kind as SubjectKind, value: value.slice(at + 1) };
}

function renderEntries(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) {
    return "No audit entries match. Privileged actions in the trace UI (reveal, account resolution, artifact lookup, replay plans and drafts) are recorded here.\n";
  }
  const rows = entries.map((entry) => {
    const p = entry.payload;
    return [
      String(entry.seq),
      entry.created_at,
      `${entry.operator} (${String(p.role)})`,
      entry.action,
      entry.outcome + (p.detail ? `: ${String(p.detail)}` : ""),
      describeTargets(p.targets),
      p.reason === null ? "" : JSON.stringify(p.reason),
    ];
  });
  return tableLines([
    ["seq", "at", "operator", "action", "outcome", "targets", "reason"],
    ...rows,
  ], { align: ["right"] }).join("\n") + "\n";
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
    ? `; head seq ${result.head.seq} ${result.head.chain_digest}`
    : "";
  return `audit trail intact: ${result.entries} entr${
    result.entries === 1 ? "y" : "ies"
  }${head}\n`;
}
