/**
 * How far past an interrupt's bound a run may still go: requests sent with
 * the bound passed each get {@link MIN_BOUNDED_MS}. Shared by the session
 * that bounds requests, the cleanups that send them and the events that
 * announce the total, so none of them imports another for a number.
 *
 * @module
 */

/**
 * Shortest budget a request in flight gets when the bound is set, and a
 * cleanup request when the bound has passed: a deletion deserves its chance.
 */
export const MIN_BOUNDED_MS = 1_000;

/** Namespaces a cleanup deletes in: test and control. */
const CLEANED_NAMESPACES = 2;

/** Requests in one poll of a run's own cleanup: inventory and marker query per namespace. */
export const RUN_POLL_REQUESTS = 4;

/**
 * Most a cleanup may run past an interrupt's bound: a deletion and every
 * request of the last poll may start with the bound passed, and each still
 * gets {@link MIN_BOUNDED_MS}; a poll that ends past the bound is the last.
 * `requestsPerPoll` is 4 for a run (inventory and marker query in each
 * namespace), and after the fact as many, or 2 when the run kept no markers
 * (inventories only).
 */
export function cleanupPastBoundMs(requestsPerPoll: number): number {
  return (CLEANED_NAMESPACES + requestsPerPoll) * MIN_BOUNDED_MS;
}
