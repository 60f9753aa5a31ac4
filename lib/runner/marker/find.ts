/**
 * Canary markers and how the runner recognises them in an answer.
 *
 * A marker is `trace_canary_` followed by a random part of
 * {@link MARKER_RANDOM_LENGTH} characters from a base32 alphabet without
 * look-alike letters (no `i`, `l`, `o`, `u`). Applications render and reword
 * what they answer (Markdown escapes, HTML entities, another case or
 * separator, full-width or other compatibility forms, wrapped lines, markup
 * tags and comments, Cyrillic, Greek or small-capital look-alike letters,
 * accented, stroked or enclosed letters, Unicode tag characters, another
 * script's digits) and
 * ship stored text encoded (base64, hex, hex dumps, percent-encoding, string
 * escapes), so the marker counts as seen when its random part appears in the
 * answer after {@link foldForMatching}: character references decoded, NFKC,
 * a letter's accents or stroke taken off, Cyrillic, Greek and small-capital
 * look-alikes and enclosed letters read as Latin letters, tag
 * characters as the ASCII they stand for and other scripts' digits as ASCII
 * ones, lower case, `o` read as `0` and `i`/`l` as `1`, and everything but
 * letters and digits dropped; or in the same answer with its markup tags
 * removed; or in a text an encoded part of the answer decodes to. Reading
 * look-alikes, marked letters and digits maps one character to one, so no folded text grows
 * longer for it, and a fixed text of n folded characters contains a given
 * random part by chance with probability at most n · 32^-26 (n · 2^-130),
 * which docs/report.md works out for every text searched.
 *
 * @module
 */

import { characterEntities } from "character-entities";
import { characterEntitiesLegacy } from "character-entities-legacy";
import { joinAnd } from "../../words.ts";
import { decodedTexts } from "./_encodings.ts";
import {
  enclosedLetter,
  HOMOGLYPHS,
  latinOf,
  STROKED_LETTERS,
  tagCharacterText,
} from "./_other_scripts.ts";

/** Every marker starts with this. */
export const MARKER_PREFIX = "trace_canary_";

/** Alphabet of a marker's random part: digits and lower-case letters without `i`, `l`, `o`, `u`. */
export const MARKER_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** Characters in a marker's random part (130 random bits). */
export const MARKER_RANDOM_LENGTH = 26;

/** How a marker appeared in an answer: byte for byte, or rendered or reworded. */
export type MarkerForm = "exact" | "rendered";

/** What differed in a rendered marker, in report order. Content-free: kinds only, never text. */
export const RENDERING_TRAITS = [
  "case",
  "separators",
  "markdown_escapes",
  "html_entities",
  "full_width",
  "compatibility_forms",
  "line_breaks",
  "invisible_characters",
  "tag_characters",
  "look_alikes",
  "homoglyphs",
  "enclosed_letters",
  "diacritics",
  "digit_scripts",
  "markup_tags",
  "split_items",
  "base64",
  "hex",
  "percent_encoding",
  "string_escapes",
] as const;

/** One of {@link RENDERING_TRAITS}. */
export type RenderingTrait = typeof RENDERING_TRAITS[number];

/** A marker found in an answer. */
export interface MarkerMatch {
  form: MarkerForm;
  /** Empty for an exact match. */
  rendering: RenderingTrait[];
}

/** A fresh random marker. */
export function newMarker(): string {
  // 256 is a multiple of 32, so the low five bits of a random byte are uniform.
  const bytes = crypto.getRandomValues(new Uint8Array(MARKER_RANDOM_LENGTH));
  return MARKER_PREFIX +
    Array.from(bytes, (byte) => MARKER_ALPHABET[byte & 31]).join("");
}

/**
 * Looks for `marker` in `answer`: `exact` when the answer contains it byte for
 * byte, `rendered` when only its folded random part appears (in the answer,
 * in the answer without its markup tags, or in a text an encoded part of it
 * decodes to), `null` when none does.
 */
export function findMarker(answer: string, marker: string): MarkerMatch | null {
  return findInText(answer, marker) ?? findInDecodedText(answer, marker);
}

