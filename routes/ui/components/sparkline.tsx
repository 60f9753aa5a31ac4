/**
 * A target's verdict history as a sparkline: one bar per run, oldest on
 * the left. Height carries the verdict (PASS full, INCONCLUSIVE half, FAIL
 * a stub), so it reads without colour; the tone repeats it. The runs are
 * also listed in the accessible name and each bar's tooltip.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { Verdict } from "../../../lib/runner/report.ts";

/** One run of the history. */
export interface VerdictPoint {
  run_id: string;
  verdict: Verdict;
  started_at: string;
}

const HEIGHT: Record<Verdict, number> = {
  PASS: 1,
  INCONCLUSIVE: 0.55,
  FAIL: 0.2,
};
const TONE: Record<Verdict, string> = {
  PASS: "success",
  INCONCLUSIVE: "attention",
  FAIL: "danger",
};

/** Verdicts oldest first as bars; nothing for an empty history. */
export const VerdictSparkline: FC<
  { points: readonly VerdictPoint[]; bar?: number; height?: number }
> = ({ points, bar = 6, height = 20 }) => {
  if (points.length === 0) return <span class="meta">no runs yet</span>;
  const gap = 2;
  const width = points.length * (bar + gap) - gap;
  const counts = (["PASS", "FAIL", "INCONCLUSIVE"] as const)
    .map((v) => [v, points.filter((p) => p.verdict === v).length] as const)
    .filter(([, n]) => n > 0)
    .map(([v, n]) => `${n} ${v}`);
  const label = `Last ${points.length} run${
    points.length === 1 ? "" : "s"
  }, oldest first: ${points.map((p) => p.verdict).join(", ")} (${
    counts.join(", ")
  })`;
  return (
    <svg
      class="sparkline"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
    >
      {points.map((p, i) => {
        const h = Math.max(3, Math.round(HEIGHT[p.verdict] * height));
        return (
          <rect
            class={`spark spark--${TONE[p.verdict]}`}
            x={i * (bar + gap)}
            y={height - h}
            width={bar}
            height={h}
            rx={1}
          >
            <title>{`${p.verdict} ${p.run_id} (${p.started_at})`}</title>
          </rect>
        );
      })}
    </svg>
  );
};
