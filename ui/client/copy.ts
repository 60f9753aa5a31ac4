/// <reference lib="dom" />
/** Copy buttons: `<button data-copy="VALUE" hidden>` next to an id. */

import { announce } from "./announce.ts";

/** Shows every copy button under `root` and makes it copy its value. */
export function enableCopyButtons(root: ParentNode): void {
  for (
    const button of root.querySelectorAll<HTMLButtonElement>(
      "button[data-copy]",
    )
  ) {
    button.hidden = false;
    button.addEventListener("click", () => void copy(button));
  }
}

async function copy(button: HTMLButtonElement): Promise<void> {
  const value = button.dataset.copy ?? "";
  const label = button.textContent ?? "Copy";
  try {
    await navigator.clipboard.writeText(value);
    button.textContent = "Copied";
    announce("Copied to the clipboard");
  } catch {
    // No clipboard access (an insecure origin or a denied permission):
    // select the id so the keyboard shortcut copies it.
    selectSibling(button);
    button.textContent = "Press Ctrl+C";
  }
  setTimeout(() => (button.textContent = label), 1500);
}

function selectSibling(button: HTMLButtonElement): void {
  const code = button.parentElement?.querySelector("code");
  const selection = globalThis.getSelection();
  if (!code || !selection) return;
  const range = document.createRange();
  range.selectNodeContents(code);
  selection.removeAllRanges();
  selection.addRange(range);
}
