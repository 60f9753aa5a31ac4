/// <reference lib="dom" />
/**
 * The trace UI's one browser script. Pages work without it; it adds copy
 * buttons, table filters, keyboard navigation, live refresh, the
 * highlighting of the samples behind a finding, artifact lookups shown in
 * place, and a revealed preview that a reload hides instead of revealing
 * again. Bundled by `deno task build:ui` into routes/ui/_client_bundle.ts.
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
import { enableRevealReload } from "./reveal.ts";

function start(): void {
  document.documentElement.classList.add("js");
  enableCopyButtons(document);
  enableFilters(document);
  enableKeyboard(document);
  // A live region's new content gets its buttons and links wired again.
  enableLive(document, (region) => {
    enableCopyButtons(region);
    enableArtifactLookups(region);
  });
  enableHighlights(document);
  enableSearchForms(document);
  enableArtifactLookups(document);
  enableRevealReload(document);
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
