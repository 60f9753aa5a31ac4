/**
 * Process-local observability counters. They describe this process only: a
 * reader in another process sees none of them, which health must report as
 * unknown rather than zero.
 *
 * @module
 */

/** Names of the counters this process keeps. */
export const COUNTER_NAMES = [
  "events_written",
  "duplicate_retries",
  "batches_refused",
  "write_failures",
  "previews_truncated",
  "attributes_dropped",
  "callback_failures",
  "context_missing",
] as const;
/** One of {@link COUNTER_NAMES}. */
export type CounterName = typeof COUNTER_NAMES[number];

const counts = new Map<CounterName, number>();
const startedAt = new Date().toISOString();

/** Adds `by` (default 1) to a counter. */
export function incrementCounter(name: CounterName, by = 1): void {
  counts.set(name, (counts.get(name) ?? 0) + by);
}

/** A snapshot of every counter of this process, with when counting began. */
export function counterSnapshot(): {
  since: string;
  counts: Record<CounterName, number>;
} {
  const snapshot = {} as Record<CounterName, number>;
  for (const name of COUNTER_NAMES) snapshot[name] = counts.get(name) ?? 0;
  return { since: startedAt, counts: snapshot };
}

/** Resets every counter (tests only). */
export function resetCounters(): void {
  counts.clear();
}
