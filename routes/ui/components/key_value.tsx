/**
 * A definition list of facts: a term, its value and an optional hint
 * saying what the value means.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { Shown, shownChild } from "./shown_text.tsx";

/** One fact of a {@link KeyValue} panel. */
export interface KeyValueItem {
  term: string;
  value: Child;
  hint?: Child;
}

/** Facts as `<dl>`: two columns on a wide screen, stacked on a phone. */
export const KeyValue: FC<{ items: readonly KeyValueItem[] }> = (
  { items },
) => (
  <dl class="kv">
    {items.map((item) => (
      <>
        <dt>
          <Shown text={item.term} />
        </dt>
        <dd>
          {shownChild(item.value)}
          {item.hint
            ? <span class="kv__hint">{shownChild(item.hint)}</span>
            : null}
        </dd>
      </>
    ))}
  </dl>
);
