/**
 * The `detail` of an erasure request's audit entry (action `subject.erase`):
 * one line holding the refusal code if any, the erasure action, the
 * selector, the subject's keyed digest, the request id pairing the
 * `attempted` entry with its outcome, and the receipt once one exists. It
 * is written once per entry and chained, so its form stays as it is; this
 * is the one place that writes and reads it, so a listing can show it short.
 *
 * @module
 */

/** The action erasure requests are audited under. */
export const ERASURE_AUDIT_ACTION = "subject.erase";

/** What an erasure entry's detail holds. */
export interface ErasureDetail {
  /** Why it was refused or failed (`role`, `confirmation_missing`, …), or `null`. */
  code: string | null;
  /** A dry run or an applied erasure. */
  action: "obs.erasure.plan" | "obs.erasure.apply";
  /** How the subject was selected (`user`, `thread`, …). */
  selector: string;
  /** The subject's digest under the erasure key. */
  subject_digest: string;
  /** Pairs the `attempted` entry with its outcome. */
  request_id: string;
  /** The receipt an apply wrote, or `null`. */
  receipt_id: string | null;
}

/** The detail line of an erasure entry. */
export function formatErasureDetail(detail: ErasureDetail): string {
  const code = detail.code ? `${detail.code}; ` : "";
  const receipt = detail.receipt_id ? ` receipt ${detail.receipt_id}` : "";
  return `${code}${detail.action} ${detail.selector} ${detail.subject_digest} request ${detail.request_id}${receipt}`;
}

const DETAIL =
  /^(?:([^;]+); )?(obs\.erasure\.(?:plan|apply)) (\S+) (\S+) request (\S+)(?: receipt (\S+))?$/;

/** An erasure entry's detail read back, or `null` for a line of another form. */
export function parseErasureDetail(text: string): ErasureDetail | null {
  const match = DETAIL.exec(text);
  if (!match) return null;
  const [, code, action, selector, digest, request, receipt] = match;
  return {
    code: code ?? null,
    action: action as ErasureDetail["action"],
    selector: selector!,
    subject_digest: digest!,
    request_id: request!,
    receipt_id: receipt ?? null,
  };
}
