/**
 * A definition list of facts: a term, its value and an optional hint
 * saying what the value means.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";

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
        <dt>{item.term}</dt>
        <dd>
          {item.value}
          {item.hint ? <span class="kv__hint">{item.hint}</span> : null}
        </dd>
      </>
    ))}
  </dl>
);
