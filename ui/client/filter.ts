/// <reference lib="dom" />
/**
 * Table filters: `<input type="search" data-filter="TABLE_ID" hidden>` hides
 * the rows of that table's body that do not contain the typed text. The
 * text is kept in the URL (`?q=`) so a filtered view can be shared. When
 * nothing matches, a row in the table's foot says so (naming the table's
 * rows by the input's `data-filter-noun`, default "row") with a button
 * that clears the filter.
 */

import { announce } from "./announce.ts";

/** Shows every filter input under `root` and wires it to its table. */
export function enableFilters(root: ParentNode): void {
  for (
    const input of root.querySelectorAll<HTMLInputElement>(
      "input[data-filter]",
    )
  ) {
    const table = document.getElementById(input.dataset.filter ?? "");
    if (!(table instanceof HTMLTableElement)) continue;
    const wrapper = input.closest<HTMLElement>("[data-filter-box]") ?? input;
    wrapper.hidden = false;
    input.hidden = false;
    const param = input.name || "q";
    input.value = new URLSearchParams(location.search).get(param) ?? "";
    const noun = input.dataset.filterNoun || "row";
    const clear = () => {
      input.value = "";
      apply();
      input.focus();
    };
    /** Shows the matching rows; returns what to announce. */
    const filter = () => {
      const shown = filterRows(table, input.value);
      return showNoMatch(table, input.value, shown, noun, clear) ??
        `${shown} matching rows`;
    };
    const apply = () => {
      const said = filter();
      keepInUrl(param, input.value);
      announce(said);
    };
    input.addEventListener("input", apply);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && input.value !== "") clear();
    });
    if (input.value !== "") filter();
  }
}

/**
 * Shows the table's "No … matches" row when `shown` is 0 (hides it
 * otherwise) and returns its sentence, or `null` when rows matched.
 */
function showNoMatch(
  table: HTMLTableElement,
  text: string,
  shown: number,
  noun: string,
  clear: () => void,
): string | null {
  let row = table.querySelector<HTMLTableRowElement>("tr[data-filter-empty]");
  if (shown > 0) {
    if (row) row.hidden = true;
    return null;
  }
  if (!row) {
    row = (table.tFoot ?? table.createTFoot()).insertRow();
    row.dataset.filterEmpty = "";
    const cell = row.insertCell();
    cell.colSpan = Math.max(1, table.tHead?.rows[0]?.cells.length ?? 1);
    cell.append(document.createElement("span"), " ");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "Clear the filter";
    button.addEventListener("click", clear);
    cell.append(button);
  }
  const sentence = `No ${noun} matches “${text.trim()}”.`;
  row.cells[0]!.querySelector("span")!.textContent = sentence;
  row.hidden = false;
  return sentence;
}

/** Hides non-matching body rows; returns how many stay visible. */
function filterRows(table: HTMLTableElement, text: string): number {
  const needle = text.trim().toLowerCase();
  let shown = 0;
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      const match = needle === "" ||
        (row.textContent ?? "").toLowerCase().includes(needle);
      row.hidden = !match;
      if (match) shown++;
    }
  }
  return shown;
}

function keepInUrl(param: string, value: string): void {
  const url = new URL(location.href);
  if (value === "") url.searchParams.delete(param);
  else url.searchParams.set(param, value);
  history.replaceState(null, "", url);
}
