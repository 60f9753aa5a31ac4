/**
 * Ids in a narrow table column. An id wraps only where it reads apart: after
 * a `-`, `.` or `_` between its words (a run id only before its random
 * suffix), never inside a word, so an id on two lines stays recognisable.
 * A `<wbr>` marks where a line may end; the text itself (what is copied,
 * what a row filter matches) is the id. Whether a line may end there at
 * all is the stylesheet's choice (`.id-wrap`; run ids on narrower screens).
 *
 * @module
 */

import type { Child } from "hono/jsx";

/** `id` with a line allowed to end after each `-`, `.` and `_`. */
export function wrappingId(id: string): Child[] {
  const children: Child[] = [];
  // A loop: precompiled JSX would print a `key` for elements of a map.
  for (const [i, word] of id.split(/(?<=[-._])/).entries()) {
    if (i > 0) children.push(<wbr />);
    children.push(word);
  }
  return children;
}

/**
 * A run id (`run-20261129T214455Z-3f9a1c…`) that may wrap only before its
 * random suffix: its start is kept whole, where a line could otherwise end
 * after `run-`.
 */
export function wrappingRunId(id: string): Child {
  const cut = id.lastIndexOf("-") + 1;
  if (cut === 0) return id;
  return (
    <>
      <span class="nowrap">{id.slice(0, cut)}</span>
      <wbr />
      {id.slice(cut)}
    </>
  );
}