/** The marker in `answer` as written: byte for byte, folded, or folded without tags. */
function findInText(answer: string, marker: string): MarkerMatch | null {
  if (answer.includes(marker)) return { form: "exact", rendering: [] };
  const random = foldedRandomPart(marker);
  if (random.length === 0) return null;
  // Text without references (most answers and decodings) folds code point
  // by code point, without a unit each; only tags still need units.
  const plain = !answer.includes("&");
  if (plain) {
    const found = findFoldedPlain(answer, random);
    if (found || !answer.includes("<")) return found;
  }
  const decoded = decodeUnits(answer);
  if (!plain) {
    const found = findFolded(answer, decoded, random, false);
    if (found) return found;
  }
  // Only an answer with a tag in it can spell the marker once tags are gone.
  if (answer.includes("<") || answer.includes("&")) {
    const untagged = withoutTags(decoded);
    if (untagged.length < decoded.length) {
      const inMarkup = findFolded(answer, untagged, random, true);
      if (inMarkup) return inMarkup;
    }
  }
  return null;
}

/**
 * {@link findFolded} for text without character references, where
 * {@link decodeUnits} would return one unit per code point: the folded text
 * is built as bytes with the answer span of each, and the span of a match is
 * read back only when there is one.
 */
function findFoldedPlain(answer: string, random: string): MarkerMatch | null {
  const folded = foldPlain(answer);
  const match = foldedMatch(folded.text, random);
  if (!match) return null;
  const span = answer.slice(
    folded.starts[match.first]!,
    folded.ends[match.last]!,
  );
  return {
    form: "rendered",
    rendering: renderingTraits(span, {
      withPrefix: match.withPrefix,
      untagged: false,
    }),
  };
}

/** Where `random` first sits in a folded text: its first folded character (the prefix's, when the prefix is just before it) and its last. */
function foldedMatch(
  folded: string,
  random: string,
): { first: number; last: number; withPrefix: boolean } | null {
  const at = folded.indexOf(random);
  if (at < 0) return null;
  const prefix = foldedPrefix();
  const withPrefix = at >= prefix.length &&
    folded.slice(at - prefix.length, at) === prefix;
  return {
    first: withPrefix ? at - prefix.length : at,
    last: at + random.length - 1,
    withPrefix,
  };
}

/** A folded text as {@link foldUnits} makes it, with each character's answer span in typed arrays. */
interface PlainFold {
  text: string;
  starts: Int32Array;
  ends: Int32Array;
}

/**
 * {@link foldUnits} over the code points of `text`, without an object per
 * character: ASCII by {@link ASCII_FOLD_CODES}, anything else by NFKC and
 * {@link lowerCase}, as there.
 */
function foldPlain(text: string): PlainFold {
  let bytes = new Uint8Array(text.length + 16);
  let starts = new Int32Array(bytes.length);
  let ends = new Int32Array(bytes.length);
  let length = 0;
  const push = (code: number, start: number, end: number) => {
    if (length === bytes.length) {
      // NFKC can make several characters of one (`ﬃ`, `㎒`).
      bytes = grown(bytes, new Uint8Array(bytes.length * 2));
      starts = grown(starts, new Int32Array(bytes.length));
      ends = grown(ends, new Int32Array(bytes.length));
    }
    bytes[length] = code;
    starts[length] = start;
    ends[length++] = end;
  };
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      const fold = ASCII_FOLD_CODES[code]!;
      if (fold !== 0) push(fold, i, i + 1);
      i++;
      continue;
    }
    const width = text.codePointAt(i)! > 0xffff ? 2 : 1;
    for (const ch of text.slice(i, i + width).normalize("NFKC")) {
      const latin = foldedLetter(ch);
      const fold = latin === "" ? 0 : ASCII_FOLD_CODES[latin.charCodeAt(0)]!;
      if (fold !== 0) push(fold, i, i + width);
    }
    i += width;
  }
  return {
    text: ASCII_TEXT.decode(bytes.subarray(0, length)),
    starts,
    ends,
  };
}

function grown<T extends Uint8Array | Int32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

const ASCII_TEXT = new TextDecoder();

