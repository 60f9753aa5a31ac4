/** What `searcher.ts` and its search thread (`_search_worker.ts`) send each other. */

import type { AnswerMatch } from "./answer.ts";

/** One answer to search for one marker. */
export interface SearchRequest {
  id: number;
  answer: Readonly<Record<string, unknown>>;
  marker: string;
}

/** The search's result, or why there is none. */
export type SearchReply =
  | { id: number; ok: true; match: AnswerMatch | null }
  | { id: number; ok: false; message: string };
