/**
 * `/traces/inspect` when its query is refused: the page says what was wrong
 * and offers the way on, instead of the bare error page. A parameter whose
 * value was refused gets a link to the same view without it; a missing root
 * id, or a root id two applications share, gets a small form for the one
 * value to add, with the rest of the query kept. The JSON twin keeps the
 * error answer.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { Shown } from "../ui/components/shown_text.tsx";
import type { FormRefusal } from "../ui/form_refusal.tsx";
import type { PageView } from "../ui/page.ts";
import { joinAnd } from "../../lib/words.ts";
import {
  backToFinder,
  cleanParams,
  hrefOf,
  INSPECT_PATH,
  withParams,
} from "../ui/trace_params.ts";

/** The data of a refused inspection. */
export interface RefusedInspect {
  refused: FormRefusal;
}

/** The id of the refusal's notice. */
const NOTICE_ID = "inspect-refusal";

/**
 * The value a refusal asks to be added, when it asks for one: the root id
 * when none was given, the application when two share the root id.
 */
function missingField(
  refused: FormRefusal,
  params: URLSearchParams,
): "root_trace_id" | "application_id" | null {
  if (!params.has("root_trace_id")) return "root_trace_id";
  if (refused.code === "conflict" && !params.has("application_id")) {
    return "application_id";
  }
  return null;
}

/** The inspection page after its query was refused. */
export const RefusedInspectBody: FC<
  { data: RefusedInspect; view: PageView }
> = ({ data, view }) => {
  const params = cleanParams(view.url.searchParams);
  const refused = data.refused;
  // The parameters at fault that were sent: the view without them is offered.
  const sent = refused.fields.filter((name) => params.has(name));
  const missing = missingField(refused, params);
  const from = sent.includes("from") ? undefined : params.get("from");
  const root = params.get("root_trace_id");
  return (
    <>
      <div class="page-head">
        <p class="eyebrow">Traces · inspect</p>
        <h1>
          <Shown
            text={root && !sent.includes("root_trace_id")
              ? `Root ${root}`
              : "Inspect a root"}
          />
        </h1>
        <p class="lead">
          Nothing was read: the query of this page was refused.
        </p>
        <p class="meta">
          <a href={backToFinder(from ?? undefined, undefined)}>
            Back to the finder
          </a>
        </p>
      </div>
      <div class="notice notice--error" role="alert" id={NOTICE_ID}>
        <p class="notice__title">
          <Shown text={title(sent, missing)} />
        </p>
        <p>
          <Shown text={reasonOf(refused)} />
        </p>
        {sent.length > 0
          ? (
            <p>
              <a
                href={hrefOf(
                  INSPECT_PATH,
                  withParams(
                    params,
                    Object.fromEntries(sent.map((name) => [name, null])),
                  ),
                )}
              >
                <Shown text={`Open this view without ${joinAnd(sent)}`} />
              </a>
            </p>
          )
          : null}
      </div>
      {missing ? <AddValueForm name={missing} params={params} /> : null}
    </>
  );
};

function title(
  sent: readonly string[],
  missing: string | null,
): string {
  if (sent.length > 0) return `Check ${joinAnd(sent)}, then read again.`;
  if (missing) return `Add ${missing} below, then read again.`;
  return "Correct the query for the reason below, then read again.";
}

function reasonOf(refused: FormRefusal): string {
  return refused.message.replace(/^Invalid trace (page )?query: /, "");
}

const LABELS = {
  root_trace_id: "Root id",
  application_id: "Application id",
} as const;

/** One text input for the value the refusal asks for; the rest of the query rides along. */
const AddValueForm: FC<{
  name: keyof typeof LABELS;
  params: URLSearchParams;
}> = ({ name, params }) => {
  const id = `inspect-${name.replaceAll("_", "-")}`;
  const kept: Child[] = [];
  for (const [key, value] of params) {
    if (key !== name) {
      kept.push(<input type="hidden" name={key} value={value} />);
    }
  }
  return (
    <form class="finder-form" method="get" action={INSPECT_PATH}>
      {kept}
      <label for={id}>{LABELS[name]}</label>
      <div class="finder-form__row">
        <input
          type="text"
          id={id}
          name={name}
          autocomplete="off"
          spellcheck={false}
          required
          aria-invalid="true"
          aria-describedby={NOTICE_ID}
        />
        <button type="submit">Inspect</button>
      </div>
    </form>
  );
};
