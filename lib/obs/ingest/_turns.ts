/**
 * Turns of the event loop for the write path. Parsing, validating and
 * writing a batch of tens of thousands of events takes a second or more of
 * the one thread that also answers every other request (the local libSQL
 * client runs SQLite on it). The write path therefore works in slices: past
 * {@link WRITE_SLICE_MS} of work it waits for a timer, so the server reads
 * from the network and other requests' reads run (their own turns,
 * `query/_turns.ts`) at least that often. Private to `ingest/`.
 *
 * @module
 */

/** Work between two turns of the event loop (ms), as reads' slices. */
export const WRITE_SLICE_MS = 10;

/** Tracks one slice of work; {@link due} says when to take a turn. */
export class Slices {
  #start = performance.now();

  /** True once the current slice is over. */
  due(): boolean {
    return performance.now() - this.#start >= WRITE_SLICE_MS;
  }

  /** Waits for a timer turn of the event loop, then starts a new slice. */
  async turn(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#start = performance.now();
  }
}

/**
 * Runs `steps` to its end, taking a turn whenever it pauses past a slice.
 * A step generator pauses (`yield`) between units of work; run it with
 * {@link runAtOnce} where nothing else waits for the thread (the CLI).
 */
export async function runInTurns<T>(steps: Generator<void, T>): Promise<T> {
  const slices = new Slices();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    if (slices.due()) await slices.turn();
  }
}

/** Runs `steps` to its end without a pause. */
export function runAtOnce<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
