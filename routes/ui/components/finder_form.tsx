/**
 * The finder's search form: one box for an opaque id (any kind), and the
 * filters behind a disclosure that opens when one is set. A plain GET form,
 * so a search is a URL; the selected event rides along as hidden fields.
 *
 * @module
 */

import type { Child, FC } from "hono/jsx";
import { EVENT_STATUSES, STORES } from "../../../lib/obs/mod.ts";
import { type FormRefusal, invalidField } from "../form_refusal.tsx";
import { FIND_PATH, hrefOf } from "../trace_params.ts";
import { TextField } from "./text_field.tsx";

/** The id of the notice above a refused search; the inputs it names point at it. */
export const FINDER_NOTICE = "finder-error";

/** The fields the form shows, in its order: query parameter, label. */
export const FINDER_FIELDS: readonly (readonly [string, string])[] = [
  ["q", "Exact id"],
  ["application_id", "Application"],
  ["user_id", "User"],
  ["anonymous", "Anonymous users only"],
  ["agent_id", "Agent"],
  ["memory_id", "Memory"],
  ["thread_id", "Thread"],
  ["kind", "Kind"],
  ["status", "Status"],
  ["store", "Store"],
  ["start_time", "From (inclusive)"],
  ["end_time", "Until (exclusive)"],
];

const FINDER_LABELS: ReadonlyMap<string, string> = new Map(FINDER_FIELDS);

/** The label of the finder's field `name`, as the form and its refusal notice show it. */
export function finderLabel(name: string): string {
  return FINDER_LABELS.get(name) ?? name;
}

/** The id of the input of the finder's field `name`. */
export function finderInputId(name: string): string {
  return `f-${name}`;
}

/** What a time filter takes, under its input (the placeholder shows the full form). */
const timeNote = (example: string) => `In UTC, e.g. ${example}`;

/** Whether any filter beyond `q` is set, shown by the form or kept by it. */
export function hasFilters(params: URLSearchParams): boolean {
  return [...FINDER_FIELDS.map(([name]) => name), ...KEPT].some((key) =>
    key !== "q" && params.has(key)
  );
}

/** A filter field named by its query parameter, labelled as {@link FINDER_FIELDS} has it. */
const Field: FC<
  {
    name: string;
    params: URLSearchParams;
    hint?: string;
    note?: string;
    refusal: FormRefusal | null;
  }
> = ({ name, params, hint, note, refusal }) => (
  <TextField
    id={finderInputId(name)}
    name={name}
    label={finderLabel(name)}
    value={params.getAll(name).join(",")}
    hint={hint}
    note={note}
    refusedBy={invalidField(refusal, name, FINDER_NOTICE)["aria-describedby"]}
  />
);

/** Filters the form does not show, kept as they were. */
const KEPT = [
  "turn_id",
  "run_id",
  "root_trace_id",
  "tool",
  "success",
  "resource",
  "resource_type",
];

/**
 * The search form, filled from the current query string; after a refused
 * search, the fields the notice names are marked invalid and described by it.
 */
export const FinderForm: FC<
  { params: URLSearchParams; refusal?: FormRefusal | null }