/** The folded random part in `units` (decoded from `answer`), with how its span was rendered. */
function findFolded(
  answer: string,
  units: Unit[],
  random: string,
  untagged: boolean,
): MarkerMatch | null {
  const folded = foldUnits(units);
  const match = foldedMatch(folded.folded, random);
  if (!match) return null;
  const { withPrefix } = match;
  const span = answer.slice(
    folded.units[match.first]!.start,
    folded.units[match.last]!.end,
  );
  return {
    form: "rendered",
    rendering: renderingTraits(span, { withPrefix, untagged }),
  };
}

/**
 * The marker in a text an encoded part of `answer` decodes to (base64, hex,
 * percent-encoding, string escapes), the way an API ships a document's bytes
 * or a URL or literal carries text. Only a decoding that could hold a random
 * part is searched, once and not decoded again: a decoding is one more fixed
 * text of no more characters than the part it came from, so the false-match
 * bound holds for it as for the answer.
 */
function findInDecodedText(
  answer: string,
  marker: string,
): MarkerMatch | null {
  for (const decoded of decodedTexts(answer, MARKER_RANDOM_LENGTH)) {
    const found = findInText(decoded.text, marker);
    if (found) {
      return {
        form: "rendered",
        rendering: RENDERING_TRAITS.filter((trait) =>
          trait === decoded.encoding || found.rendering.includes(trait)
        ),
      };
    }
  }
  return null;
}

/**
 * Folded marker parts, kept between calls: every string of an answer is
 * searched for the same one or two markers, and folding them each time
 * would cost more than an empty string's search.
 */
const folds: { prefix?: string; marker?: string; random?: string } = {};

function foldedPrefix(): string {
  return folds.prefix ??= foldForMatching(MARKER_PREFIX).folded;
}

function foldedRandomPart(marker: string): string {
  if (folds.marker !== marker || folds.random === undefined) {
    folds.marker = marker;
    folds.random = foldForMatching(randomPartOf(marker)).folded;
  }
  return folds.random;
}

/** The random part of a marker (the whole string when it lacks the prefix). */
export function randomPartOf(marker: string): string {
  return marker.startsWith(MARKER_PREFIX)
    ? marker.slice(MARKER_PREFIX.length)
    : marker;
}

/** One folded character and the span of the answer it came from. */
interface Unit {
  ch: string;
  start: number;
  end: number;
}

/** A folded text with, per folded character, where it came from. */
export interface FoldedText {
  folded: string;
  units: Unit[];
}

/**
 * Folds `text` for marker matching: `&amp;` unwrapped (up to three times),
 * numeric character references decoded, named ones decoded (HTML's list) or
 * dropped, NFKC, a letter written with accents or a stroke read as its base
 * letter, Cyrillic, Greek and small-capital look-alikes and enclosed letters
 * read as the Latin letters they pass for, Unicode tag characters as the ASCII they
 * stand for and other scripts' decimal digits as ASCII digits, lower case, look-alikes
 * (`o`, `i`, `l`) read as the digits they resemble, and everything but
 * `[0-9a-z]` dropped.
 */
export function foldForMatching(text: string): FoldedText {
  return foldUnits(decodeUnits(text));
}

function foldUnits(units: Unit[]): FoldedText {
  const folded: Unit[] = [];
  for (const unit of units) {
    const code = unit.ch.length === 1 ? unit.ch.charCodeAt(0) : 0x80;
    if (code < 0x80) {
      // Most of an answer is ASCII, which NFKC leaves as it is: one lookup.
      const ch = ASCII_FOLD[code]!;
      if (ch !== "") folded.push({ ch, start: unit.start, end: unit.end });
      continue;
    }
    for (const ch of unit.ch.normalize("NFKC")) {
      // Read as Latin, a character is one ASCII letter or digit, or nothing.
      const latin = foldedLetter(ch);
      const fold = latin === "" ? "" : ASCII_FOLD[latin.charCodeAt(0)]!;
      if (fold !== "") {
        folded.push({ ch: fold, start: unit.start, end: unit.end });
      }
    }
  }
  return { folded: folded.map((u) => u.ch).join(""), units: folded };
}

