/**
 * The site navigation, in one place. The full order is Overview, Runs,
 * Targets, Regressions, Reference, Traces, Health; an entry joins this list
 * when its page exists, so the header never links to a page that is not
 * there.
 *
 * @module
 */

/** One navigation entry. */
export interface NavItem {
  label: string;
  href: string;
  /** Paths starting with this mark the entry as the current page. */
  prefix: string;
}

/** The entries shown in the header, in order. */
export const NAV_ITEMS: readonly NavItem[] = [
  { label: "Traces", href: "/traces/find", prefix: "/traces" },
  { label: "Health", href: "/traces/health", prefix: "/traces/health" },
];

/** Where `/` sends a signed-in visitor until the overview page exists. */
export const HOME_PATH = "/traces/health";

/** The entry that `path` belongs to, if any (the longest matching prefix wins). */
export function currentNavItem(path: string): NavItem | undefined {
  return NAV_ITEMS.filter((item) =>
    path === item.prefix || path.startsWith(item.prefix + "/") ||
    path.startsWith(item.prefix + ".")
  ).sort((a, b) => b.prefix.length - a.prefix.length)[0];
}