> = ({ params, refusal = null }) => {
  const status = params.getAll("status").join(",");
  const store = params.getAll("store").join(",");
  const invalid = (name: string) => invalidField(refusal, name, FINDER_NOTICE);
  return (
    <form
      class="finder-form"
      method="get"
      action={FIND_PATH}
      role="search"
      data-drop-empty=""
    >
      <div class="finder-form__main">
        <label for={finderInputId("q")}>
          Exact id: event, root, turn, run, thread, memory or resource
        </label>
        <div class="finder-form__row">
          <input
            type="search"
            id={finderInputId("q")}
            name="q"
            value={params.get("q") ?? ""}
            autocomplete="off"
            spellcheck={false}
            placeholder="e.g. a run id, a thread id or a cache entry id"
            {...invalid("q")}
          />
          <button type="submit" class="button--primary">Find</button>
        </div>
      </div>
      <details class="finder-form__filters" open={hasFilters(params)}>
        <summary>Filters</summary>
        <div class="field-grid">
          <Field
            name="application_id"
            params={params}
            refusal={refusal}
          />
          <Field
            name="user_id"
            params={params}
            refusal={refusal}
          />
          <div class="field field--check">
            <label>
              <input
                type="checkbox"
                id={finderInputId("anonymous")}
                name="anonymous"
                value="true"
                checked={params.get("anonymous") === "true"}
                {...invalid("anonymous")}
              />{" "}
              {finderLabel("anonymous")}
            </label>
          </div>
          <Field
            name="agent_id"
            params={params}
            refusal={refusal}
            hint="one agent id, exactly"
          />
          <Field
            name="memory_id"
            params={params}
            refusal={refusal}
          />
          <Field
            name="thread_id"
            params={params}
            refusal={refusal}
          />
          <Field
            name="kind"
            params={params}
            refusal={refusal}
            hint="selection,memory_delete"
          />
          <div class="field">
            <label for={finderInputId("status")}>{finderLabel("status")}</label>
            <select
              id={finderInputId("status")}
              name="status"
              {...invalid("status")}
            >
              <option value="" selected={status === ""}>any</option>
              {EVENT_STATUSES.map((s) => (
                <option value={s} selected={status === s}>{s}</option>
              ))}
              <TypedOption value={status} listed={EVENT_STATUSES} />
            </select>
          </div>
          <div class="field">
            <label for={finderInputId("store")}>{finderLabel("store")}</label>
            <select
              id={finderInputId("store")}
              name="store"
              {...invalid("store")}
            >
              <option value="" selected={store === ""}>any</option>
              {STORES.map((s) => (
                <option value={s} selected={store === s}>{s}</option>
              ))}
              <TypedOption value={store} listed={STORES} />
            </select>
          </div>
          <Field
            name="start_time"
            params={params}
            refusal={refusal}
            hint="2026-11-29T10:00:00Z"
            note={timeNote("2026-11-29 10:00")}
          />
          <Field
            name="end_time"
            params={params}
            refusal={refusal}
            hint="2026-11-29T11:00:00Z"
            note={timeNote("2026-11-29 11:00")}
          />
        </div>
      </details>
      {hiddenFields(params)}
      <p class="meta">
        <a href={clearHref(params)}>Clear the search</a>
        {params.has("selected") ? " (the selected event stays selected)" : ""}
      </p>
    </form>
  );
};

/**
 * The value in the query that no option of a select names, as its own
 * selected option: a refused value or a list (`ok,error`) shows as typed
 * and is sent again as typed, never as "any".
 */
const TypedOption: FC<{ value: string; listed: readonly string[] }> = (
  { value, listed },
) =>
  value === "" || listed.includes(value)
    ? null
    : <option value={value} selected>{value}</option>;

/** The parameters the form carries as hidden fields: filters it does not show, and the selected event. */
export const FINDER_HIDDEN: readonly string[] = [
  ...KEPT,
  "selected",
  "selected_application_id",
];

/** Hidden fields keeping what the form does not show (a loop: precompiled JSX would print a `key`). */
function hiddenFields(params: URLSearchParams): Child[] {
  const fields: Child[] = [];
  for (const key of FINDER_HIDDEN) {
    for (const value of params.getAll(key)) {
      fields.push(<input type="hidden" name={key} value={value} />);
    }
  }
  return fields;
}

/** The finder without a search, keeping only the selected event. */
function clearHref(params: URLSearchParams): string {
  const kept = new URLSearchParams();
  for (const key of ["selected", "selected_application_id"]) {
    const value = params.get(key);
    if (value !== null) kept.set(key, value);
  }
  return hrefOf(FIND_PATH, kept);
}
