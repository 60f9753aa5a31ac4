/**
 * One line of work that takes turns of the event loop, shared by the read
 * path (`query/_turns.ts`, a line per database) and the write path
 * (`ingest/_turns.ts`, one line per process). Work runs one piece at a
 * time, in arrival order, in slices: a piece hands over to the next at once
 * until the slice is spent, then through a turn of the event loop, so the
 * loop polls the network at least once a slice. Work that follows a spent
 * slice without a turn between (one caller in a loop whose work resolves
 * at once) waits for a turn as well. Reads and every other slicing loop of
 * `lib/obs/` turn through {@link nextTurn} ({@link TIMER_TURNS}), the write
 * path through {@link QUICK_TURNS}. Private to `lib/obs/`.
 *
 * A turn must let the event loop poll the network, or a request that
 * arrives during a long write waits for all of it. {@link nextTurn} is a
 * timer, which also runs every timer that is due, but waits for the next
 * millisecond tick of Deno's timers: 1 to 2 ms a turn, over 10% of a bulk
 * load's time. A quick turn polls the network through an asynchronous
 * operation of the runtime (the digest of nothing, about 20 µs) and goes
 * through a timer every {@link TIMER_TURN_EVERY}th time: timers wait at
 * most that many turns, and the libSQL client's prepared statements, freed
 * by finalizers that a loop turning only through such operations left
 * waiting (175 MB after 40,000 reads, against 76 MB with timer turns),
 * are freed. Microtasks, `setImmediate` and message ports resolve without
 * polling the network at all.
 *
 * @module
 */

/** Resolves after other work queued on the event loop had a turn, due timers included. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

const NOTHING = new Uint8Array(0);
/** One quick turn in this many goes through a timer. */
const TIMER_TURN_EVERY = 10;
let quickTurns = 0;

/** Resolves after the event loop polled the network; a timer turn every {@link TIMER_TURN_EVERY}th time. */
function quickTurn(): Promise<void> {
  if (++quickTurns % TIMER_TURN_EVERY === 0) return nextTurn();
  return pollTurn();
}

/** A turn that polls the network and runs what was ready, without waiting for a timer tick. */
function pollTurn(): Promise<void> {
  return crypto.subtle.digest("SHA-256", NOTHING).then(() => {}, nextTurn);
}

/** How a line gives way past a slice, and how it notices that the event loop turned since a slice began. */
export interface TurnKind {
  giveWay(): Promise<void>;
  /** Any turn of the loop; not counted against the quick kind's timer turns. */
  observe(): Promise<void>;
}

/** Turns through a timer: due timers always run ({@link nextTurn}). */
export const TIMER_TURNS: TurnKind = { giveWay: nextTurn, observe: nextTurn };
/** Turns that poll the network without a timer tick, a timer every {@link TIMER_TURN_EVERY}th time. */
export const QUICK_TURNS: TurnKind = { giveWay: quickTurn, observe: pollTurn };

/** A line of work handing the thread over in slices of `sliceMs`. */
export class TurnLine {
  readonly #sliceMs: number;
  readonly #turns: TurnKind;
  #busy = false;
  readonly #waiting: (() => void)[] = [];
  /** When the current slice began. */
  #sliceStart = 0;
  /** True until the event loop had a turn since the slice began. */
  #sliceOpen = false;

  constructor(sliceMs: number, turns: TurnKind = TIMER_TURNS) {
    this.#sliceMs = sliceMs;
    this.#turns = turns;
  }

  /** Pieces of work in line right now, the one running included. */
  get length(): number {
    return this.#waiting.length + (this.#busy ? 1 : 0);
  }

  /** True once the current slice is over. */
  due(): boolean {
    return performance.now() - this.#sliceStart >= this.#sliceMs;
  }

  /** Resolves once every piece of work queued before this call has had its turn. */
  async take(): Promise<void> {
    if (this.#busy) {
      // Woken by the work before, which leaves `busy` set for it.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
      return;
    }
    this.#busy = true;
    if (this.#sliceOpen && this.due()) await this.#turns.giveWay();
    if (!this.#sliceOpen) this.#startSlice();
  }

  /** Hands the turn to the next in line: at once while the slice lasts, past it through a turn of the loop. */
  pass(): void {
    const next = this.#waiting.shift();
    if (!next) {
      this.#busy = false;
    } else if (!this.due()) {
      next();
    } else {
      void this.#turns.giveWay().then(() => {
        this.#startSlice();
        next();
      });
    }
  }

  #startSlice(): void {
    this.#sliceStart = performance.now();
    this.#sliceOpen = true;
    void this.#turns.observe().then(() => this.#sliceOpen = false);
  }
}
