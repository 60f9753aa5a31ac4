/**
 * The site navigation, in one place: Overview, Runs, Targets, Regressions,
 * Compare, Reference, Traces, Health. The header shows only the entries the signed-in
 * operator may open (a tenant-bound account sees its trace pages), so it
 * never links to a page that would refuse them.
 *
 * @module
 */

import { type Action, can, type Principal } from "../../lib/auth/mod.ts";

/** One navigation entry. */
export interface NavItem {
  label: string;
  href: string;
  /** Paths starting with this mark the entry as the current page. */
  prefix: string;
  /** What reading the entry's page takes (entries a principal may not open are not shown). */
  action: Action;
}

/** The entries shown in the header, in order. */
export const NAV_ITEMS: readonly NavItem[] = [
  { label: "Overview", href: "/", prefix: "/", action: "session" },
  { label: "Runs", href: "/runs", prefix: "/runs", action: "runs.read" },
  {
    label: "Targets",
    href: "/targets",
    prefix: "/targets",
    action: "runs.read",
  },
  {
    label: "Regressions",
    href: "/regressions",
    prefix: "/regressions",
    action: "runs.read",
  },
  {
    label: "Compare",
    href: "/compare",
    prefix: "/compare",
    action: "runs.read",
  },
  {
    label: "Reference",
    href: "/reference",
    prefix: "/reference",
    action: "runs.read",
  },
  {
    label: "Traces",
    href: "/traces/find",
    prefix: "/traces",
    action: "trace.read",
  },
  {
    label: "Health",
    href: "/traces/health",
    prefix: "/traces/health",
    action: "index.health",
  },
];

/** The entry that `path` belongs to, if any (the longest matching prefix wins). */
export function currentNavItem(path: string): NavItem | undefined {
  return NAV_ITEMS.filter((item) =>
    path === item.prefix || path.startsWith(item.prefix + "/") ||
    path.startsWith(item.prefix + ".")
  ).sort((a, b) => b.prefix.length - a.prefix.length)[0];
}

/** The entries `principal` may open, in order. */
export function navItemsFor(principal: Principal): NavItem[] {
  return NAV_ITEMS.filter((item) => can(principal, item.action));
}
