/**
 * Messages between the write thread (`_write_worker.ts`) and the handle
 * that runs it (`write_thread.ts`). A plan goes back without its events:
 * the caller has them, and its fresh rows are its items that are not
 * duplicates. Private to `ingest/`.
 *
 * @module
 */

import type { EventIssue } from "../normalize.ts";
import type { BatchToWrite, IngestItemResult } from "./_plan.ts";

/** To the thread. */
export type WriteThreadRequest =
  | { type: "open"; path: string }
  | {
    type: "write";
    id: number;
    batches: readonly BatchToWrite[];
    checkpointPages: number;
  }
  | { type: "close" };

/** A batch's plan without its events. */
export interface SentPlan {
  items: IngestItemResult[];
  conflicts: EventIssue[];
  /**
   * The root the thread filed a rootless child under, by the child's item
   * index, where it is not the root the event came with (`_roots.ts`).
   */
  roots?: Record<number, string>;
}

/** From the thread. */
export type WriteThreadReply =
  | { type: "opened"; file: string | null }
  | { type: "written"; id: number; plans: SentPlan[] }
  | { type: "failed"; id: number; message: string }
  | { type: "closed" };
