/// <reference lib="dom" />
/**
 * Keyboard navigation: `/` focuses the page's filter, `j` and `k` move
 * through the items marked `data-nav-item` (rows, findings, events). The
 * footer's hints (`[data-key-hint]`, rendered hidden) show for the keys that
 * do something on this page.
 */

/** Installs the page's keyboard shortcuts (after the filters are shown). */
export function enableKeyboard(root: Document): void {
  showHints(root);
  root.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey) return;
    if (event.metaKey || isTyping(event.target)) return;
    if (event.key === "/") {
      const filter = root.querySelector<HTMLInputElement>(
        "input[data-filter]:not([hidden])",
      );
      if (filter) {
        event.preventDefault();
        filter.focus();
      }
    } else if (event.key === "j" || event.key === "k") {
      if (move(root, event.key === "j" ? 1 : -1)) event.preventDefault();
    }
  });
}

function showHints(root: Document): void {
  const applies: Record<string, boolean> = {
    filter: root.querySelector("input[data-filter]:not([hidden])") !== null,
    move: root.querySelector("[data-nav-item]") !== null,
  };
  let any = false;
  for (const hint of root.querySelectorAll<HTMLElement>("[data-key-hint]")) {
    hint.hidden = !applies[hint.dataset.keyHint ?? ""];
    any ||= !hint.hidden;
  }
  const hints = root.querySelector<HTMLElement>("[data-key-hints]");
  if (hints) hints.hidden = !any;
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement ||
    (target instanceof HTMLElement && target.isContentEditable);
}

function move(root: Document, step: 1 | -1): boolean {
  const items = [...root.querySelectorAll<HTMLElement>("[data-nav-item]")]
    .filter((item) => item.offsetParent !== null);
  if (items.length === 0) return false;
  const active = root.activeElement;
  const current = items.findIndex((item) =>
    item === active || item.contains(active)
  );
  const next = current === -1
    ? (step === 1 ? 0 : items.length - 1)
    : Math.min(items.length - 1, Math.max(0, current + step));
  const item = items[next]!;
  if (item.tabIndex < 0 && !item.matches("a, button")) item.tabIndex = -1;
  item.focus();
  item.scrollIntoView({ block: "nearest" });
  return true;
}
