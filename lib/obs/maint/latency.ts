/**
 * How health reports query latency: timings of a few probe queries as
 * nearest-rank percentiles. Benchmarks report their timings with the same
 * statistic, so their figures read like health's.
 *
 * @module
 */

/** Timings of one probe. */
export interface ProbeTiming {
  /** The probe query. */
  name: string;
  /** Timed runs. */
  samples: number;
  /** Median run, in milliseconds. */
  p50_ms: number;
  /** 95th percentile run, in milliseconds. */
  p95_ms: number;
}

/** Timings of every probe, and over all samples. */
export interface ProbeLatency {
  /** Each probe's timings. */
  probes: ProbeTiming[];
  /** Timed runs over all probes. */
  samples: number;
  /** Median over all runs, in milliseconds. */
  p50_ms: number;
  /** 95th percentile over all runs, in milliseconds. */
  p95_ms: number;
}

/** Nearest-rank percentile of `values` (0 for none). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(
    sorted.length,
    Math.max(1, Math.ceil((p / 100) * sorted.length)),
  );
  return sorted[rank - 1]!;
}
