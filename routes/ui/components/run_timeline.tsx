/**
 * The deletion window of one run as an SVG timeline: one step line per
 * store (source, vector and cache counts of the test namespace) from the
 * baseline through every sample, the window's end as a vertical line,
 * transient residuals shaded, and under the plot one row of marker flags
 * (seen exactly, seen rendered, gone) and one of control flags per sample.
 * Every sample has a column (`data-sample`) that a finding can highlight.
 * The numbers are in the sample table next to it ({@link SampleTable}).
 * Unlike the other charts the timeline scales to its column by its viewBox,
 * so a phone sees the whole window at once (its labels leave room for the
 * larger text the stylesheet draws there).
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { type Store, STORES } from "../../../lib/contract/protocol.ts";
import type { RunReport, Sample } from "../../../lib/runner/report.ts";
import {
  type ControlState,
  controlState,
  controlWord,
} from "../../../lib/runner/control_state.ts";
import { sampleAnchor } from "../links.ts";
import { storeShort } from "../run_words.ts";
import { linearScale, niceTicks, tickLabel } from "./_scale.ts";
import { STACK_TABLE, stackLabel } from "./data_table.tsx";

// Room for the labels at the larger size a phone draws them in (ui/style.css):
// the chart scales to its column, so its text is sized in the chart's units.
const WIDTH = 880;
const PLOT_TOP = 48;
const PLOT_HEIGHT = 170;
const ROW = 30;
const LEFT = 108;
const BASELINE_COLUMN = 150;
const RIGHT = 24;

/** Which findings each sample proves: sample index → finding numbers (1-based). */
export type SampleFindings = ReadonlyMap<number, readonly number[]>;

/** Sample index → the finding numbers that cite it. */
export function findingsBySample(report: RunReport): Map<number, number[]> {
  const map = new Map<number, number[]>();
  report.findings.forEach((finding, i) => {
    for (const index of finding.sample_indexes) {
      map.set(index, [...(map.get(index) ?? []), i + 1]);
    }
  });
  return map;
}

/** The timeline of `report`'s window, or nothing when it has no samples. */
export const RunTimeline: FC<{ report: RunReport }> = ({ report }) => {
  const samples = report.samples;
  if (samples.length === 0) return null;
  const window = report.timing.deletion_window_seconds;
  const last = samples.at(-1)!.started_at_seconds;
  const t1 = Math.max(window, last) * 1.04 || 1;
  const x = linearScale([0, t1], [LEFT + BASELINE_COLUMN, WIDTH - RIGHT]);
  const baseline = report.baseline.inventory;
  const peak = Math.max(
    1,
    ...STORES.map((s) => baseline?.[s] ?? 0),
    ...samples.flatMap((s) => STORES.map((store) => s.inventory?.[store] ?? 0)),
  );
  const yTicks = niceTicks(0, peak, 4);
  const y = linearScale(
    [0, yTicks.at(-1)!],
    [PLOT_TOP + PLOT_HEIGHT, PLOT_TOP],
  );
  const plotBottom = PLOT_TOP + PLOT_HEIGHT;
  const markerY = plotBottom + 24;
  const controlY = markerY + ROW;
  const axisY = controlY + ROW;
  const height = axisY + 22;
  const bySample = findingsBySample(report);
  const virtual = report.kind === "reference";
  return (
    <figure class="chart timeline" id="timeline">
      <figcaption id="timeline-caption">
        Records of the deleted documents in each store, seconds after the
        deletion was acknowledged{virtual ? " (virtual time)" : ""}
      </figcaption>
      <TimelineLegend />
      <div class="chart__plot">
        <svg
          width={WIDTH}
          height={height}
          viewBox={`0 0 ${WIDTH} ${height}`}
          role="img"
          aria-labelledby="timeline-caption"
          aria-describedby="samples-table"
        >
          <text x={LEFT - 8} y={20} text-anchor="end">records</text>
          {yTicks.map((v) => (
            <>
              <line
                class="grid-line"
                x1={LEFT}
                x2={WIDTH - RIGHT}
                y1={y(v)}
                y2={y(v)}
              />
              <text x={LEFT - 8} y={y(v) + 4} text-anchor="end">
                {tickLabel(v)}
              </text>
            </>
          ))}
          <SampleColumns
            samples={samples}
            x={x}
            top={PLOT_TOP}
            bottom={controlY + ROW / 2}
            findings={bySample}
          />
          <TransientBands
            report={report}
            x={x}
            top={PLOT_TOP}
            y2={plotBottom}
          />
          <line
            class="axis window-end"
            x1={x(window)}
            x2={x(window)}
            y1={PLOT_TOP - 8}
            y2={controlY + ROW / 2}
          />
          <text
            class="window-label"
            x={x(window) - 4}
            y={PLOT_TOP - 12}
            text-anchor="end"
          >
            {`window ends ${tickLabel(window)} s`}
          </text>
          <BaselineColumn
            baseline={baseline}
            y={y}
            x={LEFT + BASELINE_COLUMN / 2}
            bottom={plotBottom}
            markerY={markerY}
            controlY={controlY}
            markerSeen={report.baseline.marker_seen}
            controlSeen={report.baseline.control_seen}
          />
          {STORES.map((store, index) => (
            <StoreLine
              samples={samples}
              store={store}
              index={index}
              x={x}
              y={y}
              baseline={baseline?.[store] ?? null}
              baselineX={LEFT + BASELINE_COLUMN / 2}
            />
          ))}
          <text x={LEFT - 8} y={markerY + 4} text-anchor="end">marker</text>
          <text x={LEFT - 8} y={controlY + 4} text-anchor="end">control</text>
          {samples.map((s) => (
            <>
              <MarkerFlag sample={s} x={x(s.started_at_seconds)} y={markerY} />
              <ControlFlag
                state={controlState(s, report.baseline.control_inventory)}
                x={x(s.started_at_seconds)}
                y={controlY}
              />
            </>
          ))}
          <line
            class="axis"
            x1={LEFT}
            x2={WIDTH - RIGHT}
            y1={axisY - 8}
            y2={axisY - 8}
          />
          {niceTicks(0, t1, 6).filter((t) => t <= t1).map((t) => (
            <text x={x(t)} y={axisY + 12} text-anchor="middle">
              {`${tickLabel(t)} s`}
            </text>
          ))}
          <text
            x={LEFT + BASELINE_COLUMN / 2}
            y={axisY + 12}
            text-anchor="middle"
          >
            before
          </text>
        </svg>
      </div>
    </figure>
  );
};

