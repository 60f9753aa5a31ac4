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

/**
 * Ids up to this long are kept on one line (`my-staging`,
 * `cfg-c0cb2cedb25e`): broken at a hyphen they read as two words, and a
 * column has room for them.
 */
export const WHOLE_ID_LENGTH = 16;

/** The class of an id's element: `nowrap` for a short id, else `id-wrap` (its `<wbr>`s may end a line). */
export function idWrapClass(id: string): "nowrap" | "id-wrap" {
  return id.length <= WHOLE_ID_LENGTH ? "nowrap" : "id-wrap";
}

/**
 * `id` with a line allowed to end after each `-`, `.` and `_`; a short id
 * (see {@link WHOLE_ID_LENGTH}) as it is.
 */
export function wrappingId(id: string): Child[] {
  if (id.length <= WHOLE_ID_LENGTH) return [id];
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
