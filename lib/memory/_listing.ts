/**
 * Which records a deletion reaches, read from the stores' shared listing:
 * the supplied ids, only those on the first page of a paged scan, or every
 * record of every namespace of the tenant.
 *
 * @module
 */

import type { AnswerCache } from "./answer_cache.ts";
import type { SourceStore } from "./source_store.ts";
import type { VectorIndex } from "./vector_index.ts";

/** Stores a deletion scope is resolved against. */
export interface ScopeStores {
  sources: SourceStore;
  vectors: VectorIndex;
  cache: AnswerCache;
}

const ALL = { includeTombstoned: true };

/** The shared table in storage order: namespaces as created, records as written. */
export function* sharedListing(
  sources: SourceStore,
): Generator<{ namespace: string; id: string }> {
  for (const namespace of sources.namespaces()) {
    for (const id of sources.ids(namespace, ALL)) yield { namespace, id };
  }
}

/** The supplied ids that a scan reading only the first `pageSize` rows finds. */
export function firstPageIds(
  sources: SourceStore,
  namespace: string,
  ids: readonly string[],
  pageSize: number,
): string[] {
  const wanted = new Set(ids);
  const found: string[] = [];
  let seen = 0;
  for (const entry of sharedListing(sources)) {
    if (seen++ >= pageSize) break;
    if (entry.namespace === namespace && wanted.has(entry.id)) {
      found.push(entry.id);
    }
  }
  return found;
}

/** Every namespace sharing `namespace`'s tenant prefix, each with all its ids. */
export function tenantTargets(
  stores: ScopeStores,
  namespace: string,
): Map<string, string[]> {
  const tenant = tenantOf(namespace);
  const spaces = new Set([
    namespace,
    ...stores.sources.namespaces(),
    ...stores.vectors.namespaces(),
    ...stores.cache.namespaces(),
  ]);
  const targets = new Map<string, string[]>();
  for (const space of spaces) {
    if (tenantOf(space) !== tenant) continue;
    targets.set(space, [
      ...new Set([
        ...stores.sources.ids(space, ALL),
        ...stores.vectors.ids(space, ALL),
      ]),
    ]);
  }
  return targets;
}

/**
 * The namespace of `namespace`'s tenant created last, other than
 * `namespace` itself (by the source store's order); `null` when there is none.
 */
export function newestTenantNamespace(
  sources: SourceStore,
  namespace: string,
): string | null {
  const tenant = tenantOf(namespace);
  const others = sources.namespaces().filter((space) =>
    space !== namespace && tenantOf(space) === tenant
  );
  return others.at(-1) ?? null;
}

/** Tenant of a namespace: its prefix up to the first `-` (`trace` for `trace-test-…`). */
export function tenantOf(namespace: string): string {
  return namespace.split("-", 1)[0] ?? namespace;
}