const TimelineLegend: FC = () => (
  <ul class="legend">
    {STORES.map((store, index) => (
      <li>
        <svg viewBox="0 0 12 12" aria-hidden="true">
          <line
            class={`line series-${index + 1}`}
            x1={0}
            x2={12}
            y1={6}
            y2={6}
            stroke-width={3}
            stroke-dasharray={DASHES[index]}
          />
        </svg>
        {storeShort(store)}
      </li>
    ))}
    <li>
      <span class="flag-key flag-key--seen" aria-hidden="true">■</span>
      marker seen (E exact, R rendered)
    </li>
    <li>
      <span class="flag-key" aria-hidden="true">○</span> marker gone
    </li>
    <li>
      <span class="flag-key flag-key--ok" aria-hidden="true">●</span>
      control ok
    </li>
    <li>
      <span class="flag-key flag-key--lost" aria-hidden="true">✕</span>
      control lost
    </li>
    <li>
      <span class="flag-key flag-key--grew" aria-hidden="true">+</span>
      control grew
    </li>
    <li>
      <span class="swatch swatch--transient" aria-hidden="true"></span>
      transient residual
    </li>
  </ul>
);

const DASHES = [undefined, "6 4", "2 3"] as const;

const StoreLine: FC<{
  samples: readonly Sample[];
  store: Store;
  index: number;
  x: (t: number) => number;
  y: (v: number) => number;
  baseline: number | null;
  baselineX: number;
}> = ({ samples, store, index, x, y, baseline, baselineX }) => {
  const className = `series-${index + 1}`;
  const segments: string[] = [];
  let path = baseline === null
    ? ""
    : `M ${baselineX.toFixed(1)} ${y(baseline).toFixed(1)}`;
  for (const s of samples) {
    const v = s.inventory?.[store];
    const at = x(s.started_at_seconds).toFixed(1);
    if (v === undefined || v === null) {
      if (path) segments.push(path);
      path = "";
      continue;
    }
    path = path
      ? `${path} H ${at} V ${y(v).toFixed(1)}`
      : `M ${at} ${y(v).toFixed(1)}`;
  }
  if (path) segments.push(path);
  // Lines of equal counts would hide each other: later series sit a pixel or two lower.
  const offset = index * 1.5;
  return (
    <g class={`store-line ${className}`} transform={`translate(0 ${offset})`}>
      {segments.map((d) => (
        <path
          class={`line ${className}`}
          d={d}
          stroke-dasharray={DASHES[index]}
        />
      ))}
      {samples.length <= 80
        ? samples.map((s) => {
          const v = s.inventory?.[store];
          return v === undefined || v === null ? null : (
            <circle
              class={className}
              cx={x(s.started_at_seconds)}
              cy={y(v)}
              r={2.5}
            />
          );
        })
        : null}
    </g>
  );
};

