/**
 * A turn of the event loop between the statements of one page. The local
 * libSQL client runs each statement on the calling thread, so a page that
 * reads several times yields between reads and no request waits for a whole
 * page of another.
 *
 * @module
 */

/** Resolves after other work queued on the event loop had a turn. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
