/// <reference lib="dom" />
/**
 * The page of a revealed preview answers a form post: reloading it would
 * post the reveal again, show the content again and record a second audit
 * entry. The script gives the page the address of the event page it leads
 * back to (`data-hide-href`), so a reload hides the content instead.
 */

/** Points a revealed preview's page at its event page. */
export function enableRevealReload(root: Document): void {
  const revealed = root.querySelector<HTMLElement>(
    "[data-revealed][data-hide-href]",
  );
  const href = revealed?.dataset.hideHref;
  if (href) history.replaceState(null, "", href);
}