const BaselineColumn: FC<{
  baseline: RunReport["baseline"]["inventory"];
  y: (v: number) => number;
  x: number;
  bottom: number;
  markerY: number;
  controlY: number;
  markerSeen: boolean | null;
  controlSeen: boolean | null;
}> = (props) => (
  <g class="baseline-column">
    <line
      class="grid-line"
      x1={props.x + BASELINE_COLUMN / 2}
      x2={props.x + BASELINE_COLUMN / 2}
      y1={PLOT_TOP}
      y2={props.controlY + ROW / 2}
    />
    <Flag
      x={props.x}
      y={props.markerY}
      kind={props.markerSeen === null
        ? "unknown"
        : props.markerSeen
        ? "seen"
        : "gone"}
      label="E"
    />
    <Flag
      x={props.x}
      y={props.controlY}
      kind={props.controlSeen === null
        ? "unknown"
        : props.controlSeen
        ? "ok"
        : "lost"}
      label=""
    />
  </g>
);

type FlagKind = "seen" | "gone" | "ok" | "lost" | "grew" | "unknown";

const Flag: FC<{ x: number; y: number; kind: FlagKind; label: string }> = (
  { x, y, kind, label },
) => {
  if (kind === "seen") {
    return (
      <g class="flag flag--seen">
        <rect x={x - 7} y={y - 7} width={14} height={14} rx={2} />
        <text x={x} y={y + 4} text-anchor="middle">{label}</text>
      </g>
    );
  }
  if (kind === "lost") {
    return (
      <g class="flag flag--lost">
        <text x={x} y={y + 5} text-anchor="middle">✕</text>
      </g>
    );
  }
  if (kind === "grew") {
    return (
      <g class="flag flag--grew">
        <text x={x} y={y + 5} text-anchor="middle">+</text>
      </g>
    );
  }
  if (kind === "unknown") {
    return (
      <text class="flag flag--unknown" x={x} y={y + 4} text-anchor="middle">
        ?
      </text>
    );
  }
  return (
    <circle
      class={`flag flag--${kind}`}
      cx={x}
      cy={y}
      r={kind === "ok" ? 3 : 4}
    />
  );
};

const MarkerFlag: FC<{ sample: Sample; x: number; y: number }> = (
  { sample, x, y },
) => (
  <Flag
    x={x}
    y={y}
    kind={sample.marker_seen === null
      ? "unknown"
      : sample.marker_seen
      ? "seen"
      : "gone"}
    label={sample.marker_form === "rendered" ? "R" : "E"}
  />
);

const ControlFlag: FC<{ state: ControlState; x: number; y: number }> = (
  { state, x, y },
) => <Flag x={x} y={y} kind={state} label="" />;

/** One highlightable column per sample, halfway to its neighbours. */
const SampleColumns: FC<{
  samples: readonly Sample[];
  x: (t: number) => number;
  top: number;
  bottom: number;
  findings: SampleFindings;
}> = ({ samples, x, top, bottom, findings }) => {
  const cols: Child[] = [];
  samples.forEach((s, i) => {
    const at = x(s.started_at_seconds);
    const prev = i > 0 ? x(samples[i - 1]!.started_at_seconds) : at - 8;
    const next = i < samples.length - 1
      ? x(samples[i + 1]!.started_at_seconds)
      : at + 8;
    const left = (at + prev) / 2;
    const right = (at + next) / 2;
    cols.push(
      <rect
        class="sample-col"
        data-sample={String(s.index)}
        data-findings={(findings.get(s.index) ?? []).join(" ") || undefined}
        x={left}
        y={top}
        width={Math.max(2, right - left)}
        height={bottom - top}
      >
        <title>
          {`Sample #${s.index} at ${s.started_at_seconds.toFixed(2)} s`}
        </title>
      </rect>,
    );
  });
  return <g class="sample-cols">{cols}</g>;
};

