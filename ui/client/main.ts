/// <reference lib="dom" />
/**
 * The trace UI's one browser script. Pages work without it; it adds copy
 * buttons, table filters, keyboard navigation, live refresh, the
 * highlighting of the samples behind a finding, and artifact lookups shown
 * in place. Bundled by `deno task build:ui` into routes/ui/_client_bundle.ts.
 *
 * @module
 */

import { enableCopyButtons } from "./copy.ts";
import { enableFilters } from "./filter.ts";
import { enableHighlights } from "./highlight.ts";
import { enableSearchForms } from "./forms.ts";
import { enableKeyboard } from "./keys.ts";
import { enableLive } from "./live.ts";
import { enableArtifactLookups } from "./lookup.ts";

function start(): void {
  document.documentElement.classList.add("js");
  enableCopyButtons(document);
  enableFilters(document);
  enableKeyboard(document);
  enableLive(document);
  enableHighlights(document);
  enableSearchForms(document);
  enableArtifactLookups(document);
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
