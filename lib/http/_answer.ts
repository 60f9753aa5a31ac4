/**
 * What an adapter's answer means, in words its author can act on: a status
 * that is not 200 (a redirect with where it pointed, a refusal with what to
 * check about `token_env`), a body sent with a content coding, and a body
 * that is not one strict JSON object (what was wrong and where). Messages
 * never carry a response body or the token.
 *
 * @module
 */

import type { Operation } from "../contract/protocol.ts";
import {
  NOT_A_JSON_OBJECT,
  ProtocolError,
  type RequestFailure,
} from "../contract/protocol.ts";
import {
  parseJsonObject,
  StrictJsonError,
  type StrictJsonReason,
} from "../json/strict_json.ts";
import { isFieldName } from "../issues.ts";
import type { Http1Response } from "./http1.ts";

/** What the request carried, for the words of a refusal. */
export interface AnswerContext {
  /** The operation's URL, against which a relative Location resolves. */
  url: URL;
  /** `token_env` of the config, when it names one. */
  tokenEnv: string | undefined;
  /** Whether the request carried a bearer token (only ever over https). */
  tokenSent: boolean;
}

/** Longest Location shown in a message; anything longer is cut. */
const MAX_LOCATION_CHARS = 200;

/** Returns the answer's JSON object, or throws a {@link ProtocolError} that says what to fix. */
export function interpretAnswer(
  op: Operation,
  response: Http1Response,
  context: AnswerContext,
): Record<string, unknown> {
  const { status, body } = response;
  if (status >= 300 && status < 400) {
    throw fail(op, "redirect", redirectDetail(op, response, context), status);
  }
  if (status !== 200 || body === null) {
    throw fail(op, "http_status", statusDetail(status, context), status);
  }
  const coding = contentCoding(response.headers);
  if (coding !== null) {
    throw fail(
      op,
      "malformed_json",
      `the answer is compressed (Content-Encoding: ${coding}) though Trace asked for Accept-Encoding: identity; send the JSON uncompressed: check the server's compression middleware and the Content-Encoding header`,
      status,
    );
  }
  let text: string;
  try {
    // A leading UTF-8 byte order mark is dropped (RFC 8259 lets a parser ignore it); any other is JSON's business.
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch (error) {
    throw fail(
      op,
      "malformed_json",
      `${NOT_A_JSON_OBJECT.encoding}; send the JSON object encoded as UTF-8`,
      status,
      error,
    );
  }
  try {
    return parseJsonObject(text);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    throw fail(op, "malformed_json", jsonDetail(error), status, error);
  }
}

/** What to do about a strict JSON refusal, per reason. */
const JSON_ADVICE: Record<StrictJsonReason, string> = {
  empty: `${NOT_A_JSON_OBJECT.empty}; answer with one JSON object`,
  syntax: NOT_A_JSON_OBJECT.syntax,
  duplicate_key: "the answer repeats a key; send each key once",
  non_finite:
    "the answer holds a number JSON cannot carry (NaN, Infinity or out of range); send finite numbers",
  inexact_integer: "the answer holds an integer too large to read exactly",
  trailing_data:
    "the answer has more after its JSON object; send exactly one object",
  too_deep: "the answer nests too deeply",
  too_many_values: "the answer holds too many values",
  too_many_items: "the answer holds too many items",
  not_object:
    `${NOT_A_JSON_OBJECT.type} (an array, string, number or null); answer with one JSON object`,
};

function jsonDetail(error: StrictJsonError): string {
  const advice = JSON_ADVICE[error.reason];
  // Both say all there is: a position adds nothing.
  if (error.reason === "empty" || error.reason === "not_object") return advice;
  return `${advice} (${
    shownDetail(error)
  } at line ${error.line}, column ${error.column})`;
}

/**
 * The parser's detail, but a repeated key only when it reads as a field
 * name: the message goes into reports and the append-only ledger, and a key
 * may be answer text (a stored value, a marker, an address).
 */
function shownDetail(error: StrictJsonError): string {
  if (error.reason !== "duplicate_key") return error.detail;
  return error.key !== undefined && isFieldName(error.key)
    ? `duplicate key ${JSON.stringify(error.key)}`
    : "a repeated key that is not a field name";
}

/**
 * Statuses a server gives for a path or method it does not serve: most often
 * base_url names another service, or the adapter's path is missing from it.
 */
const NOT_AN_ADAPTER = new Set([404, 405, 501]);

function statusDetail(status: number, context: AnswerContext): string {
  const refused = status === 401
    ? "HTTP 401 Unauthorized"
    : status === 403
    ? "HTTP 403 Forbidden"
    : null;
  if (NOT_AN_ADAPTER.has(status)) {
    return `HTTP ${status} from POST ${
      clip(context.url.href)
    }, expected 200: check that base_url points at the trace-staging/1 adapter, which answers POST base_url/ingest, /query, /inventory and /delete`;
  }
  if (refused === null) return `HTTP ${status}, expected 200`;
  if (context.tokenSent) {
    return `${refused}, expected 200: the adapter refused the bearer token from the environment variable ${context.tokenEnv} (token_env); check that it holds the token the adapter expects and that the token may call this operation`;
  }
  if (context.url.protocol === "https:") {
    return `${refused}, expected 200: no bearer token was sent; set token_env in the config to the name of the environment variable that holds the adapter's token`;
  }
  return `${refused}, expected 200: no bearer token was sent, since Trace sends one (token_env) only over https://; serve the adapter over https and set token_env, or let it accept loopback requests without one`;
}

function redirectDetail(
  op: Operation,
  response: Http1Response,
  context: AnswerContext,
): string {
  const head =
    `redirected with HTTP ${response.status}; redirects are never followed`;
  const values = response.headers.get("location") ?? [];
  const target = values.length === 1
    ? URL.parse(values[0]!, context.url)
    : null;
  if (target === null || !/^https?:$/.test(target.protocol)) {
    return `${head} (the answer had no usable Location); set base_url to the adapter's own URL`;
  }
  // A redirect to another host, or from https to http, is the answer's
  // word only: it gets no base_url advice (a hostile adapter would steer
  // the token there), and its path is left out (a link may carry a secret).
  if (!sameHostSafe(context.url, target)) {
    return `${head} (Location: ${
      clip(target.origin)
    }, another host or plain http); set base_url to the adapter's own URL, after checking where that redirect points`;
  }
  // Only where it points: a query or credentials may hold a login secret.
  const shown = `${target.origin}${target.pathname}`;
  const suffix = `/${op}`;
  const base = target.pathname.endsWith(suffix)
    ? `${target.origin}${target.pathname.slice(0, -suffix.length)}`
    : null;
  const advice = base === null
    ? "set base_url to the adapter's own URL"
    : `set base_url to ${clip(base)}`;
  return `${head} (Location: ${clip(shown)}); ${advice}`;
}

/** The redirect stays on the adapter's host and does not drop from https to http. */
function sameHostSafe(from: URL, to: URL): boolean {
  return to.hostname === from.hostname &&
    !(from.protocol === "https:" && to.protocol === "http:");
}

function clip(text: string): string {
  return text.length > MAX_LOCATION_CHARS
    ? `${text.slice(0, MAX_LOCATION_CHARS)}…`
    : text;
}

/** The answer's content coding when it is not identity, else `null`. */
function contentCoding(headers: Map<string, string[]>): string | null {
  const codings = (headers.get("content-encoding") ?? [])
    .flatMap((value) => value.split(","))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0) return null;
  const named = codings.join(", ");
  // Header text is the peer's: show a coding only when it reads as one.
  return /^[a-z0-9._+-]+(?:, [a-z0-9._+-]+)*$/.test(named) &&
      named.length <= 40
    ? named
    : "(an unreadable coding)";
}

/** The error of a request to `/op` that failed for `detail`, with the status when one came back. */
export function fail(
  op: Operation,
  failure: RequestFailure,
  detail: string,
  status: number | undefined,
  cause?: unknown,
): ProtocolError {
  return new ProtocolError(
    failure,
    `Request /${op} failed: ${detail}`,
    status === undefined ? { cause } : { cause, status },
  );
}
