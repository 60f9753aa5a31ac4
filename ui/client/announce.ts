/// <reference lib="dom" />
/** Polite announcements for screen readers through the page's live region. */

/** Says `text` through `#announce` (rendered by the page shell). */
export function announce(text: string): void {
  const region = document.getElementById("announce");
  if (!region) return;
  // Clearing first makes a repeated message be read again.
  region.textContent = "";
  setTimeout(() => (region.textContent = text), 50);
}
