/**
 * `/reference/assessments/mem0` and its JSON twin: the write-up of the
 * recorded Mem0 assessment, rendered as a page of the UI (the reference
 * page's "Assessed real systems" links it), its Markdown in the twin.
 *
 * @module
 */

import { raw } from "hono/html";
import { PageHead } from "../ui/components/section.tsx";
import { markdownHtml } from "../ui/markdown.ts";
import type { PageSpec } from "../ui/page.ts";
import { MEM0_ASSESSMENT as MEM0, MEM0_DOCUMENT_PATH } from "./reference.tsx";

/** The assessment document, as the page and its twin give it. */
export interface AssessmentDocument {
  /** The system assessed, as the assessment names it. */
  system: string;
  /** The day it was assessed (YYYY-MM-DD). */
  assessed_on: string;
  /** The document's path in the repository. */
  document: string;
  /** The document itself, as committed. */
  markdown: string;
}

/** The Mem0 assessment's write-up (`fixtures/adapters/mem0/ASSESSMENT.md`). */
export function assessmentPage(): PageSpec<AssessmentDocument> {
  return {
    path: MEM0_DOCUMENT_PATH,
    title: `Assessment: ${MEM0.system}`,
    query: [],
    load: async () => ({
      system: MEM0.system,
      assessed_on: MEM0.assessed_on,
      document: MEM0.document,
      markdown: await Deno.readTextFile(
        new URL("../../fixtures/adapters/mem0/ASSESSMENT.md", import.meta.url),
      ),
    }),
    render: (data) => (
      <>
        <PageHead
          eyebrow="Assessed real system"
          title={data.system}
          status="recorded"
          reason={
            <>
              A recorded assessment from{" "}
              <time datetime={data.assessed_on}>{data.assessed_on}</time>, run
              once with the same runner through a staging adapter; a run of the
              same target in this ledger shows up on the{" "}
              <a href="/reference#assessed">reference page</a> as observed.
            </>
          }
          meta={<code>{data.document}</code>}
        />
        <article class="document stack">
          {raw(markdownHtml(data.markdown))}
        </article>
      </>
    ),
  };
}
