/**
 * Refusals that name several problems of one request: the first few, each
 * with where it is, and a count of the rest. A producer whose exporter
 * sends many spans with the same fault learns its extent from one answer,
 * and the answer stays a line however large the request was.
 *
 * @module
 */

import { OtlpRequestError, OtlpTenantError } from "./error.ts";

/** How many problems one refusal names; the rest are counted. */
export const NAMED_PROBLEMS = 3;

/**
 * The problems of a request, at most one per place (a span, or a list
 * outside any span): the first found at a place is the one named. Only the
 * named ones are kept, so a request of many bad spans costs a count.
 */
export class ProblemList {
  readonly #places = new Set<string>();
  readonly #named: string[] = [];
  #restAreSpans = true;

  /** Notes `detail` at `place`, unless that place has a problem already. */
  add(place: string, detail: string): void {
    if (this.#places.has(place)) return;
    this.#places.add(place);
    if (this.#named.length < NAMED_PROBLEMS) this.#named.push(detail);
    else if (!SPAN_PLACE.test(place)) this.#restAreSpans = false;
  }

  /** How many places have a problem. */
  get size(): number {
    return this.#places.size;
  }

  /** The named problems joined, and how many more there are. */
  describe(): string {
    return namedFew(this.#named, this.size, this.#restAreSpans);
  }
}

/** Where a span sits in a request: `resourceSpans[0].scopeSpans[1].spans[2]`. */
export const SPAN_PLACE =
  /^resourceSpans\[\d+\]\.scopeSpans\[\d+\]\.spans\[\d+\]/;

function namedFew(
  named: readonly string[],
  total: number,
  restAreSpans: boolean,
): string {
  const shown = named.slice(0, NAMED_PROBLEMS).join("; ");
  const rest = total - Math.min(named.length, NAMED_PROBLEMS);
  if (rest <= 0) return shown;
  const noun = restAreSpans ? "span" : "problem";
  return `${shown}; and ${rest} more ${noun}${rest === 1 ? "" : "s"}`;
}

/**
 * One span that cannot be ingested as sent: what is wrong (`detail`, from
 * the field on), what to do (`remedy`), and whether it names a tenant its
 * request's credential may not write (`forbidden`, answered 403).
 */
export class SpanRefusal extends Error {
  readonly span: { index: number; path: string };
  readonly detail: string;
  readonly remedy: string;
  readonly forbidden: boolean;

  constructor(
    span: { index: number; path: string },
    detail: string,
    remedy: string,
    forbidden = false,
  ) {
    super(
      refusalText([{ span, detail, remedy, forbidden }], {
        refused: 1,
        total: 1,
      }),
    );
    this.name = "SpanRefusal";
    this.span = { index: span.index, path: span.path };
    this.detail = detail;
    this.remedy = remedy;
    this.forbidden = forbidden;
  }
}

/**
 * The error a request with refused spans is answered with: the first
 * refusal decides its kind (403 for a forbidden tenant, else 400), and its
 * message names the `named` spans (the first few) and counts the rest of
 * the `refused` out of `total`.
 */
export function spanRefusalError(
  named: readonly SpanRefusal[],
  counts: { refused: number; total: number },
): OtlpRequestError | OtlpTenantError {
  const message = refusalText(named, counts);
  return named[0]?.forbidden
    ? new OtlpTenantError(message)
    : new OtlpRequestError(message);
}

function refusalText(
  named: readonly Pick<
    SpanRefusal,
    "span" | "detail" | "remedy" | "forbidden"
  >[],
  counts: { refused: number; total: number },
): string {
  const verb = named.some((r) => r.forbidden) ? "ingest" : "map";
  const clauses = named.slice(0, NAMED_PROBLEMS).map(({ span, detail }) =>
    `span ${span.index} (${span.path}): ${detail}`
  );
  if (counts.refused === 1) {
    return `Cannot ${verb} OTLP ${clauses[0]}; ${named[0]!.remedy}`;
  }
  // One remedy fits all only when the named spans share it.
  const remedies = new Set(named.map((r) => r.remedy));
  const remedy = remedies.size === 1
    ? [...remedies][0]!
    : "fix them and resend the batch";
  return `Cannot ${verb} ${counts.refused} of ${counts.total} OTLP spans: ${
    namedFew(clauses, counts.refused, true)
  }; ${remedy}`;
}