/**
 * What the fold reads one character after NFKC as: itself or its Latin
 * look-alike in lower case, else the letter under its marks or stroke, else
 * `""`. Both folds read characters through this, so they agree.
 */
function foldedLetter(ch: string): string {
  return lowerCase(ch) || unmarkedLowerCase(ch);
}

/**
 * `ch` read as Latin, in lower case. A character outside ASCII that
 * {@link latinOf} leaves as it is folds to nothing, unless its lower case
 * holds a Latin letter: only `İ` (U+0130, `i̇`) does, NFKC having already
 * made the Kelvin sign a `K`.
 */
function lowerCase(ch: string): string {
  if (ch < "\u0080") return ch.toLowerCase();
  const latin = latinOf(ch);
  if (latin !== ch) return latin.toLowerCase();
  return ch === "\u0130" ? "i" : "";
}

/**
 * `ch`, a letter NFKC writes with marks (`á`, `ṩ`, `ǘ`) or a stroke (`ø`,
 * `đ`), read as its base letter in lower case, as a reader reads it; `""`
 * for anything else. A marker whose letters carry accents is still the
 * marker: NFKC composes a letter and its accent into one character, which
 * the fold would drop. Kept per character, as {@link latinOf}'s digits are.
 */
function unmarkedLowerCase(ch: string): string {
  if (!mayCarryMarks(ch)) return "";
  let known = unmarked.get(ch);
  if (known === undefined) {
    const base = unmarkedBase(ch);
    known = base === "" ? "" : lowerCase(base);
    if (unmarked.size < MAX_UNMARKED) unmarked.set(ch, known);
  }
  return known;
}

const unmarked = new Map<string, string>();
const MAX_UNMARKED = 8192;

/**
 * Whether `ch` lies in a block of Latin, Greek or Cyrillic letters, where
 * every letter with a mark or a stroke that could stand for a marker's
 * letter is: the rest of Unicode (CJK, Hangul, symbols) is passed over
 * without a normalisation, so an answer in another script costs no more.
 */
function mayCarryMarks(ch: string): boolean {
  const point = ch.codePointAt(0)!;
  return (point >= 0xc0 && point <= 0x52f) ||
    (point >= 0x1e00 && point <= 0x1fff) ||
    (point >= 0x2c60 && point <= 0x2c7f) ||
    (point >= 0xa720 && point <= 0xa7ff) ||
    (point >= 0xab30 && point <= 0xab6f);
}

/** The character under `ch`'s marks or stroke (`Á` → `A`), or `""` when it has none. */
function unmarkedBase(ch: string): string {
  const stroked = STROKED_LETTERS[ch];
  if (stroked !== undefined) return stroked;
  const [base, ...marks] = ch.normalize("NFD");
  if (base === undefined || marks.length === 0) return "";
  return marks.every((mark) => MARK.test(mark)) ? base : "";
}

const MARK = /^\p{M}$/u;

/** Variation selectors: marks that choose a glyph, render as nothing, and put no accent on a letter. */
const VARIATION_SELECTOR = /^[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]$/u;

const LOOK_ALIKES: Readonly<Record<string, string>> = {
  o: "0",
  i: "1",
  l: "1",
};

/** What each ASCII character folds to (`""`: dropped): lower case, look-alikes as digits, only `[0-9a-z]` kept. */
const ASCII_FOLD: readonly string[] = Array.from(
  { length: 0x80 },
  (_, code) => {
    const lower = String.fromCharCode(code).toLowerCase();
    const digit = LOOK_ALIKES[lower] ?? lower;
    return /^[0-9a-z]$/.test(digit) ? digit : "";
  },
);

/** {@link ASCII_FOLD} as character codes, 0 for a character dropped. */
const ASCII_FOLD_CODES: Uint8Array = Uint8Array.from(
  ASCII_FOLD,
  (ch) => ch === "" ? 0 : ch.charCodeAt(0),
);

/** `text` with character references decoded (`&amp;` unwrapped first, up to three times). */
function decodeUnits(text: string): Unit[] {
  let units = codePoints(text);
  // Without an `&` there is nothing to decode: most answers skip both passes.
  if (!text.includes("&")) return units;
  if (text.includes("&amp;")) {
    for (let round = 0; round < 3; round++) units = unwrapAmp(units);
  }
  return decodeReferences(units);
}

