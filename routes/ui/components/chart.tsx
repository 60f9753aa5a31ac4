/**
 * Server-rendered SVG charts: a time chart (lines or steps over a UTC or
 * elapsed-time axis, with optional vertical markers) and a horizontal bar
 * chart. A time chart scales to its column by its viewBox, as the run
 * timeline does, so a phone sees the whole time range (its text is drawn
 * larger in the chart's units there, to stay readable once scaled down). A
 * bar chart is drawn at its natural size, so its labels beside the bars stay
 * readable; a screen narrower than it scrolls the chart, not the page.
 * Every chart names its unit, labels its series (by a legend and by
 * dash pattern, not colour alone) and carries the same numbers as a text
 * table beside it, visible or for screen readers only.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { linearScale, niceTicks, tickLabel, timeTicks } from "./_scale.ts";
import { formatUtc } from "../format.ts";

/** One labelled series of a {@link TimeChart}. */
export interface TimeSeries {
  label: string;
  /** Points in time order: `t` in epoch ms, `v` in the chart's unit. */
  points: readonly { t: number; v: number }[];
}

/** A vertical line at a time, e.g. the end of a deletion window. */
export interface TimeMarker {
  t: number;
  label: string;
}

/** Props of {@link TimeChart}. */
export interface TimeChartProps {
  id: string;
  title: string;
  /** The unit of the values, e.g. `ms` or `records`. */
  unit: string;
  series: readonly TimeSeries[];
  /** `utc` (default): clock times; `elapsedFrom`: seconds since that epoch ms. */
  axis?: "utc" | { elapsedFrom: number };
  /** `linear` (default) joins points; `step` holds each value until the next. */
  curve?: "linear" | "step";
  markers?: readonly TimeMarker[];
  /** The data table: shown under the chart (default) or for screen readers only. */
  table?: "visible" | "sr-only";
  width?: number;
  height?: number;
}

// The top leaves room between the unit and the highest tick at the larger
// text a phone draws (ui/style.css, `.chart--fit`).
const MARGIN = { top: 32, right: 16, bottom: 32, left: 52 };

// A character of the 20-unit text a phone draws (`.chart--fit`) is at most
// about 12 units wide: labels are spaced, and columns sized, for that text.
const CHAR_WIDTH = 12;

/** A time chart with its legend and data table. */
export const TimeChart: FC<TimeChartProps> = (props) => {
  const { unit, series } = props;
  const width = props.width ?? 560;
  const height = props.height ?? 220;
  const points = series.flatMap((s) => s.points);
  const times = points.map((p) => p.t);
  let t0 = Math.min(...times);
  let t1 = Math.max(...times);
  if (!(t1 > t0)) [t0, t1] = [t0 - 30_000, t1 + 30_000];
  const yTicks = niceTicks(0, Math.max(0, ...points.map((p) => p.v)), 4);
  const x = linearScale([t0, t1], [MARGIN.left, width - MARGIN.right]);
  const y = linearScale(
    [0, yTicks[yTicks.length - 1]!],
    [height - MARGIN.bottom, MARGIN.top],
  );
  const xTicks = xAxisTicks(props.axis ?? "utc", t0, t1, x, width);
  return (
    <Figure
      {...props}
      width={width}
      height={height}
      fit
      table={<TimeTable {...props} />}
    >
      <text x={MARGIN.left - 8} y={12} text-anchor="end">{unit}</text>
      {yTicks.map((v) => (
        <>
          <line
            class="grid-line"
            x1={MARGIN.left}
            x2={width - MARGIN.right}
            y1={y(v)}
            y2={y(v)}
          />
          <text x={MARGIN.left - 8} y={y(v) + 4} text-anchor="end">
            {tickLabel(v)}
          </text>
        </>
      ))}
      {xTicks.map((tick) => (
        <text x={x(tick.t)} y={height - 10} text-anchor="middle">
          {tick.label}
        </text>
      ))}
      {(props.markers ?? []).map((marker) => (
        <>
          <line
            class="axis"
            x1={x(marker.t)}
            x2={x(marker.t)}
            y1={MARGIN.top}
            y2={height - MARGIN.bottom}
            stroke-dasharray="2 3"
          />
          <text x={x(marker.t) + 4} y={MARGIN.top + 10}>
            {marker.label}
          </text>
        </>
      ))}
      {series.map((s, index) => (
        <SeriesPath
          series={s}
          index={index}
          x={x}
          y={y}
          step={props.curve === "step"}
        />
      ))}
    </Figure>
  );
};

function xAxisTicks(
  axis: "utc" | { elapsedFrom: number },
  t0: number,
  t1: number,
  x: (t: number) => number,
  width: number,
): { t: number; label: string }[] {
  if (axis === "utc") return clockTicks(t0, t1, x, width);
  const origin = axis.elapsedFrom;
  return niceTicks((t0 - origin) / 1000, (t1 - origin) / 1000, 6)
    .map((s) => ({ t: origin + s * 1000, label: `${tickLabel(s)} s` }))
    .filter((tick) => tick.t >= t0 && tick.t <= t1);
}

