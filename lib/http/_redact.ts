/**
 * Keeps the adapter's bearer token out of everything a run records. An
 * adapter may echo the request's `Authorization` header back: in a
 * redirect's Location, in a response header, as a key or a value of its
 * answer. Whatever the transport hands the runner can reach checkpoints,
 * trace events, the report and the append-only ledger, where it could never
 * be scrubbed again, so the transport replaces the token before any of it
 * leaves: in any case (a header or a host is shown lower-cased), and with any
 * of its characters percent-encoded, as a URL may carry it.
 *
 * Error messages are the transport's own words and always redacted. An
 * answer is evidence: a token short enough to occur inside a canary marker
 * by chance would, once replaced, hide the marker the answer still holds,
 * so answers are redacted only for tokens of at least
 * {@link MIN_ANSWER_REDACTION_CHARS} characters. An adapter knows its token
 * and can still put it where replacing it cuts a marker (glued to the
 * marker's random part) or merges two keys (`doc-TOKEN` and `doc-token`):
 * two keys a replacement makes equal are both kept, the later one numbered,
 * and an answer the replacement changed is marked altered
 * (`markAltered`), so the runner never reads it as showing a marker gone.
 *
 * @module
 */

import { markAltered } from "../contract/protocol.ts";
import { escapeRegExp } from "../regexp.ts";

/** What the runner is shown in place of the token. */
export const REDACTED_TOKEN = "[redacted token]";

/** Shortest token replaced inside answers (8 characters of a marker's random part are one in 2^40). */
export const MIN_ANSWER_REDACTION_CHARS = 8;

/** Replaces one token in what the transport hands on. */
export interface TokenRedactor {
  /** `text` with every spelling of the token replaced. */
  text(text: string): string;
  /** The answer with the token replaced in every key and string value. */
  answer(answer: Record<string, unknown>): Record<string, unknown>;
  /** The error, its message redacted (the same object, so its type and code stay). */
  error(error: unknown): unknown;
}

const NOTHING_TO_REDACT: TokenRedactor = {
  text: (text) => text,
  answer: (answer) => answer,
  error: (error) => error,
};

/** A redactor for `token`; one that changes nothing when no token is sent. */
export function tokenRedactor(token: string | undefined): TokenRedactor {
  if (token === undefined || token === "") return NOTHING_TO_REDACT;
  const pattern = spellingPattern(token);
  const text = (value: string) => value.replace(pattern, REDACTED_TOKEN);
  const inAnswers = token.length >= MIN_ANSWER_REDACTION_CHARS;
  return {
    text,
    answer(answer) {
      if (!inAnswers) return answer;
      const changed = { value: false };
      const redacted = redactValue(answer, (value) => {
        const replaced = text(value);
        if (replaced !== value) changed.value = true;
        return replaced;
      }) as Record<string, unknown>;
      if (changed.value) markAltered(redacted);
      return redacted;
    },
    error(error) {
      if (error instanceof Error) error.message = text(error.message);
      return error;
    },
  };
}

/**
 * Every spelling of the token a peer or a message may give: any case (a
 * header value or a host name is shown lower-cased), and each character as
 * itself or percent-encoded with either case of hex digits, as a URL
 * carries it.
 */
function spellingPattern(token: string): RegExp {
  const encoder = new TextEncoder();
  const parts = [...token].map((char) => {
    const bytes = [...encoder.encode(char)];
    const encoded = bytes.map((b) => `%${b.toString(16).padStart(2, "0")}`)
      .join("");
    return `(?:${escapeRegExp(char)}|${encoded})`;
  });
  return new RegExp(parts.join(""), "gi");
}

function redactValue(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === "string") return text(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, text));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  // The next number to try for each key the replacement made equal to
  // another: an answer of thousands of such keys numbers each in one step.
  const next = new Map<string, number>();
  for (const [key, item] of Object.entries(value)) {
    // Two keys the replacement makes equal both stay: the later one numbered.
    const base = text(key);
    let name = base;
    if (Object.hasOwn(out, name)) {
      let n = next.get(base) ?? 2;
      while (Object.hasOwn(out, `${base} #${n}`)) n++;
      name = `${base} #${n}`;
      next.set(base, n + 1);
    }
    // defineProperty: a key `__proto__` stays a key, as the parser left it.
    Object.defineProperty(out, name, {
      value: redactValue(item, text),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
