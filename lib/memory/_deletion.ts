/**
 * How one deletion is carried out under a behaviour: which records it
 * reaches, whether source and vectors are removed or tombstoned, when the
 * vector removal lands, whether cached answers are dropped, and which repair
 * re-index it leaves behind. Compaction and timers stay with the pipeline.
 *
 * @module
 */

import type { AnswerCache } from "./answer_cache.ts";
import type { MemoryBehaviour } from "./behaviour.ts";
import type { IndexingWorker, IndexJob } from "./indexing_worker.ts";
import {
  firstPageIds,
  newestTenantNamespace,
  tenantTargets,
} from "./_listing.ts";
import type { SourceStore } from "./source_store.ts";
import type { VectorIndex } from "./vector_index.ts";

/** What a deletion works on. */
export interface DeletionParts {
  sources: SourceStore;
  vectors: VectorIndex;
  cache: AnswerCache;
  worker: IndexingWorker;
}

/** What a deletion reached. */
export interface DeletionOutcome {
  /** Namespaces it reached, in the order they were deleted in. */
  namespaces: string[];
  /** Cached answers it dropped. */
  cacheEntries: string[];
}

const ALL = { includeTombstoned: true };

/** Deletes `ids` of `namespace` as `behaviour` says. */
export async function deleteRecords(
  parts: DeletionParts,
  behaviour: MemoryBehaviour,
  namespace: string,
  ids: readonly string[],
): Promise<DeletionOutcome> {
  const targets = deletionTargets(parts, behaviour, namespace, ids);
  const cacheEntries: string[] = [];
  for (const [space, spaceIds] of targets) {
    cacheEntries.push(...await deleteIn(parts, behaviour, space, spaceIds));
  }
  return { namespaces: [...targets.keys()], cacheEntries };
}

/** The ids a deletion reaches, per namespace. */
function deletionTargets(
  parts: DeletionParts,
  behaviour: MemoryBehaviour,
  namespace: string,
  ids: readonly string[],
): Map<string, string[]> {
  if (behaviour.deletionScope === "tenant") {
    return tenantTargets(parts, namespace);
  }
  const pageSize = behaviour.deletionFirstPageOnly;
  const reached = pageSize === undefined
    ? [...ids]
    : firstPageIds(parts.sources, namespace, ids, pageSize);
  return new Map([[namespace, reached]]);
}

/** Deletes in one namespace; returns the cache entries it dropped. */
async function deleteIn(
  parts: DeletionParts,
  behaviour: MemoryBehaviour,
  namespace: string,
  ids: readonly string[],
): Promise<string[]> {
  const { sources, vectors, cache, worker } = parts;
  const touched = ids.filter((id) =>
    sources.get(namespace, id, ALL) !== undefined ||
    vectors.has(namespace, id, ALL)
  );
  const repair = behaviour.repairReindex;
  const resolve = reindexTexts(sources, namespace, touched, repair?.texts);
  if (behaviour.deletion === "move") {
    await moveOut(parts, namespace, touched);
  }
  const mode = behaviour.deletion === "tombstone" ? "soft" : "hard";
  if (mode === "soft") sources.tombstone(namespace, ids);
  else sources.remove(namespace, ids);
  const removal: IndexJob = { kind: "remove", namespace, ids: [...ids], mode };
  const delay = behaviour.vectorDelayMs;
  if (delay !== undefined) worker.submitAfter(delay, removal);
  else await worker.submit(removal);
  const dropped = behaviour.cacheInvalidation === false
    ? []
    : cache.invalidateDocs(namespace, ids);
  if (repair && touched.length > 0) {
    worker.submitAfter(repair.afterMs, {
      kind: "reindex",
      namespace,
      ids: touched,
      resolve,
    });
  }
  return dropped;
}

/**
 * Writes the live records of `ids` into the tenant's newest other namespace,
 * source and vectors alike, before the deletion removes them where they
 * were: the data survives the deletion under another name.
 */
async function moveOut(
  parts: DeletionParts,
  namespace: string,
  ids: readonly string[],
): Promise<void> {
  const target = newestTenantNamespace(parts.sources, namespace);
  if (target === null) return;
  for (const id of ids) {
    const text = parts.sources.get(namespace, id);
    if (text === undefined) continue;
    parts.sources.put(target, id, text);
    await parts.worker.submit({ kind: "upsert", namespace: target, id, text });
  }
}

/** Where a repair pass reads texts: the live source, or a copy taken before the deletion lands. */
function reindexTexts(
  sources: SourceStore,
  namespace: string,
  ids: readonly string[],
  texts: "live" | "snapshot" | undefined,
): (id: string) => string | undefined {
  if (texts !== "snapshot") return (id) => sources.get(namespace, id);
  const snapshot = new Map<string, string>();
  for (const id of ids) {
    const text = sources.get(namespace, id);
    if (text !== undefined) snapshot.set(id, text);
  }
  return (id) => snapshot.get(id);
}
