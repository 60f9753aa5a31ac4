/**
 * A labelled one-line text input of a search form: ids and filters, so no
 * autocomplete and no spell check.
 *
 * @module
 */

import type { FC } from "hono/jsx";

/** What a {@link TextField} shows. */
export interface TextFieldProps {
  /** The input's id (the label points at it). */
  id: string;
  /** The query parameter it sets. */
  name: string;
  label: string;
  value: string;
  /** A placeholder example. */
  hint?: string | undefined;
  /** A line under the input saying what it takes (e.g. the time format); the input is described by it. */
  note?: string | undefined;
  required?: boolean;
  /** The id of the notice that refused this field's value: the input is marked invalid and described by it. */
  refusedBy?: string | undefined;
}

/** One `.field`: a label above its text input, and its note below. */
export const TextField: FC<TextFieldProps> = (props) => {
  const noteId = props.note ? `${props.id}-note` : undefined;
  const describedBy = [props.refusedBy, noteId].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input
        type="text"
        id={props.id}
        name={props.name}
        value={props.value}
        autocomplete="off"
        spellcheck={false}
        placeholder={props.hint}
        required={props.required}
        aria-invalid={props.refusedBy ? "true" : undefined}
        aria-describedby={describedBy || undefined}
      />
      {props.note ? <p class="field__note" id={noteId}>{props.note}</p> : null}
    </div>
  );
};
