/**
 * A search form whose query is refused stays on its own page. A browser
 * asking for the page gets it again, answered with the refusal's status:
 * the usual shell and navigation, a notice naming the fields to correct,
 * and the form filled with what was typed. The JSON twin and scripts keep
 * the error answer of `routes/_errors.ts`, word for word.
 *
 * The page's loader catches the refusal of its own query with
 * {@link formRefusal} and returns it as data, and the page's `status`
 * answers it with the refusal's status ({@link refusalStatus}).
 *
 * @module
 */

import type { Context, Hono } from "hono";
import type { FC } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ScopeError } from "../../lib/auth/mod.ts";
import { type ErrorCode, TraceError } from "../../lib/errors.ts";
import { errorResponse } from "../_errors.ts";
import { noteRefusal } from "../_request_log.ts";
import type { UiEnv } from "./context.ts";
import { Shown } from "./components/shown_text.tsx";
import { wantsHtml } from "./error_page.tsx";
import { definePage, type PageDeps, type PageSpec } from "./page.ts";

/** A refused query as its page shows it. */
export interface FormRefusal {
  /** The code the JSON answer carries (`invalid_request`, `refused`, `not_found`, `conflict` for an id two records share, `forbidden` for a tenant outside the account's scope). */
  code: string;
  /** The error's message, as the JSON answer carries it. */
  message: string;
  /** The query parameters (form fields) to correct, in form order; empty when none of the form's own. */
  fields: string[];
  /** The status the error path would answer it with. */
  status: ContentfulStatusCode;
}

/** The status of a page that may show a refusal: the refusal's, else 200. */
export function refusalStatus(
  refusal: FormRefusal | null | undefined,
): ContentfulStatusCode {
  return refusal?.status ?? 200;
}

/**
 * Codes a form's own input can earn: the client's to fix, on the same page
 * (`conflict`: an id the form names is shared by two records, such as a
 * root in two applications, and the form has the field that chooses one).
 */
const FORM_CODES: ReadonlySet<ErrorCode> = new Set([
  "config_invalid",
  "usage",
  "refused",
  "not_found",
  "conflict",
]);

/**
 * `error` as the page's refusal, when a browser asked for the page and the
 * error is the client's input (a bad value, a missing one, an unknown
 * record, an ambiguous id, a tenant outside the account's scope); otherwise `error` is thrown
 * again, to be answered as before. `fields` names the form fields at fault.
 */
export function formRefusal(
  c: Context<UiEnv>,
  error: unknown,
  fields: (message: string) => string[],
): FormRefusal {
  if (!isFormInput(error) || !wantsHtml(c)) throw error;
  // The status, code and words the JSON answer carries, from the one mapping.
  const { status, body: { error: { code, message } } } = errorResponse(error);
  noteRefusal(c.req.raw, code);
  return { code, message, fields: fields(message), status };
}

/**
 * Whether `error` refuses what the form's fields hold: a code a field can
 * earn, or a tenant typed outside the account's scope (403; the account's
 * other refusals come from the access rules before a page loads).
 */
function isFormInput(error: unknown): error is TraceError {
  return error instanceof ScopeError ||
    (error instanceof TraceError && FORM_CODES.has(error.code));
}

/**
 * The names among `names` that `message` mentions as words (`start_time`,
 * not `start_time_x`), leaving out a suggestion (`did you mean thread_id?`):
 * the refused parameters.
 */
export function namedFields(
  message: string,
  names: readonly string[],
): string[] {
  const said = message.replace(/;?\s*did you mean [^;]*/g, "");
  return names.filter((name) =>
    new RegExp(`(?<![\\w-])${name}(?![\\w-])`).test(said)
  );
}

/**
 * {@link definePage} for a page whose search a browser may spell in a form
 * the page accepts but does not read (e.g. a time without its zone): such a
 * page request is redirected to the query `canonicalQuery` gives (`null`:
 * load it as asked). The JSON twin is untouched.
 */
export function defineCanonicalQueryPage<T>(
  app: Hono<UiEnv>,
  deps: PageDeps,
  spec: PageSpec<T>,
  canonicalQuery: (params: URLSearchParams) => URLSearchParams | null,
): void {
  // A first handler of the page's own GET route, not middleware: the access
  // rule of `GET path` covers it, as it covers the page.
  app.get(spec.path, async (c, next) => {
    const canonical = wantsHtml(c)
      ? canonicalQuery(new URL(c.req.url).searchParams)
      : null;
    if (!canonical) return await next();
    c.header("Cache-Control", "no-store");
    return c.redirect(`${spec.path}?${canonical}`, 302);
  });
  definePage(app, deps, spec);
}

/** A form field the notice names: its input's id and label. */
export interface NamedField {
  id: string;
  label: string;
}

/**
 * The inputs among `inputs` (query parameter, input id, label; in form
 * order) whose parameter `refusal` names: the fields its notice links to.
 */
export function refusedInputs(
  refusal: FormRefusal,
  inputs: readonly (readonly [string, string, string])[],
): NamedField[] {
  return inputs.filter(([name]) => refusal.fields.includes(name))
    .map(([, id, label]) => ({ id, label }));
}

/**
 * The notice above a refused form: what was not done, the fields to check
 * (each a link to its input), the server's reason, and what to do. Inputs
 * it names point back at it with `aria-describedby` ({@link invalidField}).
 */
export const RefusalNotice: FC<{
  id: string;
  refusal: FormRefusal;
  /** What did not happen, e.g. "Nothing was searched". */
  outcome: string;
  /** What to do after correcting, e.g. "search again". */
  retry: string;
  fields: readonly NamedField[];
  /** The reason as the page words it (default: the error message). */
  reason?: string;
}> = ({ id, refusal, outcome, retry, fields, reason }) => (
  <div class="notice notice--error" role="alert" id={id}>
    <p class="notice__title">
      {fields.length === 0
        ? `${outcome} for the reason below; correct it, then ${retry}.`
        : (
          <>
            {`${outcome}: check `}
            {fields.map((field, i) => (
              <>
                {i === 0 ? "" : i === fields.length - 1 ? " and " : ", "}
                <a href={`#${field.id}`}>{field.label}</a>
              </>
            ))}
            {`, then ${retry}.`}
          </>
        )}
    </p>
    <p>
      <Shown text={reason ?? refusal.message} />
    </p>
  </div>
);

/** The attributes of an input the notice `noticeId` names (none when it is not named). */
export function invalidField(
  refusal: FormRefusal | null | undefined,
  name: string,
  noticeId: string,
): { "aria-invalid"?: "true"; "aria-describedby"?: string } {
  if (!refusal?.fields.includes(name)) return {};
  return { "aria-invalid": "true", "aria-describedby": noticeId };
}
