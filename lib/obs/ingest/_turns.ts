/**
 * Turns of the event loop for the write path. Parsing, validating and
 * writing a batch of tens of thousands of events takes a second or more of
 * the one thread that also answers every other request (the local libSQL
 * client runs SQLite on it). The write path therefore works in slices, and
 * all its work in the process takes turns, as reads do (`query/_turns.ts`):
 * one piece of work at a time, in arrival order, handed on at once until
 * {@link WRITE_SLICE_MS} of work have passed, then through a timer. Twenty
 * large batches at once then cost every other request one slice per turn
 * of the event loop, not twenty. Private to `ingest/`.
 *
 * Work holds its turn only while it runs on the thread: never while it
 * waits for something else (the group writer's queue, the network), so
 * taking turns cannot wait on itself.
 *
 * @module
 */

/** Work between two turns of the event loop (ms), as reads' slices. */
export const WRITE_SLICE_MS = 10;

let busy = false;
const waiting: (() => void)[] = [];
let sliceStart = 0;
/** True until the event loop had a turn since the slice began. */
let sliceOpen = false;

function startSlice(): void {
  sliceStart = performance.now();
  sliceOpen = true;
  setTimeout(() => sliceOpen = false, 0);
}

const timerTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Resolves once every piece of write-path work queued before this call has had its turn. */
async function takeTurn(): Promise<void> {
  if (busy) {
    // Woken by the work before, which leaves `busy` set for it.
    await new Promise<void>((resolve) => waiting.push(resolve));
    return;
  }
  busy = true;
  // Work that follows a spent slice without a turn between (the group
  // writer's next transaction right after a commit) waits for one first.
  if (sliceOpen && performance.now() - sliceStart >= WRITE_SLICE_MS) {
    await timerTurn();
  }
  if (!sliceOpen) startSlice();
}

/**
 * Hands the turn to the next in line: at once while the slice lasts, past
 * it through a timer, so the event loop turns in between.
 */
function passTurn(): void {
  const next = waiting.shift();
  if (!next) {
    busy = false;
  } else if (performance.now() - sliceStart < WRITE_SLICE_MS) {
    next();
  } else {
    setTimeout(() => {
      startSlice();
      next();
    }, 0);
  }
}

/** A turn of write-path work: {@link due} says when to give way. */
export class Slices {
  /** True once the current slice is over. */
  due(): boolean {
    return performance.now() - sliceStart >= WRITE_SLICE_MS;
  }

  /** Gives way: the event loop turns and the work queued meanwhile runs, then this continues. */
  async turn(): Promise<void> {
    const back = takeTurn();
    passTurn();
    await back;
  }
}

/** Runs `work` in its turn; `work` gives way through the {@link Slices} it is handed. */
export async function inTurn<T>(
  work: (slices: Slices) => Promise<T>,
): Promise<T> {
  await takeTurn();
  try {
    return await work(new Slices());
  } finally {
    passTurn();
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
