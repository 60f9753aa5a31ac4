/**
 * Canary markers and how an adapter's answer is searched for one: as
 * written, folded (case, separators, look-alikes, other scripts' digits,
 * markup), and inside the encodings an application ships text in (base64,
 * hex and hex dumps, percent-encoding, string escapes); a large answer on
 * a worker thread, which an abort ends. The runner, the rules and the
 * report read markers through this surface only.
 *
 * @module
 */

export {
  describeRendering,
  findMarker,
  type FoldedText,
  foldForMatching,
  MARKER_ALPHABET,
  MARKER_PREFIX,
  MARKER_RANDOM_LENGTH,
  type MarkerForm,
  type MarkerMatch,
  newMarker,
  randomPartOf,
  RENDERING_TRAITS,
  type RenderingTrait,
} from "./find.ts";
export {
  type AnswerMatch,
  findMarkerInAnswer,
  WHOLE_ANSWER,
} from "./answer.ts";
export {
  AnswerSearcher,
  AnswerSearchError,
  INLINE_SEARCH_LIMIT,
  searchCost,
} from "./searcher.ts";
export { HOMOGLYPHS, STROKED_LETTERS } from "./_other_scripts.ts";