/** Longest tag removed; a longer `<…>` is left as text. */
const MAX_TAG_LENGTH = 256;

/**
 * `units` without markup tags: a web view breaks a long token with `<wbr>`,
 * search highlighting wraps part of it in `<mark>`, and a tag's letters would
 * otherwise split the marker. Decoded units, so an escaped `&lt;wbr&gt;` is
 * a tag too.
 */
function withoutTags(units: Unit[]): Unit[] {
  // The units' text once, each `<` matched where it stands: cutting
  // MAX_TAG_LENGTH units out at every `<` cost that much per `<`.
  const text = units.map((unit) => unit.ch).join("");
  const offsets = new Int32Array(units.length + 1);
  units.forEach((unit, i) => offsets[i + 1] = offsets[i]! + unit.ch.length);
  const out: Unit[] = [];
  for (let i = 0; i < units.length; i++) {
    const last = units[i]!.ch === "<" ? tagEnd(text, offsets, i) : -1;
    if (last >= 0) i = last;
    else out.push(units[i]!);
  }
  return out;
}

/** The index of the last unit of a tag starting at unit `i` (at most MAX_TAG_LENGTH units), or -1. */
function tagEnd(text: string, offsets: Int32Array, i: number): number {
  const limit = offsets[Math.min(i + MAX_TAG_LENGTH, offsets.length - 1)]!;
  const length = tagLength(text, offsets[i]!, limit);
  if (length < 0) return -1;
  const end = offsets[i]! + length;
  let last = i;
  while (offsets[last + 1]! < end) last++;
  return last;
}

/**
 * The length of the element tag at `at`, ending before `limit`, or -1: `<`,
 * an optional `/`, a name (a letter, then letters, digits and `-`), then
 * `>`, `/>`, or white space and attributes up to the first `>` outside a
 * quoted value. Opening, closing or self-closing (`<wbr>`, `</mark>`,
 * `<span class="hl">`, `<br/>`). The attributes are read as a browser reads
 * them: a value quoted right after an attribute's `=` may hold `>` and `<`
 * (`<span title="a>b">` is one tag: ending it at the first `>` would leave
 * `b">` as text between the marker's characters), while a quote anywhere
 * else (`<b ="x>`, `<b c=d"x>`) is a character of a name or an unquoted
 * value and quotes nothing. A `<` outside a quoted value means this `<`
 * opens no tag. Scanned by hand: a pattern with quoted alternatives
 * backtracks on markup that never closes.
 */
function tagLength(text: string, at: number, limit: number): number {
  if (text.startsWith("<!--", at)) return commentLength(text, at, limit);
  let k = at + 1;
  if (text.charCodeAt(k) === SLASH) k++;
  if (!isLetter(text.charCodeAt(k))) return -1;
  while (k < limit && isNameCharacter(text.charCodeAt(k))) k++;
  if (k >= limit) return -1;
  const after = text.charCodeAt(k);
  if (after === GREATER) return k + 1 - at;
  if (after === SLASH && text.charCodeAt(k + 1) === GREATER && k + 1 < limit) {
    return k + 2 - at;
  }
  if (!isSpace(after)) return -1;
  let state: AttributeState = "before_name";
  let quote = 0;
  for (; k < limit; k++) {
    const code = text.charCodeAt(k);
    if (quote !== 0) {
      if (code === quote) {
        quote = 0;
        state = "before_name";
      }
      continue;
    }
    if (code === GREATER) return k + 1 - at;
    if (code === LESS) return -1;
    if (
      state === "before_value" &&
      (code === DOUBLE_QUOTE || code === SINGLE_QUOTE)
    ) {
      quote = code;
      continue;
    }
    state = nextAttributeState(state, code);
  }
  return -1;
}

/** Where the attribute reading of {@link tagLength} is, between quoted values. */
type AttributeState =
  | "before_name"
  | "name"
  | "after_name"
  | "before_value"
  | "unquoted_value";

