/**
 * The key of an event's owner within a group's write: its application and
 * its id, which together name one event (the same id in another
 * application is another event). Private to `ingest/`.
 *
 * @module
 */

/** Map key of an (application, event id) pair. */
export const ownerKey = (applicationId: string, eventId: string): string =>
  `${applicationId}\u0000${eventId}`;
