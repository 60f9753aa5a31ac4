/**
 * The shape of an erasure receipt, which `ledger verify` checks on every
 * `erasure` entry. Pure values and checks only (no chain access), so the
 * chain walker can use them. Private to `lib/ledger/`.
 *
 * @module
 */

/** Schema tag of a receipt payload. */
export const RECEIPT_SCHEMA = "trace.erasure-receipt/1";

/** What started an erasure. */
export const RECEIPT_TRIGGERS = [
  "operator",
  "propagation",
  "staging_adapter",
] as const;
/** One of {@link RECEIPT_TRIGGERS}. */
export type ReceiptTrigger = typeof RECEIPT_TRIGGERS[number];

/** One erasure as chained: a keyed subject digest, counts and time. */
export interface ErasureReceipt {
  /** Format identifier. */
  schema: typeof RECEIPT_SCHEMA;
  /** `erasure-<UTC stamp>-<12 hex>`. */
  receipt_id: string;
  /** What started the erasure: an operator, propagation from a memory deletion, or the staging adapter. */
  trigger: ReceiptTrigger;
  /** How the subject was selected (`user`, `anonymous`, `thread`, `memory`, `events`). */
  selector: string;
  /** `all`, or `content` (previews only). */
  scope: string;
  /** `hmac-sha256:<64 hex>`. */
  subject_digest: string;
  /** The key that made the digest: `sha256:<16 hex>` of the key. */
  key_id: string;
  /** Only events written up to this seq were erased (`null`: all). */
  up_to_seq: number | null;
  /** Events erased. */
  events: number;
  /** Rows removed per index table. */
  tables: Record<string, number>;
  /** Events per store. */
  stores: Record<string, number>;
  /** Records removed or de-identified per participant. */
  participants: Record<string, number>;
  /** When the erasure was applied, ISO 8601. */
  erased_at: string;
  /** The deleting connection confirmed `secure_delete`. */
  secure_delete: boolean;
}

/** The form of a receipt id: `erasure-<UTC stamp>-<12 hex>`. */
export const RECEIPT_ID = /^erasure-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}$/;
const DIGEST = /^hmac-sha256:[0-9a-f]{64}$/;
/** The form of a key id: `sha256:` and 16 hex digits. */
export const KEY_ID = /^sha256:[0-9a-f]{16}$/;

// Exactly these keys: a receipt that carried anything else (a raw id, a note)
// could identify its subject.
const RECEIPT_KEYS = new Set([
  "schema",
  "receipt_id",
  "trigger",
  "selector",
  "scope",
  "subject_digest",
  "key_id",
  "up_to_seq",
  "events",
  "tables",
  "stores",
  "participants",
  "erased_at",
  "secure_delete",
]);

/** What is wrong with a receipt payload (as `ledger verify` reports it), or `null`. */
export function receiptProblem(payload: unknown): string | null {
  if (typeof payload !== "object" || payload === null) {
    return "its receipt is not a JSON object";
  }
  const r = payload as Record<string, unknown>;
  const extra = Object.keys(r).find((key) => !RECEIPT_KEYS.has(key));
  if (extra !== undefined) return `its receipt has an unknown field "${extra}"`;
  if (r.schema !== RECEIPT_SCHEMA) {
    return `its receipt schema is not ${RECEIPT_SCHEMA}`;
  }
  if (typeof r.receipt_id !== "string" || !RECEIPT_ID.test(r.receipt_id)) {
    return "its receipt_id is not a receipt id";
  }
  if (typeof r.subject_digest !== "string" || !DIGEST.test(r.subject_digest)) {
    return "its subject is not a keyed digest (hmac-sha256:<64 hex>)";
  }
  if (typeof r.key_id !== "string" || !KEY_ID.test(r.key_id)) {
    return "its key_id is not a key digest";
  }
  if (!(RECEIPT_TRIGGERS as readonly unknown[]).includes(r.trigger)) {
    return "its trigger is unknown";
  }
  for (const key of ["selector", "scope", "erased_at"]) {
    if (typeof r[key] !== "string") return `its ${key} is not a string`;
  }
  if (typeof r.secure_delete !== "boolean") {
    return "its secure_delete is not a boolean";
  }
  if (!isCount(r.events) || !(r.up_to_seq === null || isCount(r.up_to_seq))) {
    return "its events or up_to_seq is not a count";
  }
  for (const key of ["tables", "stores", "participants"]) {
    if (!isCounts(r[key])) return `its ${key} are not counts`;
  }
  return null;
}

/** The problem of a stored `erasure` entry whose id must equal its payload's. */
export function receiptEntryProblem(
  entityId: string,
  payload: unknown,
): string | null {
  const problem = receiptProblem(payload);
  if (problem) return problem;
  return (payload as { receipt_id: string }).receipt_id === entityId
    ? null
    : "its receipt_id differs from the entry's id";
}

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isCounts(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.values(value).every(isCount);
}