/** The state after `code` outside a quoted value, as HTML's tokenizer moves. */
function nextAttributeState(
  state: AttributeState,
  code: number,
): AttributeState {
  const space = isSpace(code);
  switch (state) {
    case "before_name":
      // `/` and white space separate attributes; anything else, `=` too, starts a name.
      return space || code === SLASH ? "before_name" : "name";
    case "name":
    case "after_name":
      if (code === EQUALS) return "before_value";
      if (code === SLASH) return "before_name";
      return space ? "after_name" : "name";
    case "before_value":
      return space ? "before_value" : "unquoted_value";
    case "unquoted_value":
      return space ? "before_name" : "unquoted_value";
  }
}

/**
 * The length of the HTML comment at `at`, ending before `limit`, or -1: a
 * browser shows nothing of it, so a marker split by comments
 * (`tra<!-- x -->ce`) reads whole. It ends as a browser ends it: at the
 * first `-->` or `--!>`, or at once when written `<!-->` or `<!--->`.
 */
function commentLength(text: string, at: number, limit: number): number {
  for (const empty of ["<!-->", "<!--->"]) {
    if (text.startsWith(empty, at) && at + empty.length <= limit) {
      return empty.length;
    }
  }
  // Only up to the limit: an unclosed `<!--` must not scan the whole answer.
  for (let k = at + 4; k < limit; k++) {
    if (text.startsWith("-->", k) && k + 3 <= limit) return k + 3 - at;
    if (text.startsWith("--!>", k) && k + 4 <= limit) return k + 4 - at;
  }
  return -1;
}

const SLASH = 0x2f;
const LESS = 0x3c;
const EQUALS = 0x3d;
const GREATER = 0x3e;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

function isLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isNameCharacter(code: number): boolean {
  return isLetter(code) || (code >= 0x30 && code <= 0x39) || code === 0x2d;
}

/** White space as `\s` reads it: ASCII, no-break and the other Unicode spaces. */
function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) ||
    (code > 0x7f && /\s/.test(String.fromCharCode(code)));
}

function codePoints(text: string): Unit[] {
  const units: Unit[] = [];
  let index = 0;
  for (const ch of text) {
    units.push({ ch, start: index, end: index + ch.length });
    index += ch.length;
  }
  return units;
}

/** `&amp;` as one `&` unit, so `&amp;#95;` decodes as `&#95;` would. */
function unwrapAmp(units: Unit[]): Unit[] {
  const out: Unit[] = [];
  for (let i = 0; i < units.length; i++) {
    if (units[i]!.ch === "&" && charsAt(units, i, 5) === "&amp;") {
      out.push({ ch: "&", start: units[i]!.start, end: units[i + 4]!.end });
      i += 4;
    } else out.push(units[i]!);
  }
  return out;
}

function charsAt(units: Unit[], from: number, count: number): string {
  return units.slice(from, from + count).map((u) => u.ch).join("");
}

/** A named reference's name, and the `;` after it when there is one. */
const NAMED_REFERENCE = /^&([A-Za-z][A-Za-z0-9]{1,31})(;?)/;

/**
 * The text of HTML's named character reference `name` (`&lowbar;`, `&aopf;`
 * for `𝕒`, `&acy;` for Cyrillic `а`, `&sup2;`), from the
 * `character-entities` table of the WHATWG list rather than a list of our
 * own: a renderer decodes every one of them, and one dropped character of
 * the random part hides the whole marker. Its own keys only, so
 * `&constructor;` is no name.
 */
function namedCharacter(name: string): string | undefined {
  return Object.hasOwn(characterEntities, name)
    ? characterEntities[name]
    : undefined;
}

/** The names a renderer also decodes without their `;` (`&sup2`, `&amp`). */
const LEGACY_NAMES: ReadonlySet<string> = new Set(characterEntitiesLegacy);
/** The first two letters of each legacy name: most names start no legacy one. */
const LEGACY_STARTS: ReadonlySet<string> = new Set(
  characterEntitiesLegacy.map((name) => name.slice(0, 2)),
);
const LONGEST_LEGACY_NAME = Math.max(
  ...characterEntitiesLegacy.map((name) => name.length),
);

