/// <reference lib="dom" />
/**
 * Search forms marked `data-drop-empty` leave their empty fields out of the
 * URL they submit, so a search URL names only what was asked. Without the
 * script the server ignores empty fields anyway.
 */

/** Wires every `form[data-drop-empty]` under `root`. */
export function enableSearchForms(root: ParentNode): void {
  for (
    const form of root.querySelectorAll<HTMLFormElement>(
      "form[data-drop-empty]",
    )
  ) {
    form.addEventListener("submit", () => {
      for (
        const field of form.querySelectorAll<
          HTMLInputElement | HTMLSelectElement
        >("input[name], select[name]")
      ) {
        if (field.value === "" && !field.disabled) {
          field.disabled = true;
          // Re-enabled after submission, so going back shows the field usable.
          setTimeout(() => (field.disabled = false), 0);
        }
      }
    });
  }
}
