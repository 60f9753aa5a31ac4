/// <reference lib="dom" />
/**
 * Table filters: `<input type="search" data-filter="TABLE_ID" hidden>` hides
 * the rows of that table's body that do not contain the typed text. The
 * text is kept in the URL (`?q=`) so a filtered view can be shared.
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
    const apply = () => {
      const shown = filterRows(table, input.value);
      keepInUrl(param, input.value);
      announce(`${shown} matching rows`);
    };
    input.addEventListener("input", apply);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && input.value !== "") {
        input.value = "";
        apply();
      }
    });
    if (input.value !== "") filterRows(table, input.value);
  }
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
