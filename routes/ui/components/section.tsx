/**
 * Page sections and the page head. The head leads with the answer: the
 * status as a badge and one sentence saying why, evidence below.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { StatusBadge, toneOf } from "./badge.tsx";
import { Shown, shownChild } from "./shown_text.tsx";

/** A titled section, labelled by its heading. */
export const Section: FC<
  { id: string; title: string; intro?: Child; children?: Child }
> = ({ id, title, intro, children }) => (
  <section class="section" id={id} aria-labelledby={`${id}-title`}>
    <h2 id={`${id}-title`}>
      <Shown text={title} />
    </h2>
    {intro ? <p class="section__intro">{shownChild(intro)}</p> : null}
    {children}
  </section>
);

/** The page title with its status badge and the reason in one sentence. */
export const PageHead: FC<{
  eyebrow?: string;
  title: string;
  status: string;
  reason: Child;
  meta?: Child;
}> = ({ eyebrow, title, status, reason, meta }) => (
  <div class="page-head">
    {eyebrow ? <p class="eyebrow">{eyebrow}</p> : null}
    <div class="title-row">
      <h1>
        <Shown text={title} />
      </h1>
      <StatusBadge status={status} size="lg" />
    </div>
    <div class={`verdict verdict--${toneOf(status)}`} role="status">
      <p class="verdict__reason">{shownChild(reason)}</p>
      {meta ? <p class="meta">{shownChild(meta)}</p> : null}
    </div>
  </div>
);
