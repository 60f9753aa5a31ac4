/// <reference lib="deno.worker" />
/**
 * The search thread of `searcher.ts`: searches one answer per message with
 * {@link findMarkerInAnswer}, so that an answer adversarially expensive to
 * fold and decode keeps this thread busy, not the one that answers signals
 * and requests. Private to `marker/`.
 *
 * @module
 */

import { errorMessage } from "../../errors.ts";
import { findMarkerInAnswer } from "./answer.ts";
import type { SearchReply, SearchRequest } from "./_search_messages.ts";

self.onmessage = (event: MessageEvent<SearchRequest>) => {
  const { id, answer, marker } = event.data;
  let reply: SearchReply;
  try {
    reply = { id, ok: true, match: findMarkerInAnswer(answer, marker) };
  } catch (error) {
    // Only the first line: the caller words it as an answer not read.
    reply = { id, ok: false, message: errorMessage(error) };
  }
  self.postMessage(reply);
};
