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
  required?: boolean;
}

/** One `.field`: a label above its text input. */
export const TextField: FC<TextFieldProps> = (props) => (
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
    />
  </div>
);
