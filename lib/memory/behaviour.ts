/**
 * How a memory pipeline behaves, as plain data. The empty behaviour is the
 * correct design: deletion removes source and vectors synchronously and drops
 * the cached answers built from them, and the inventory counts everything
 * stored. Each field describes one known way to get deletion wrong (or slow),
 * so a demo defect or a reference system is a value, not a code path.
 *
 * @module
 */

import { ANSWER_RENDERINGS, type AnswerRendering } from "./rendering.ts";

/** When a repair pass re-embeds the ids a deletion touched, and where it reads their texts. */
export interface RepairReindex {
  /** Delay after the deletion (ms). */
  readonly afterMs: number;
  /**
   * `live`: the source as it is when the pass runs, so deleted ids stay gone.
   * `snapshot`: texts captured before the deletion, which re-adds deleted vectors.
   */
  readonly texts: "live" | "snapshot";
}

/** The deletion, indexing, query and inventory behaviour of one pipeline; every field defaults to the correct design. */
export interface MemoryBehaviour {
  /**
   * What deletion does to source and vector records (default `remove`);
   * `move` re-files them under the tenant's newest other namespace (see
   * `deletionScope`) instead of removing them, and removes them when the
   * tenant has none.
   */
  readonly deletion?: "remove" | "tombstone" | "move";
  /**
   * Which records a deletion reaches (default `ids`, the supplied ids);
   * `tenant` wipes every namespace sharing the tenant prefix (the part before
   * the first `-`), control namespaces included.
   */
  readonly deletionScope?: "ids" | "tenant";
  /** Deletion finds the ids by paging the shared table with this page size, but reads only page one. */
  readonly deletionFirstPageOnly?: number;
  /** Vector deletion reaches the index this many ms after the acknowledgement (default: before it). */
  readonly vectorDelayMs?: number;
  /** Whether deletion drops the cached answers built from the deleted ids (default `true`). */
  readonly cacheInvalidation?: boolean;
  /** Tombstones are purged this many ms after each deletion (default: never). */
  readonly compactAfterMs?: number;
  /** A repair re-index pass after each deletion (default: none). */
  readonly repairReindex?: RepairReindex;
  /**
   * Every ingest also parks a re-embedding job carrying its text behind a
   * stalled worker; the backlog runs when the pipeline's `releaseBacklog()`
   * is called, and writes back whatever was deleted since.
   */
  readonly stalledReembedding?: boolean;
  /** Whether search and quoting also read tombstoned records (default `false`). */
  readonly searchTombstoned?: boolean;
  /** Whether inventory counts include tombstoned records (default `true`: it counts what is stored). */
  readonly inventoryCountsTombstones?: boolean;
  /**
   * The inventory reads only the first page, of this size, of a listing that
   * puts live records first: archived (tombstoned) records are never counted.
   */
  readonly inventoryFirstPageOnly?: number;
  /**
   * Whether the inventory counts the answer cache (default `true`); `false`:
   * the cache lives where the adapter cannot enumerate it, so it reports 0.
   */
  readonly inventoryCountsCache?: boolean;
  /** What the inventory answers as `complete` (default `true`). */
  readonly inventoryComplete?: boolean;
  /**
   * How query answers are rendered before they are returned, in order
   * (default: none, the stored text as is). Rendering changes the spelling of
   * an answer, never what it contains.
   */
  readonly answerRendering?: readonly AnswerRendering[];
}

/** The correct design: every field at its default. */
export const CORRECT_BEHAVIOUR: MemoryBehaviour = Object.freeze({});

const DELAYS = ["vectorDelayMs", "compactAfterMs"] as const;
const PAGE_SIZES = ["deletionFirstPageOnly", "inventoryFirstPageOnly"] as const;

/** Throws a `RangeError` naming the first delay or page size that is not usable. */
export function checkBehaviour(behaviour: MemoryBehaviour): void {
  for (const field of DELAYS) checkInteger(field, behaviour[field], 0);
  checkInteger("repairReindex.afterMs", behaviour.repairReindex?.afterMs, 0);
  for (const field of PAGE_SIZES) checkInteger(field, behaviour[field], 1);
  for (const rendering of behaviour.answerRendering ?? []) {
    if (!(ANSWER_RENDERINGS as readonly string[]).includes(rendering)) {
      throw new RangeError(
        `Cannot build a memory pipeline: unknown answerRendering ${
          JSON.stringify(rendering)
        }; valid renderings: ${ANSWER_RENDERINGS.join(", ")}`,
      );
    }
  }
}

function checkInteger(
  field: string,
  value: number | undefined,
  min: number,
): void {
  if (value === undefined || (Number.isSafeInteger(value) && value >= min)) {
    return;
  }
  throw new RangeError(
    `Cannot build a memory pipeline: ${field} must be an integer of at least ${min}, got ${value}`,
  );
}
