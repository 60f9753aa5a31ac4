/**
 * Searching answers without holding up the thread that answers signals and
 * requests. Folding and decoding every string of an answer costs time in
 * proportion to its text, and an adapter may answer with a megabyte built
 * to be expensive: about 3.5 s per search. On the main thread that stalls
 * a Ctrl-C (its handler cannot run), a second Ctrl-C and every request a
 * server answers meanwhile. So a large answer is searched on a worker
 * thread, which an abort ends at once; a small one, almost every answer,
 * is searched right here as before, which keeps runs on virtual time (the
 * reference suite) exactly as they were.
 *
 * @module
 */

import { errorMessage } from "../../errors.ts";
import { type AnswerMatch, findMarkerInAnswer } from "./answer.ts";
import type { SearchReply, SearchRequest } from "./_search_messages.ts";

/**
 * Largest answer searched on the calling thread, in {@link searchCost}
 * units (about characters). Answers are typically a few hundred bytes; the
 * most expensive text measured costs about 3 ms per KiB to search, so an
 * answer at this limit holds the thread for some 50 ms at worst, while a
 * worker's start and the copy of the answer to it would cost more than
 * the search of a typical answer.
 */
export const INLINE_SEARCH_LIMIT = 16 * 1024;

/**
 * What each string, key and container counts beyond its length: searching
 * one costs a fixed price whatever its length (16,384 one-character strings
 * took about as long as 50 KiB of text), and each level of nesting is a
 * call of the search, so an answer of many tiny strings, or nested
 * thousands deep in a few kilobytes, is large too.
 */
const STRING_COST = 16;

/** Why a search has no result: called off (`aborted`) or the search thread failed. */
export class AnswerSearchError extends Error {
  readonly reason: "aborted" | "failed";

  constructor(reason: "aborted" | "failed", message: string) {
    super(message);
    this.name = "AnswerSearchError";
    this.reason = reason;
  }
}

/**
 * What searching `answer` costs, in units of about a character: each key
 * and string its length plus {@link STRING_COST}, each array and object
 * {@link STRING_COST}, every other value 1.
 * Stops counting once past `limit`, so a huge answer costs little to size.
 */
export function searchCost(
  answer: Readonly<Record<string, unknown>>,
  limit: number,
): number {
  let cost = 0;
  // A stack, not recursion: an answer nested deeply must not overflow it here.
  const stack: unknown[] = [answer];
  while (stack.length > 0 && cost <= limit) {
    const value = stack.pop();
    if (typeof value === "string") {
      cost += value.length + STRING_COST;
    } else if (Array.isArray(value)) {
      cost += STRING_COST;
      stack.push(...value.slice(0, limit));
    } else if (value !== null && typeof value === "object") {
      cost += STRING_COST;
      for (const [key, item] of Object.entries(value)) {
        cost += key.length + STRING_COST;
        if (cost > limit) break;
        stack.push(item);
      }
    } else {
      cost += 1;
    }
  }
  return cost;
}

interface Pending {
  request: SearchRequest;
  resolve: (match: AnswerMatch | null) => void;
  reject: (error: AnswerSearchError) => void;
}

/**
 * Searches answers for markers, a large one on a worker thread started on
 * first need and kept for the next. One per run: {@link close} ends the
 * worker, so nothing outlives the run.
 */
export class AnswerSearcher {
  #worker: Worker | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /**
   * Looks for `marker` in `answer` as `findMarkerInAnswer` does. Aborting
   * `signal` ends a search on the worker at once and rejects with an
   * {@link AnswerSearchError}; a small answer is searched before this
   * returns, so nothing can cut it short.
   */
  async find(
    answer: Readonly<Record<string, unknown>>,
    marker: string,
    signal?: AbortSignal,
  ): Promise<AnswerMatch | null> {
    if (searchCost(answer, INLINE_SEARCH_LIMIT) <= INLINE_SEARCH_LIMIT) {
      try {
        return findMarkerInAnswer(answer, marker);
      } catch (error) {
        // A search that cannot finish (a stack it overflows) leaves the answer unread.
        throw new AnswerSearchError("failed", errorText(error));
      }
    }
    if (signal?.aborted) throw abortedError();
    const request = { id: this.#nextId++, answer, marker };
    return await new Promise<AnswerMatch | null>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(request.id)) return;
        // Terminating is the only way to stop a search under way.
        this.#restart();
        reject(abortedError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(request.id, {
        request,
        resolve: (match) => {
          done();
          resolve(match);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      try {
        this.#thread().postMessage(request);
      } catch (error) {
        // An answer the thread cannot be handed (nested too deep to copy) is not read.
        this.#pending.delete(request.id);
        done();
        reject(new AnswerSearchError("failed", errorText(error)));
      }
    });
  }

  /** Ends the worker, if one runs; a search still under way is rejected as aborted. */
  close(): void {
    this.#stop();
    this.#rejectAll(abortedError());
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(
      new URL("./_search_worker.ts", import.meta.url),
      { type: "module" },
    );
    worker.onmessage = (event: MessageEvent<SearchReply>) => {
      const reply = event.data;
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (reply.ok) pending.resolve(reply.match);
      else pending.reject(new AnswerSearchError("failed", reply.message));
    };
    worker.onerror = (event) => {
      // Handled here: a search thread that fails must not take the run with it.
      event.preventDefault();
      this.#stop();
      this.#rejectAll(
        new AnswerSearchError(
          "failed",
          `the search thread failed: ${event.message}`,
        ),
      );
    };
    this.#worker = worker;
    return worker;
  }

  /** A fresh worker for the searches still waiting behind an aborted one. */
  #restart(): void {
    this.#stop();
    for (const { request } of this.#pending.values()) {
      this.#thread().postMessage(request);
    }
  }

  #stop(): void {
    this.#worker?.terminate();
    this.#worker = null;
  }

  #rejectAll(error: AnswerSearchError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { reject } of pending) reject(error);
  }
}

/** The first line of what went wrong, for the record of an answer not read. */
function errorText(error: unknown): string {
  return `the search could not finish: ${errorMessage(error)}`;
}

function abortedError(): AnswerSearchError {
  return new AnswerSearchError("aborted", "the search was called off");
}
