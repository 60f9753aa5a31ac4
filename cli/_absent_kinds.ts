/**
 * The words `trace events query` adds to an empty page whose `--kind` names
 * a kind no event in scope carries, so a typo is not taken for "nothing
 * happened".
 */

import type { KindsAbsent, KindScope } from "../lib/obs/query/mod.ts";
import { displaySafe } from "../lib/obs/mod.ts";

/** Held kinds the text lists; `--json` lists them all (at most a summary's kinds). */
const TEXT_KINDS = 20;

/** One line: which asked kinds the scope holds no event of, and the kinds it holds. */
export function absentKindsLine(
  scope: KindScope,
  found: KindsAbsent,
): string {
  const where = scopeWords(scope);
  const asked = found.absent.map(displaySafe).join(", ");
  const kindWord = found.absent.length === 1 ? "kind" : "any of the kinds";
  return `no stored event ${where} has ${kindWord} ${asked}; ${
    heldWords(found, where)
  }`;
}

function heldWords(found: KindsAbsent, where: string): string {
  if (found.held.length === 0) return `no event ${where} is stored at all`;
  const shown = found.held.slice(0, TEXT_KINDS).map(displaySafe).join(", ");
  const more = found.held.length - TEXT_KINDS;
  const among = found.held_partial ? " (of the newest events read)" : "";
  return `kinds stored there${among}: ${shown}${
    more > 0 ? ` and ${more} more (--json lists them)` : ""
  }`;
}

function scopeWords(scope: KindScope): string {
  const parts: string[] = [];
  if (scope.application_id !== undefined) {
    parts.push(`application ${displaySafe(scope.application_id)}`);
  }
  if (typeof scope.user_id === "string") {
    parts.push(`user ${displaySafe(scope.user_id)}`);
  }
  const words = parts.length === 0 ? [] : [`of ${parts.join(" and ")}`];
  if (scope.user_id === null) words.push("without a user");
  return words.length === 0 ? "in the index" : words.join(" ");
}