/**
 * Clock labels (16:00:24) that stay inside the chart and apart from each
 * other at a phone's text size, which a fixed count of 6 overlapped: the
 * first tick count that leaves three such labels, else the most that fit.
 */
function clockTicks(
  t0: number,
  t1: number,
  x: (t: number) => number,
  width: number,
): { t: number; label: string }[] {
  let fallback: { t: number; label: string }[] = [];
  for (let count = 2; count <= 6; count++) {
    const ticks = timeTicks(t0, t1, count).filter((tick) =>
      insideChart(x(tick.t), tick.label, width)
    );
    if (!apart(ticks, x)) break;
    fallback = ticks;
    if (ticks.length >= 3) break;
  }
  return fallback;
}

/** Whether a label centred at `at` stays inside a chart `width` wide. */
function insideChart(at: number, label: string, width: number): boolean {
  const half = (label.length * CHAR_WIDTH) / 2;
  return at - half >= 0 && at + half <= width;
}

/** Whether neighbouring labels leave a character's room between them. */
function apart(
  ticks: readonly { t: number; label: string }[],
  x: (t: number) => number,
): boolean {
  return ticks.every((tick, i) => {
    const next = ticks[i + 1];
    if (!next) return true;
    const need = (tick.label.length + next.label.length) * CHAR_WIDTH / 2;
    return x(next.t) - x(tick.t) >= need + CHAR_WIDTH;
  });
}

const SeriesPath: FC<{
  series: TimeSeries;
  index: number;
  x: (t: number) => number;
  y: (v: number) => number;
  step: boolean;
}> = ({ series, index, x, y, step }) => {
  const points = series.points;
  if (points.length === 0) return null;
  const d = points.map((p, i) => {
    const at = `${x(p.t).toFixed(1)} ${y(p.v).toFixed(1)}`;
    if (i === 0) return `M ${at}`;
    return step ? `H ${x(p.t).toFixed(1)} V ${y(p.v).toFixed(1)}` : `L ${at}`;
  }).join(" ");
  const className = seriesClass(index);
  return (
    <g>
      <path class={`line ${className}`} d={d} stroke-dasharray={dash(index)} />
      {points.length <= 60
        ? points.map((p) => (
          <circle class={className} cx={x(p.t)} cy={y(p.v)} r={3} />
        ))
        : null}
    </g>
  );
};

