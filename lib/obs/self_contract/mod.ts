/**
 * Trace's own index as a staging adapter: the four operations of the
 * deletion contract answered from the observability index, its deletions
 * going through the erasure path, so `trace external run` (or the reference
 * suite, in process) can prove that Trace forgets what it is told to.
 *
 * May import the root, `ingest/mod.ts`, `maint/mod.ts`, `lib/db.ts`,
 * `lib/contract/protocol.ts` and the generic helpers.
 *
 * @module
 */

export {
  createSelfStagingAdapter,
  INVENTORY_BOUND,
  INVENTORY_SCAN_BOUND,
  type InventoryScan,
  SELF_NO_MATCH,
  SELF_STAGING_AGENT,
  SELF_STAGING_APPLICATION,
  type SelfErase,
  type SelfStagingAdapter,
  selfStagingEventId,
  type SelfStagingExchange,
  type SelfStagingOptions,
  type SelfStoredCounts,
} from "./adapter.ts";
