/**
 * Keyset cursors: an opaque base64url token binding the last row's time and
 * `seq` to a digest of the filters it was issued under (lists compare as
 * sets, times as instants, so an equal filter spelled otherwise still fits). Continuing strictly
 * below that key means rows written at the head later never reappear.
 *
 * @module
 */

import { ConfigError, RefusedError } from "../../errors.ts";
import {
  canonicalJson,
  fromBase64Url,
  sha256Hex,
  toBase64Url,
} from "../../canonical_json.ts";
import type { TraceFilter } from "./filters.ts";

const CURSOR_VERSION = 1;

/** Position of the last row of a page. */
export interface CursorKey {
  ts: number;
  seq: number;
}

/** Encodes the key of the last row with the digest of its filters. */
export function encodeCursor(key: CursorKey, digest: string): string {
  const json = JSON.stringify({
    v: CURSOR_VERSION,
    ts: key.ts,
    seq: key.seq,
    f: digest,
  });
  return toBase64Url(new TextEncoder().encode(json));
}

/** Decodes `cursor` and checks it was issued under `digest`. */
export function decodeCursor(cursor: string, digest: string): CursorKey {
  let parsed: { v?: unknown; ts?: unknown; seq?: unknown; f?: unknown };
  try {
    parsed = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(fromBase64Url(cursor)),
    );
  } catch {
    throw new ConfigError(
      "Invalid cursor: not a cursor issued by this index; omit it to start again",
    );
  }
  if (
    parsed === null || typeof parsed !== "object" ||
    parsed.v !== CURSOR_VERSION ||
    !Number.isSafeInteger(parsed.ts) || !Number.isSafeInteger(parsed.seq) ||
    typeof parsed.f !== "string"
  ) {
    throw new ConfigError(
      "Invalid cursor: not a cursor issued by this index; omit it to start again",
    );
  }
  if (parsed.f !== digest) {
    throw new RefusedError(
      "Cannot continue with this cursor: it was issued for different filters; repeat the original filters or omit the cursor",
    );
  }
  return { ts: parsed.ts as number, seq: parsed.seq as number };
}

/** Order-insensitive canonical form of a filter (lists sorted and deduplicated). */
export function canonicalFilter(filter: TraceFilter): Record<string, unknown> {
  const sortedUnique = (list: readonly string[] | undefined) =>
    list?.length ? [...new Set(list)].sort() : undefined;
  return {
    ...filter,
    agent_ids: sortedUnique(filter.agent_ids),
    memory_ids: sortedUnique(filter.memory_ids),
    kinds: sortedUnique(filter.kinds),
    statuses: sortedUnique(filter.statuses),
    start_time: filter.start_time && new Date(filter.start_time).toISOString(),
    end_time: filter.end_time && new Date(filter.end_time).toISOString(),
    resources: filter.resources?.length
      ? [...new Set(filter.resources.map((ref) => canonicalJson(ref)))].sort()
      : undefined,
    store: filter.store ?? "all",
  };
}

/** Short digest that binds a cursor to one filter. */
export function filterDigest(filter: TraceFilter): string {
  return sha256Hex(canonicalJson(canonicalFilter(filter))).slice(0, 32);
}
