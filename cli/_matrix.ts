/**
 * The reference matrix as text: one row per system, a few characters per
 * cell, so matrix, legend and notes fit a 100-column terminal.
 *
 * @module
 */

import {
  type DashboardRow,
  FAMILIES,
  type FamilyCell,
} from "../lib/reference/dashboard.ts";
import { tableLines } from "./_table.ts";

/** A matrix cell in a few characters, so the matrix fits 100 columns. */
function cellText(cell: FamilyCell): string {
  switch (cell.status) {
    case "erased":
    case "transient":
      return seconds(cell.time_to_erasure_seconds);
    case "residual":
      return "LEFT";
    case "interrupted":
      return "cut";
    case "lost":
      return "LOST";
    case "grew":
      return "GREW";
    case "complete":
      return "done";
    case "incomplete":
      return "NOT DONE";
    case "unknown":
      return "?";
    default:
      return cell.status;
  }
}

/** The legend under the matrix; `dataFlags` are repeated in the command it names. */
function matrixLegend(dataFlags: string): string {
  return `Store and marker cells: the virtual time after the deletion was acknowledged from which it stayed 0 (0.00 s: erased at once; later: a transient residual). LEFT: still there at the final sample. cut: the window was interrupted, so nothing was decided. ?: not observed. Cleanup NOT DONE: the system kept records its run's cleanup deleted, as a real application would keep them; the system was discarded after its run, so nothing is left to remove. Details of one system: trace reference show SYSTEM${dataFlags}.`;
}

/**
 * Renders dashboard rows as a text matrix with a legend, at most 100 columns
 * wide; `dataFlags` (the shell-quoted `--data-dir` / `--db` of the command)
 * are repeated in the command the legend names.
 */
export function renderMatrix(
  rows: readonly DashboardRow[],
  dataFlags = "",
): string {
  const header = [
    "system",
    "observed",
    ...FAMILIES.map((f) =>
      f === "retrieval" ? "marker" : f.replace("_records", "")
    ),
  ];
  const body = rows.map((row) => [
    row.blind_spot ? `${row.system} (!)` : row.system,
    row.matches ? row.observed : `${row.observed} *`,
    ...FAMILIES.map((f) => cellText(row.families[f])),
  ]);
  const notes = [
    ...rows.filter((r) => !r.matches).map((r) =>
      `* ${r.system}: off its expected outcome: ${r.mismatches.join("; ")}`
    ),
    ...rows.filter((r) => r.blind_spot).map((r) =>
      `(!) ${r.system}: blind spot, not a guarantee: ${r.blind_spot}`
    ),
  ];
  return [
    ...tableLines([header, ...body]),
    "",
    ...wrap(matrixLegend(dataFlags), MATRIX_WIDTH),
    ...notes.flatMap((note) => wrap(note, MATRIX_WIDTH, "    ")),
  ].join("\n") + "\n";
}

/** Width the matrix and its notes keep within. */
export const MATRIX_WIDTH = 100;

/** Wraps `text` at spaces into lines of at most `width` characters. */
export function wrap(text: string, width: number, indent = ""): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line === "" ? word : `${line} ${word}`;
    if (next.length > width && line !== "") {
      lines.push(line);
      line = `${indent}${word}`;
    } else line = next;
  }
  if (line !== "") lines.push(line);
  return lines;
}

function seconds(value: number | null): string {
  return value === null ? "never" : `${value.toFixed(2)} s`;
}
