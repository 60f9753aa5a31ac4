/**
 * The records a run keeps of requests that gave no usable answer, and the
 * words they are told apart by: called off by an interrupt's bound, not
 * read after they arrived (an echoed token, a search cut short or failed),
 * or failed on their own. Reports keep only these words, so the readers of
 * a report (what to check first, the baseline's problems) ask this module
 * what a record means rather than match its sentences themselves.
 *
 * @module
 */

import { type Operation, ProtocolError } from "../contract/protocol.ts";
import { errorMessage } from "../errors.ts";
import type { AnswerSearchError } from "./marker/mod.ts";
import type { RequestErrorRecord } from "./report.ts";

/** A request in flight the bound after an interrupt ended. */
export function cutShortError(op: Operation, ms: number): ProtocolError {
  return new ProtocolError(
    "timeout",
    `Request /${op} failed: no answer within the ${
      Math.round(ms) / 1000
    } s left after the interrupt, so the request was called off`,
  );
}

const NOT_READ = "its answer was not read: ";
const ECHOED_TOKEN = "it echoed the bearer token";

/** Why an answer of `op` was not read: its search was cut short, or failed. */
export function unreadError(
  op: Operation,
  error: AnswerSearchError,
  budget: { ms: number; bounded: boolean },
): ProtocolError {
  const prefix = `Request /${op} failed: ${NOT_READ}`;
  if (error.reason === "failed") {
    return new ProtocolError("refused", `${prefix}${error.message}`);
  }
  const within = budget.bounded
    ? `the ${Math.round(budget.ms) / 1000} s left after the interrupt`
    : `its ${Math.round(budget.ms) / 1000} s timeout`;
  return new ProtocolError(
    "timeout",
    `${prefix}searching it for the marker took longer than ${within}, so the search was called off`,
  );
}

/** A search of an answer the transport rewrote that found no marker. */
export function alteredError(op: Operation): ProtocolError {
  return new ProtocolError(
    "refused",
    `Request /${op} failed: ${NOT_READ}${ECHOED_TOKEN}, which was replaced by [redacted token] before the search, and the replacement may have cut the marker, so the answer cannot show the marker gone; the adapter must never return its token`,
  );
}

/**
 * Why a request's answer was not read after it arrived, from the words this
 * module gives it (reports keep no other trace of it): it echoed the bearer
 * token, or its search was cut short or failed; `null` for a request that
 * failed on its own.
 */
export function unreadCause(
  error: RequestErrorRecord,
): "echoed_token" | "search" | null {
  const detail = requestDetail(error);
  if (!detail.startsWith(NOT_READ)) return null;
  return detail.startsWith(NOT_READ + ECHOED_TOKEN) ? "echoed_token" : "search";
}

/** A request the bound after an interrupt called off before it was sent. */
export function unsentError(op: Operation): ProtocolError {
  return new ProtocolError(
    "timeout",
    `Request /${op} failed: the time allowed after the interrupt had run out before it was sent, so the request was called off`,
  );
}

/**
 * The content-free record a failed request leaves in the report: a
 * protocol error as it is worded, anything else by its first line.
 */
export function toRecord(
  op: Operation,
  role: "test" | "control",
  error: unknown,
): RequestErrorRecord {
  if (error instanceof ProtocolError) {
    const record: RequestErrorRecord = {
      op,
      namespace: role,
      failure: error.failure,
      message: error.message,
    };
    if (error.status !== undefined) record.status = error.status;
    return record;
  }
  // A transport bug must not leak internals into a report: keep the first line only.
  return {
    op,
    namespace: role,
    failure: "refused",
    message: `/${op}: ${errorMessage(error)}`,
  };
}

/**
 * A request error's message without the operation it starts with, for a
 * sentence that names the operation itself: the same error then reads the
 * same for every operation.
 */
export function requestDetail(error: RequestErrorRecord): string {
  for (const prefix of [`Request /${error.op} failed: `, `/${error.op}: `]) {
    if (error.message.startsWith(prefix)) {
      return error.message.slice(prefix.length);
    }
  }
  return error.message;
}
