/// <reference lib="dom" />
/**
 * Findings that point at samples: a click on an element with
 * `data-samples="0 3 4"` (a finding, or its samples link) highlights every
 * element with a matching `data-sample` (the timeline's columns and the
 * sample table's rows) and scrolls the timeline into view. Without this
 * script the samples link is an anchor to the first sample's row.
 */

import { announce } from "./announce.ts";

/** Wires every finding under `root` to its samples. */
export function enableHighlights(root: Document): void {
  const findings = [
    ...root.querySelectorAll<HTMLElement>("li[data-samples]"),
  ];
  for (const finding of findings) {
    finding.addEventListener("click", (event) => {
      const target = event.target as HTMLElement | null;
      // Other links and buttons inside a finding keep their own meaning.
      if (
        target?.closest("a, button") &&
        !target.closest("[data-samples]:not(li)")
      ) {
        return;
      }
      event.preventDefault();
      select(root, finding, findings);
    });
  }
}

function select(
  root: Document,
  finding: HTMLElement,
  all: readonly HTMLElement[],
): void {
  const wanted = new Set((finding.dataset.samples ?? "").split(" "));
  for (const other of all) {
    other.classList.toggle("is-selected", other === finding);
  }
  let rows = 0;
  for (const element of root.querySelectorAll<Element>("[data-sample]")) {
    const on = wanted.has(element.getAttribute("data-sample") ?? "");
    element.classList.toggle("is-highlighted", on);
    if (on && element instanceof HTMLTableRowElement) rows++;
  }
  const label = finding.querySelector(".finding__number")?.textContent ?? "";
  announce(`${label}: ${rows} sample${rows === 1 ? "" : "s"} highlighted`);
  const timeline = root.getElementById("timeline");
  timeline?.scrollIntoView({ block: "nearest", behavior: "smooth" });
}
