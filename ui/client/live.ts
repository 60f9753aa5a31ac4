/// <reference lib="dom" />
/**
 * Live progress by polling: an element with `data-live-url` (a JSON twin)
 * and `data-live-state` (the state the page was rendered in) reloads the
 * page when the twin's `state` field changes, so the server renders the new
 * state. Until then, elements with `data-live-text="a.b"` show the twin's
 * value at that path (e.g. a running job's progress). Polling pauses while the tab is hidden and stops after repeated
 * failures (the page then says so).
 */

const DEFAULT_INTERVAL_MS = 2000;
const MAX_FAILURES = 5;

/** Starts polling for every live element under `root`. */
export function enableLive(root: ParentNode): void {
  for (const element of root.querySelectorAll<HTMLElement>("[data-live-url]")) {
    poll(element);
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

function poll(element: HTMLElement): void {
  const url = element.dataset.liveUrl ?? "";
  const rendered = element.dataset.liveState ?? "";
  const interval = Number(element.dataset.liveInterval) || DEFAULT_INTERVAL_MS;
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
      failures = 0;
      if (String(body.state ?? "") !== rendered) return location.reload();
      updateTexts(body);
    } catch {
      failures++;
      if (failures >= MAX_FAILURES) {
        element.dataset.liveFailed = "true";
        element.textContent =
          "Live updates stopped: the server did not answer. Reload the page to try again.";
        return;
      }
    }
    schedule();
  };
  const schedule = () => void setTimeout(tick, interval);
  schedule();
}
