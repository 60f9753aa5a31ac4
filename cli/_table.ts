/**
 * The one text-table renderer of the CLI: columns padded to their widest
 * cell, two spaces apart, numbers optionally right-aligned, no trailing
 * blanks. Every listing (targets, regressions, samples, the reference
 * matrix, command help) goes through it so they line up the same way.
 *
 * @module
 */

/** How one column is aligned. */
export type Align = "left" | "right";

/** Options for {@link tableLines}. */
export interface TableOptions {
  /** Per-column alignment (default left). */
  align?: readonly Align[];
  /** Text put before every line (e.g. two spaces of indent). */
  indent?: string;
}

/** Aligns `rows` (the header, if any, is simply the first row) into lines. */
export function tableLines(
  rows: readonly (readonly string[])[],
  options: TableOptions = {},
): string[] {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from(
    { length: columns },
    (_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length)),
  );
  const indent = options.indent ?? "";
  return rows.map((row) =>
    indent +
    row.map((cell, i) =>
      options.align?.[i] === "right"
        ? cell.padStart(widths[i]!)
        : cell.padEnd(widths[i]!)
    ).join("  ").trimEnd()
  );
}

/** A table with a header row, as one string ending in a newline. */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: TableOptions = {},
): string {
  return tableLines([header, ...rows], options).join("\n") + "\n";
}
