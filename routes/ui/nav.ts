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
  { label: "Overview", href: "/", prefix: "/" },
  { label: "Runs", href: "/runs", prefix: "/runs" },
  { label: "Targets", href: "/targets", prefix: "/targets" },
  { label: "Regressions", href: "/regressions", prefix: "/regressions" },
  { label: "Reference", href: "/reference", prefix: "/reference" },
  { label: "Health", href: "/traces/health", prefix: "/traces/health" },
];

/** The entry that `path` belongs to, if any. */
export function currentNavItem(path: string): NavItem | undefined {
  return NAV_ITEMS.find((item) =>
    path === item.prefix || path.startsWith(item.prefix + "/") ||
    path.startsWith(item.prefix + ".")
  );
}
