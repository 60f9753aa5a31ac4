/**
 * An event's mapped producer fields on one line, for result rows and
 * waterfall rows: tool, model, tokens (input / output), user and thread.
 * Fields the event does not have are left out; user and thread may be left
 * out where the surrounding card or page already names the one they share.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { type MappedFields, tokensText, userText } from "../event_fields.ts";
import { Fact } from "./trace_bits.tsx";
import { ShownCode } from "./shown_text.tsx";

/** Props of {@link EventFields}. */
export interface EventFieldsProps {
  fields: MappedFields;
  /** Leave the user out (the card or page names it once). */
  hideUser?: boolean;
  /** Leave the thread out (the card or page names it once). */
  hideThread?: boolean;
  /** Leave the tool out (the row shows it already). */
  hideTool?: boolean;
}

/** The fields as compact labelled facts, or nothing when there are none. */
export const EventFields: FC<EventFieldsProps> = (
  { fields, hideUser, hideThread, hideTool },
) => {
  const tokens = tokensText(fields);
  const tool = !hideTool && fields.tool !== null;
  const thread = !hideThread && fields.thread_id !== null;
  if (
    !tool && fields.model === null && tokens === null && hideUser && !thread
  ) {
    return null;
  }
  return (
    <span class="event-fields">
      {tool
        ? (
          <Fact label="tool">
            <ShownCode text={fields.tool!} />
          </Fact>
        )
        : null}
      {fields.model !== null
        ? (
          <Fact label="model">
            <ShownCode text={fields.model} />
          </Fact>
        )
        : null}
      {tokens !== null ? <Fact label="tokens">{tokens}</Fact> : null}
      {hideUser ? null : (
        <Fact label="user">
          {fields.user_id === null
            ? userText(null)
            : <ShownCode text={fields.user_id} />}
        </Fact>
      )}
      {thread
        ? (
          <Fact label="thread">
            <ShownCode text={fields.thread_id!} />
          </Fact>
        )
        : null}
    </span>
  );
};
