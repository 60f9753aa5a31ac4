/**
 * Turns of the event loop for the write path. Parsing, validating and
 * writing a batch of tens of thousands of events takes a second or more of
 * the one thread that also answers every other request (the local libSQL
 * client runs SQLite on it). The write path therefore works in slices, and
 * all its work in the process takes turns, as reads do (`query/_turns.ts`):
 * one piece of work at a time, in arrival order, handed on at once until
 * {@link WRITE_SLICE_MS} of work have passed, then through a quick turn of
 * the event loop (`QUICK_TURNS` in `../_turn_line.ts`: the network is polled
 * without waiting for a timer tick, and due timers run every tenth). Twenty
 * large batches at once then cost every other request one slice per turn
 * of the event loop, not twenty. Private to `ingest/`.
 *
 * Work holds its turn only while it runs on the thread: never while it
 * waits for something else (the group writer's queue, the network), so
 * taking turns cannot wait on itself.
 *
 * @module
 */

import { QUICK_TURNS, TurnLine } from "../_turn_line.ts";

/** Work between two turns of the event loop (ms), as reads' slices. */
export const WRITE_SLICE_MS = 10;

/** The write-path work of the whole process in one line. */
const line = new TurnLine(WRITE_SLICE_MS, QUICK_TURNS);

/** A turn of write-path work: {@link due} says when to give way. */
export class Slices {
  /** True once the current slice is over. */
  due(): boolean {
    return line.due();
  }

  /** Gives way: the event loop turns and the work queued meanwhile runs, then this continues. */
  async turn(): Promise<void> {
    const back = line.take();
    line.pass();
    await back;
  }
}

/** Runs `work` in its turn; `work` gives way through the {@link Slices} it is handed. */
export async function inTurn<T>(
  work: (slices: Slices) => Promise<T>,
): Promise<T> {
  await line.take();
  try {
    return await work(new Slices());
  } finally {
    line.pass();
  }
}

/**
 * Runs `steps` to its end in turns, giving way whenever it pauses past a
 * slice. A step generator pauses (`yield`) between units of work; run it
 * with {@link runAtOnce} where nothing else waits for the thread.
 */
export function runInTurns<T>(steps: Generator<void, T>): Promise<T> {
  return inTurn(async (slices) => {
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      if (slices.due()) await slices.turn();
    }
  });
}

/** Runs `steps` to its end without a pause. */
export function runAtOnce<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