/**
 * Decodes character references as a renderer of text does: numeric ones;
 * a named one with its `;`, or else the longest name that is also decoded
 * without one (`&sup2x` is `²x`); a `&name;` no table holds is dropped (it
 * stands for no letter or digit).
 */
function decodeReferences(units: Unit[]): Unit[] {
  const out: Unit[] = [];
  for (let i = 0; i < units.length; i++) {
    const unit = units[i]!;
    const reference = unit.ch !== "&"
      ? null
      : units[i + 1]?.ch === "#"
      ? numericReferenceAt(units, i)
      : namedReferenceAt(charsAt(units, i, 40));
    if (!reference) {
      out.push(unit);
      continue;
    }
    const span = {
      start: unit.start,
      end: units[i + reference.units - 1]!.end,
    };
    for (const ch of reference.text) out.push({ ch, ...span });
    i += reference.units - 1;
  }
  return out;
}

/** A reference: how many units it was written in, and what it decodes to. */
interface Reference {
  units: number;
  text: string;
}

/**
 * The numeric reference at `units[i]` (`&#116;`, `&#x74`), read on the
 * units rather than a window of them: a renderer reads any number of
 * leading zeros (`&#x0000000074;` is `t`), and a window would cut them.
 * Every digit is consumed; one beyond the largest code point, like zero or
 * a surrogate, decodes to nothing.
 */
function numericReferenceAt(units: Unit[], i: number): Reference | null {
  let k = i + 2;
  const hex = units[k]?.ch === "x" || units[k]?.ch === "X";
  if (hex) k++;
  const first = k;
  let code = 0;
  for (; k < units.length; k++) {
    const digit = digitValueOf(units[k]!.ch, hex ? 16 : 10);
    if (digit < 0) break;
    // Past the largest code point it stays past it: no need to grow further.
    if (code <= 0x10ffff) code = code * (hex ? 16 : 10) + digit;
  }
  if (k === first) return null;
  if (units[k]?.ch === ";") k++;
  const valid = code > 0 && code <= 0x10ffff &&
    !(code >= 0xd800 && code <= 0xdfff);
  return { units: k - i, text: valid ? String.fromCodePoint(code) : "" };
}

/** The value of an ASCII digit in `base` (10 or 16), or -1. */
function digitValueOf(ch: string, base: 10 | 16): number {
  const code = ch.length === 1 ? ch.charCodeAt(0) : 0;
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (base === 10) return -1;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The named reference `chars` starts with, or `null` (ASCII: one unit per character). */
function namedReferenceAt(chars: string): Reference | null {
  const named = NAMED_REFERENCE.exec(chars);
  if (!named) return null;
  const [written, name, semicolon] = named;
  const text = semicolon ? namedCharacter(name!) : undefined;
  if (text !== undefined) return { units: written.length, text };
  if (LEGACY_STARTS.has(name!.slice(0, 2))) {
    for (let n = Math.min(name!.length, LONGEST_LEGACY_NAME); n >= 2; n--) {
      const legacy = name!.slice(0, n);
      if (LEGACY_NAMES.has(legacy)) {
        return {
          units: legacy.length + 1,
          text: namedCharacter(legacy)!,
        };
      }
    }
  }
  return semicolon ? { units: written.length, text: "" } : null;
}

/**
 * What the answer's rendering of the marker (`span`, from the prefix when it
 * was found, else from the random part) changed. The marker itself is all
 * lower case, digits and two underscores after `trace` and `canary`; a
 * span matched without its tags is judged without them.
 */
function renderingTraits(
  span: string,
  how: { withPrefix: boolean; untagged: boolean },
): RenderingTrait[] {
  const traits = new Set<RenderingTrait>();
  if (how.untagged) traits.add("markup_tags");
  if (/&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]+);?/.test(span)) {
    traits.add("html_entities");
  }
  const units = decodeUnits(span);
  const decoded = (how.untagged ? withoutTags(units) : units)
    .map((u) => u.ch).join("");
  if (/\\[!-/:-@[-`{-~]/.test(decoded)) traits.add("markdown_escapes");
  if (FULL_WIDTH.test(decoded)) traits.add("full_width");
  if (hasCompatibilityForm(decoded)) traits.add("compatibility_forms");
  if (/[\r\n\u2028\u2029]/.test(decoded)) traits.add("line_breaks");
  if (/[\u00ad\u200b-\u200f\u2060\ufeff]/.test(decoded)) {
    traits.add("invisible_characters");
  }
  const written = decoded.normalize("NFKC")
    .replace(/\\(?=[!-/:-@[-`{-~])/g, "")
    .replace(/[\r\n\u2028\u2029\u00ad\u200b-\u200f\u2060\ufeff]/g, "");
  let plain = "";
  for (const ch of written) {
    if (MARK.test(ch)) {
      // A mark on its own (NFD text, or one NFKC cannot compose) is an accent.
      traits.add(
        VARIATION_SELECTOR.test(ch) ? "invisible_characters" : "diacritics",
      );
      continue;
    }
    let shown = ch;
    if (
      ch >= "\u0080" && lowerCase(ch) === "" &&
      /^[0-9a-z]$/.test(unmarkedLowerCase(ch))
    ) {
      // The letter under the accent, itself perhaps of another script (`ё`).
      traits.add("diacritics");
      shown = unmarkedBase(ch);
    }
    const latin = latinOf(shown);
    if (latin !== shown) traits.add(otherScriptTrait(shown));
    plain += latin;
  }
  if (/[A-Z]/.test(plain)) traits.add("case");
  if (/[oilOIL]/.test(plain)) traits.add("look_alikes");
  const separators = plain.replace(/[0-9A-Za-z]/g, "");
  if (separators !== (how.withPrefix ? "__" : "")) traits.add("separators");
  return RENDERING_TRAITS.filter((trait) => traits.has(trait));
}