/** Shaded spans of the transient residuals: from the first sample that showed them to the one that read clean. */
const TransientBands: FC<{
  report: RunReport;
  x: (t: number) => number;
  top: number;
  y2: number;
}> = ({ report, x, top, y2 }) => {
  const bands = report.findings.filter((f) =>
    f.code === "transient_residual" && f.sample_indexes.length > 0
  );
  return (
    <g class="transient-bands">
      {bands.map((f) => {
        const first = report.samples[f.sample_indexes[0]!]!;
        const lastDirty = f.sample_indexes.at(-1)!;
        const cleared = report.samples[lastDirty + 1] ??
          report.samples[lastDirty]!;
        const x0 = x(first.started_at_seconds);
        const x1 = Math.max(x0 + 4, x(cleared.started_at_seconds));
        return (
          <rect
            class="transient"
            x={x0}
            y={top}
            width={x1 - x0}
            height={y2 - top}
          >
            <title>{`Transient residual (${f.subject})`}</title>
          </rect>
        );
      })}
    </g>
  );
};

/** The samples as a table: the numbers the timeline draws, one row per sample. */
export const SampleTable: FC<{ report: RunReport }> = ({ report }) => {
  const bySample = findingsBySample(report);
  const baseline = report.baseline;
  return (
    <div class="table-wrap table-wrap--tall">
      <table id="samples-table" class={STACK_TABLE}>
        <caption class="sr-only">
          Samples: store counts, marker and control per sample
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">#</th>
            <th scope="col" class="num">At (s)</th>
            {STORES.map((store) => (
              <th scope="col" class="num">{storeShort(store)}</th>
            ))}
            <th scope="col">Marker</th>
            <th scope="col">Control</th>
            <th scope="col">Findings</th>
          </tr>
        </thead>
        <tbody>
          <tr class="baseline-row">
            <th scope="row" class="num">base</th>
            <td class="num" {...stackLabel("At (s)")}>before</td>
            {STORES.map((store) => (
              <td class="num" {...stackLabel(storeShort(store))}>
                {countText(baseline.inventory?.[store])}
              </td>
            ))}
            <td {...stackLabel("Marker")}>
              {markerText(baseline.marker_seen, baseline.marker_form)}
            </td>
            <td {...stackLabel("Control")}>
              {baseline.control_seen === null
                ? "unknown"
                : baseline.control_seen
                ? "ok"
                : "LOST"}
            </td>
            <td></td>
          </tr>
          {report.samples.map((s) => (
            <tr id={sampleAnchor(s.index)} data-sample={String(s.index)}>
              <th scope="row" class="num" {...stackLabel("#")}>{s.index}</th>
              <td class="num" {...stackLabel("At (s)")}>
                {s.started_at_seconds.toFixed(2)}
              </td>
              {STORES.map((store) => (
                <td
                  class={cellClass(s, store)}
                  {...stackLabel(storeShort(store))}
                >
                  {countText(s.inventory?.[store])}
                </td>
              ))}
              <td {...stackLabel("Marker")}>
                {markerText(s.marker_seen, s.marker_form)}
              </td>
              <td {...stackLabel("Control")}>
                {controlWord(
                  controlState(s, report.baseline.control_inventory),
                )}
              </td>
              <td>
                {(bySample.get(s.index) ?? []).map((n) => (
                  <a class="finding-ref" href={`#finding-${n}`}>{`F${n}`}</a>
                ))}
                {s.errors.length > 0
                  ? <span class="meta">{` ${s.errors.length} error(s)`}</span>
                  : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
};

function cellClass(sample: Sample, store: Store): string {
  return (sample.inventory?.[store] ?? 0) > 0 ? "num is-left" : "num";
}

function countText(n: number | null | undefined): string {
  return n === null || n === undefined ? "?" : String(n);
}

/** A marker flag in words: `seen (exact)`, `seen (rendered)`, `gone`. */
export function markerText(
  seen: boolean | null,
  form: Sample["marker_form"],
): string {
  if (seen === null) return "unknown";
  return seen ? `SEEN (${form ?? "exact"})` : "gone";
}