const TimeTable: FC<TimeChartProps> = (props) => {
  const times = [
    ...new Set(props.series.flatMap((s) => s.points.map((p) => p.t))),
  ]
    .sort((a, b) => a - b);
  const axis = props.axis ?? "utc";
  return (
    <ChartTable id={props.id} title={props.title} hidden={props.table}>
      <thead>
        <tr>
          <th scope="col">
            {axis === "utc" ? "Time (UTC)" : "Elapsed (s)"}
          </th>
          {props.series.map((s) => (
            <th scope="col" class="num">{s.label} ({props.unit})</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {times.map((t) => (
          <tr>
            <th scope="row">
              {axis === "utc"
                ? formatUtc(new Date(t).toISOString())
                : tickLabel((t - axis.elapsedFrom) / 1000)}
            </th>
            {valueCells(props.series, t)}
          </tr>
        ))}
      </tbody>
    </ChartTable>
  );
};

/** One labelled series of a {@link BarChart}: a value per category. */
export interface BarSeries {
  label: string;
  values: readonly number[];
}

/** Props of {@link BarChart}. */
export interface BarChartProps {
  id: string;
  title: string;
  unit: string;
  categories: readonly string[];
  series: readonly BarSeries[];
  table?: "visible" | "sr-only";
  width?: number;
}

const BAR = 14;
const BAR_GAP = 4;
const GROUP_GAP = 12;
const LABEL_WIDTH = 120;
const VALUE_WIDTH = 96;
const BAR_TOP = 8;

/** Horizontal bars per category, one per series, each labelled with its value. */
export const BarChart: FC<BarChartProps> = (props) => {
  const { id, unit, categories, series } = props;
  const width = props.width ?? 560;
  const group = series.length * (BAR + BAR_GAP) - BAR_GAP + GROUP_GAP;
  const height = BAR_TOP + categories.length * group + MARGIN.bottom -
    GROUP_GAP;
  const values = series.flatMap((s) => s.values);
  const ticks = niceTicks(0, Math.max(0, ...values), 4);
  const labelWidth = columnWidth(LABEL_WIDTH, categories);
  const valueWidth = columnWidth(
    VALUE_WIDTH,
    series.flatMap((s) => s.values.map((v) => valueLabel(s, v))),
  );
  const x = linearScale(
    [0, ticks[ticks.length - 1]!],
    [labelWidth, width - valueWidth],
  );
  const axisY = height - MARGIN.bottom + 6;
  return (
    <Figure
      {...props}
      width={width}
      height={height}
      fit
      table={
        <ChartTable id={id} title={props.title} hidden={props.table}>
          <thead>
            <tr>
              <th scope="col">Category</th>
              {series.map((s) => (
                <th scope="col" class="num">{s.label} ({unit})</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {categories.map((category, c) => (
              <tr>
                <th scope="row">{category}</th>
                {series.map((s) => (
                  <td class="num">{formatValue(s.values[c] ?? 0)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </ChartTable>
      }
    >
      {ticks.map((v) => (
        <>
          <line
            class="grid-line"
            x1={x(v)}
            x2={x(v)}
            y1={BAR_TOP - 6}
            y2={axisY - 6}
          />
          <text x={x(v)} y={axisY + 10} text-anchor="middle">
            {v === ticks[ticks.length - 1]
              ? `${tickLabel(v)} ${unit}`
              : tickLabel(v)}
          </text>
        </>
      ))}
      {categories.map((category, c) => {
        const top = BAR_TOP + c * group;
        return (
          <g>
            <text
              x={labelWidth - 8}
              y={top + (group - GROUP_GAP) / 2 + 4}
              text-anchor="end"
            >
              {category}
            </text>
            {series.map((s, i) => {
              const v = s.values[c] ?? 0;
              const barTop = top + i * (BAR + BAR_GAP);
              return (
                <>
                  <rect
                    class={seriesClass(i)}
                    x={labelWidth}
                    y={barTop}
                    width={Math.max(1, x(v) - labelWidth)}
                    height={BAR}
                    fill-opacity={i === 0 ? undefined : 0.55}
                  />
                  <text x={x(v) + 4} y={barTop + BAR - 3}>
                    {valueLabel(s, v)}
                  </text>
                </>
              );
            })}
          </g>
        );
      })}
    </Figure>
  );
};

/** The text beside a bar: its series and value. */
function valueLabel(series: BarSeries, value: number): string {
  return `${series.label} ${formatValue(value)}`;
}

/** A column at least `min` wide that holds the longest of `labels` and its 8-unit gap. */
function columnWidth(min: number, labels: readonly string[]): number {
  return Math.max(min, ...labels.map((l) => l.length * CHAR_WIDTH + 8));
}

/** What every chart shares: its caption with the unit, the legend, the SVG at its natural size (described by the data table), then the table. */
const Figure: FC<{
  id: string;
  title: string;
  unit: string;
  series: readonly { label: string }[];
  width: number;
  height: number;
  /** Scale to the column (see `.chart--fit` in ui/style.css) rather than scroll. */
  fit?: boolean;
  table: Child;
  children?: Child;
}> = ({ id, title, unit, series, width, height, fit, table, children }) => (
  <figure class={fit ? "chart chart--fit" : "chart"} id={id}>
    <figcaption id={`${id}-caption`}>{title} ({unit})</figcaption>
    <Legend
      series={series.map((s) => s.label)}
    />
    <div class="chart__plot">
      <svg
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-labelledby={`${id}-caption`}
        aria-describedby={`${id}-table`}
      >
        {children}
      </svg>
    </div>
    {table}
  </figure>
);

const Legend: FC<{ series: readonly string[] }> = ({ series }) => (
  <ul class="legend" aria-hidden="true">
    {series.map((label, index) => (
      <li>
        <svg viewBox="0 0 12 12">
          <line
            class={`line ${seriesClass(index)}`}
            x1={0}
            x2={12}
            y1={6}
            y2={6}
            stroke-width={3}
            stroke-dasharray={dash(index) ? "3 2" : undefined}
          />
        </svg>
        {label}
      </li>
    ))}
  </ul>
);

const ChartTable: FC<
  {
    id: string;
    title: string;
    hidden?: "visible" | "sr-only" | undefined;
    children?: Child;
  }
> = ({ id, title, hidden, children }) => (
  <div class={hidden === "sr-only" ? "sr-only" : "table-wrap"}>
    <table id={`${id}-table`}>
      <caption class="sr-only">{title}: data</caption>
      {children}
    </table>
  </div>
);

function seriesClass(index: number): string {
  return `series-${(index % 3) + 1}`;
}

/** Dash pattern of series `index`: solid, dashed, dotted (so lines differ without colour). */
function dash(index: number): string | undefined {
  return [undefined, "6 4", "2 3"][index % 3];
}

/** One cell per series at time `t` (a loop: precompiled JSX would print a `key`). */
function valueCells(series: readonly TimeSeries[], t: number): Child[] {
  const cells: Child[] = [];
  for (const s of series) cells.push(<td class="num">{valueAt(s, t)}</td>);
  return cells;
}

function valueAt(series: TimeSeries, t: number): string {
  const point = series.points.find((p) => p.t === t);
  return point ? formatValue(point.v) : "";
}

function formatValue(v: number): string {
  return Math.abs(v) >= 1000
    ? Math.round(v).toLocaleString("en-US")
    : String(Number(v.toPrecision(3)));
}
