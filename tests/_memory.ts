/** The memory pipeline on a manual clock, for tests of the pipeline and of the demo's defects. */

import {
  ManualScheduler,
  type MemoryBehaviour,
  MemoryPipeline,
} from "../lib/memory/mod.ts";

/**
 * Runs `fn` with a pipeline under `behaviour` on a manual clock (starting at
 * `startMs`, 10 s by default), closed afterwards so no timer outlives the test.
 */
export async function withPipeline(
  behaviour: MemoryBehaviour,
  fn: (
    pipeline: MemoryPipeline,
    clock: ManualScheduler,
  ) => void | Promise<void>,
  options: { startMs?: number } = {},
): Promise<void> {
  const clock = new ManualScheduler(options.startMs ?? 10_000);
  const pipeline = new MemoryPipeline(behaviour, { scheduler: clock });
  try {
    await fn(pipeline, clock);
  } finally {
    pipeline.close();
  }
}

/** Runs the jobs due within `ms`, then lets the worker drain them. */
export async function elapse(
  pipeline: MemoryPipeline,
  clock: ManualScheduler,
  ms: number,
): Promise<void> {
  clock.advance(ms);
  await pipeline.settled();
}
