/**
 * Wall-clock and process CPU time over timed sections. On a shared machine
 * the wall clock also counts the time other processes held the CPU; CPU
 * time does not, but misses the time spent waiting for the disk. The index
 * benchmarks report both.
 *
 * @module
 */

import process from "node:process";

/** Seconds of one measurement. */
export interface Seconds {
  wall: number;
  cpu: number;
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Accumulates the time of the sections between each {@link start} and {@link stop}. */
export class Stopwatch {
  #wallMs = 0;
  #cpuMs = 0;
  #wallStart = 0;
  #cpuStart = 0;

  start(): void {
    this.#wallStart = performance.now();
    this.#cpuStart = cpuMs();
  }

  stop(): void {
    this.#wallMs += performance.now() - this.#wallStart;
    this.#cpuMs += cpuMs() - this.#cpuStart;
  }

  /** Runs `fn` as one timed section. */
  async time<T>(fn: () => T | Promise<T>): Promise<T> {
    this.start();
    try {
      return await fn();
    } finally {
      this.stop();
    }
  }

  get seconds(): Seconds {
    return { wall: this.#wallMs / 1000, cpu: this.#cpuMs / 1000 };
  }
}

/** The smaller of each: the best wall time and the best CPU time of several runs. */
export function best(runs: readonly Seconds[]): Seconds {
  return {
    wall: Math.min(...runs.map((r) => r.wall)),
    cpu: Math.min(...runs.map((r) => r.cpu)),
  };
}
