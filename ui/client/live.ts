/// <reference lib="dom" />
/**
 * Live progress by polling: an element with `data-live-url` (a JSON twin)
 * and `data-live-state` (the state the page was rendered in) reloads the
 * page when the twin's `state` field changes, so the server renders the new
 * state. Until then, elements with `data-live-text="a.b"` show the twin's
 * value at that path (e.g. a running job's progress), and with
 * `data-live-region="ID"` the element `#ID` is replaced, on each poll, by
 * the same element of the page as the server renders it now (at the
 * page's own URL): everything the server words from the
 * state (a run's headline, its issued ids) follows it, not only the texts.
 * A region is left alone while the reader selects text in it. Polling
 * pauses while the tab is hidden and stops after repeated failures (the
 * page then says so).
 */

const DEFAULT_INTERVAL_MS = 2000;
const MAX_FAILURES = 5;

/** Called with a region after its content was replaced (to wire its buttons again). */
export type OnSwap = (region: HTMLElement) => void;

/** Starts polling for every live element under `root`. */
export function enableLive(root: ParentNode, onSwap?: OnSwap): void {
  for (const element of root.querySelectorAll<HTMLElement>("[data-live-url]")) {
    poll(element, onSwap);
  }
}

/** Sets every `[data-live-text]` to the twin's value at its path. */
function updateTexts(body: unknown): void {
  for (
    const element of document.querySelectorAll<HTMLElement>("[data-live-text]")
  ) {
    const value = (element.dataset.liveText ?? "").split(".")
      .reduce<unknown>(
        (at, key) =>
          at !== null && typeof at === "object"
            ? (at as Record<string, unknown>)[key]
            : undefined,
        body,
      );
    if (typeof value === "string" || typeof value === "number") {
      element.textContent = String(value);
    }
  }
}

/** Whether the reader has text selected inside `region`. */
function selecting(region: HTMLElement): boolean {
  const selection = globalThis.getSelection();
  return selection !== null && !selection.isCollapsed &&
    region.contains(selection.anchorNode);
}

/**
 * Replaces `region`'s content with `fresh`'s, keeping which `<details>` are
 * open and the focused element (by id). Returns whether anything changed.
 */
function swap(region: HTMLElement, fresh: Element): boolean {
  if (region.innerHTML === fresh.innerHTML) return false;
  const open = [...region.querySelectorAll("details")].map((d) => d.open);
  const focused = document.activeElement;
  const focusId = focused && region.contains(focused) ? focused.id : "";
  // The parsed page is thrown away: its nodes move over, not copies.
  region.replaceChildren(...fresh.childNodes);
  region.querySelectorAll("details").forEach((d, i) => {
    if (open[i] !== undefined) d.open = open[i]!;
  });
  if (focusId) document.getElementById(focusId)?.focus();
  return true;
}

/**
 * The page as the server renders it now: `null` when it no longer has the
 * region in the state the page was rendered in (the caller reloads).
 */
async function freshRegion(
  page: string,
  regionId: string,
  rendered: string,
): Promise<Element | null> {
  const response = await fetch(page, {
    headers: { accept: "text/html" },
    credentials: "same-origin",
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const doc = new DOMParser().parseFromString(
    await response.text(),
    "text/html",
  );
  const region = doc.getElementById(regionId);
  const state = region?.querySelector<HTMLElement>("[data-live-url]")?.dataset
    .liveState;
  return region && state === rendered ? region : null;
}

function poll(element: HTMLElement, onSwap?: OnSwap): void {
  const url = element.dataset.liveUrl ?? "";
  const rendered = element.dataset.liveState ?? "";
  const interval = Number(element.dataset.liveInterval) || DEFAULT_INTERVAL_MS;
  const regionId = element.dataset.liveRegion ?? "";
  const page = `${location.pathname}${location.search}`;
  let failures = 0;
  const tick = async () => {
    if (document.hidden) return schedule();
    try {
      const response = await fetch(url, {
        headers: { accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body = await response.json() as { state?: unknown };
      if (String(body.state ?? "") !== rendered) return location.reload();
      updateTexts(body);
      const region = regionId ? document.getElementById(regionId) : null;
      if (region && !selecting(region)) {
        const fresh = await freshRegion(page, regionId, rendered);
        if (!fresh) return location.reload();
        if (swap(region, fresh)) onSwap?.(region);
      }
      failures = 0;
    } catch {
      failures++;
      if (failures >= MAX_FAILURES) {
        // After a swap the live element is the region's new copy.
        const shown = document.querySelector<HTMLElement>(
          `[data-live-url="${CSS.escape(url)}"]`,
        ) ??
          element;
        shown.dataset.liveFailed = "true";
        shown.textContent =
          "Live updates stopped: the server did not answer. Reload the page to try again.";
        return;
      }
    }
    schedule();
  };
  const schedule = () => void setTimeout(tick, interval);
  schedule();
}