/** The trait of a character {@link latinOf} reads as another: which of its tables read it. */
function otherScriptTrait(ch: string): RenderingTrait {
  if (Object.hasOwn(HOMOGLYPHS, ch)) return "homoglyphs";
  if (tagCharacterText(ch) !== null) return "tag_characters";
  if (enclosedLetter(ch) !== null) return "enclosed_letters";
  return "digit_scripts";
}

/** Full-width forms of printable ASCII, and the ideographic space. */
const FULL_WIDTH = /[\uff01-\uff5e\u3000]/;

/**
 * Whether `text` holds a compatibility form other than a full-width one that
 * NFKC writes with an ASCII letter or digit (`𝟕`, `𝐭`, `①`, `²`, `ﬁ`). The
 * fold reads it after NFKC, so only the span as written can say it was there.
 */
function hasCompatibilityForm(text: string): boolean {
  for (const ch of text) {
    if (ch < "\u0080" || FULL_WIDTH.test(ch)) continue;
    const compatible = ch.normalize("NFKC");
    if (compatible !== ch && /[0-9A-Za-z]/.test(compatible)) return true;
  }
  return false;
}

/** Words for a rendering, for findings: "Markdown escapes and upper case". */
export function describeRendering(traits: readonly RenderingTrait[]): string {
  const words = RENDERING_TRAITS.filter((trait) => traits.includes(trait))
    .map((trait) => TRAIT_WORDS[trait]);
  if (words.length === 0) return "another spelling";
  return joinAnd(words);
}

const TRAIT_WORDS: Readonly<Record<RenderingTrait, string>> = {
  case: "another case",
  separators: "other separators",
  markdown_escapes: "Markdown escapes",
  html_entities: "HTML entities",
  full_width: "full-width forms",
  compatibility_forms: "Unicode compatibility forms",
  line_breaks: "line breaks",
  invisible_characters: "invisible characters",
  tag_characters: "Unicode tag characters",
  look_alikes: "look-alike letters",
  homoglyphs: "look-alike letters of another script or small capitals",
  enclosed_letters: "enclosed or regional-indicator letters",
  diacritics: "letters with accents, other marks or a stroke",
  digit_scripts: "digits of another script",
  markup_tags: "markup tags",
  split_items: "a split across adjacent list items or object fields",
  base64: "base64 encoding",
  hex: "hex encoding",
  percent_encoding: "percent-encoding",
  string_escapes: "JSON or JavaScript string escapes",
};
