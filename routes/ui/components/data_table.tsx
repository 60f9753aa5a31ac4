/**
 * A data table that scrolls inside itself on a narrow screen (never the
 * page), or with `stack` turns each row into a block of labelled cells that
 * wrap ({@link stackLabel}), with numeric columns right-aligned, an optional
 * filter box (shown by the browser script) and rows reachable with `j` / `k`.
 *
 * @module
 */

import type { Child } from "hono/jsx";
import { EmptyState } from "./empty_state.tsx";
import { Shown, shownChild } from "./shown_text.tsx";

/** One column: a header and how to render a row's cell. */
export interface Column<T> {
  header: string;
  /** Right-aligned, tabular figures. */
  numeric?: boolean;
  /** The cell names its row (`<th scope="row">`). */
  rowHeader?: boolean;
  cell: (row: T) => Child;
}

/** Props of {@link DataTable}. */
export interface DataTableProps<T> {
  /** Needed for a filter box or links to the table. */
  id?: string;
  caption: string;
  /** Hide the caption visually when a heading already names the table. */
  captionHidden?: boolean;
  columns: readonly Column<T>[];
  rows: readonly T[];
  /** Shown instead of the table when there are no rows. */
  empty?: { title: string; text?: Child; command?: string };
  /** Offer a filter box (requires `id`). */
  filter?: boolean;
  /** What a row is, for the filter's "No … matches" row (default "row"). */
  filterNoun?: string;
  /**
   * The query parameter the filter keeps its text in (default `q`): one
   * its page accepts and does not read as a search of its own.
   */
  filterParam?: string;
  /** Mark rows for `j` / `k` navigation. */
  navigable?: boolean;
  /** Keep a table of few columns from stretching across a wide page. */
  narrow?: boolean;
  /** On a phone, show each row as a block of cells labelled with their column, wrapping instead of scrolling. */
  stack?: boolean;
}

/** The class of a table whose rows stack on a phone (`ui/style.css`). */
export const STACK_TABLE = "table--stack";

/**
 * The attribute a cell of a stacking table carries: its column's header,
 * which the stylesheet writes before the value once the header row is
 * hidden on a narrow screen.
 */
export function stackLabel(header: string): { "data-label": string } {
  return { "data-label": header };
}

/** Renders rows as a table, or the empty state when there are none. */
export function DataTable<T>(props: DataTableProps<T>): Child {
  const { id, columns, rows, empty } = props;
  if (rows.length === 0 && empty) {
    return (
      <EmptyState title={empty.title} command={empty.command}>
        {empty.text}
      </EmptyState>
    );
  }
  return (
    <div class="stack">
      {props.filter && id
        ? (
          <FilterBox
            table={id}
            noun={props.filterNoun}
            param={props.filterParam}
          />
        )
        : null}
      <div
        class={props.narrow ? "table-wrap table-wrap--narrow" : "table-wrap"}
      >
        <table id={id} class={props.stack ? STACK_TABLE : undefined}>
          <caption class={props.captionHidden ? "sr-only" : undefined}>
            <Shown text={props.caption} />
          </caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th scope="col" class={column.numeric ? "num" : undefined}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr data-nav-item={props.navigable ? "" : undefined}>
                {columns.map((column) =>
                  cell(column, row, props.stack === true)
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function cell<T>(column: Column<T>, row: T, stack: boolean): Child {
  const className = column.numeric ? "num" : undefined;
  // A row header needs no label: it leads its block.
  return column.rowHeader
    ? <th scope="row" class={className}>{shownChild(column.cell(row))}</th>
    : (
      <td class={className} {...(stack ? stackLabel(column.header) : {})}>
        {shownChild(column.cell(row))}
      </td>
    );
}

function FilterBox(
  { table, noun, param }: {
    table: string;
    noun: string | undefined;
    param: string | undefined;
  },
): Child {
  const id = `${table}-filter`;
  return (
    <div data-filter-box hidden>
      <label for={id}>Filter rows</label>
      <input
        type="search"
        id={id}
        name={param}
        data-filter={table}
        data-filter-noun={noun}
        autocomplete="off"
      />
    </div>
  );
}
