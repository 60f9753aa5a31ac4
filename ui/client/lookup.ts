/// <reference lib="dom" />
/**
 * Artifact lookups in place: a click on `a[data-artifact-lookup]` asks the
 * link's JSON endpoint (`GET /traces/artifact.json`, audited) and shows the
 * answer beside the link instead of leaving the page. Without the script the
 * link opens the JSON answer itself.
 */

import { announce } from "./announce.ts";

/** What the artifact endpoint answers (the fields shown). */
interface LookupAnswer {
  state?: {
    ownership_verified?: boolean;
    exists?: boolean;
    version?: string;
  };
  audit?: { seq?: number };
  error?: { message?: string };
}

/** Wires every artifact lookup link under `root`. */
export function enableArtifactLookups(root: ParentNode): void {
  for (
    const link of root.querySelectorAll<HTMLAnchorElement>(
      "a[data-artifact-lookup]",
    )
  ) {
    link.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      void lookUp(link);
    });
  }
}

async function lookUp(link: HTMLAnchorElement): Promise<void> {
  const out = resultOf(link);
  out.textContent = "looking up…";
  let text: string;
  try {
    const response = await fetch(link.href, {
      headers: { accept: "application/json" },
      credentials: "same-origin",
    });
    const answer = await response.json() as LookupAnswer;
    text = response.ok
      ? describe(answer)
      : answer.error?.message ?? `the lookup failed (HTTP ${response.status})`;
  } catch {
    text = "the lookup failed; open the link for the server's answer";
  }
  out.textContent = text;
  announce(text);
}

/** The element beside `link` that holds its answer (made once). */
function resultOf(link: HTMLAnchorElement): HTMLElement {
  const next = link.nextElementSibling;
  if (next instanceof HTMLElement && next.dataset.lookupResult !== undefined) {
    return next;
  }
  const out = document.createElement("span");
  out.className = "lookup-result";
  out.dataset.lookupResult = "";
  link.after(out);
  return out;
}

/** The answer in words: whether it exists now, its version, the audit entry. */
function describe(answer: LookupAnswer): string {
  const state = answer.state ?? {};
  const parts = [
    state.exists === false
      ? "does not exist now"
      : state.exists === true
      ? "exists now"
      : "ownership verified",
  ];
  if (state.version !== undefined) parts.push(`version ${state.version}`);
  if (answer.audit?.seq !== undefined) {
    parts.push(`audit entry ${answer.audit.seq}`);
  }
  return parts.join(", ");
}
