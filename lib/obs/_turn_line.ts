/**
 * One line of work that takes turns of the event loop, shared by the read
 * path (`query/_turns.ts`, a line per database) and the write path
 * (`ingest/_turns.ts`, one line per process). Work runs one piece at a
 * time, in arrival order, in slices: a piece hands over to the next at once
 * until the slice is spent, then through a timer, so the loop polls the
 * network at least once a slice. Work that follows a spent slice without
 * a turn between (one caller in a loop whose work resolves at once) waits
 * for a turn as well. {@link nextTurn} is the one turn of the event loop
 * every slicing loop of `lib/obs/` waits for. Private to `lib/obs/`.
 *
 * @module
 */

/** Resolves after other work queued on the event loop had a turn (a timer, not a microtask). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A line of work handing the thread over in slices of `sliceMs`. */
export class TurnLine {
  readonly #sliceMs: number;
  #busy = false;
  readonly #waiting: (() => void)[] = [];
  /** When the current slice began. */
  #sliceStart = 0;
  /** True until the event loop had a turn since the slice began. */
  #sliceOpen = false;

  constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
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
    if (this.#sliceOpen && this.due()) await nextTurn();
    if (!this.#sliceOpen) this.#startSlice();
  }

  /** Hands the turn to the next in line: at once while the slice lasts, past it through a timer. */
  pass(): void {
    const next = this.#waiting.shift();
    if (!next) {
      this.#busy = false;
    } else if (!this.due()) {
      next();
    } else {
      setTimeout(() => {
        this.#startSlice();
        next();
      }, 0);
    }
  }

  #startSlice(): void {
    this.#sliceStart = performance.now();
    this.#sliceOpen = true;
    setTimeout(() => this.#sliceOpen = false, 0);
  }
}
