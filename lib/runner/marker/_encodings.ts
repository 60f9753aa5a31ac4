/**
 * Text an application ships encoded inside a string of its answer: base64 (a
 * whole string, a data URI's payload, a run inside longer text), hex,
 * percent-encoding, and JSON or JavaScript string escapes. Each decoding is
 * made from the string as written, never from another decoding, and holds no
 * more characters than the part it came from, so the false-match bound of
 * docs/report.md holds for every text searched (the sums are worked out
 * there). A base64 run inside JSON text that was serialised twice has its
 * `/` written `\/`; that `\/` is read as `/` while the run is scanned, so the
 * run is still decoded once, from the string as written: no other escape is
 * undone, and the base64 is not read from a decoding of the string's string
 * escapes. Each encoding is read in one pass over the string: the cost stays
 * linear in the answer's size.
 *
 * @module
 */

import { hexDumpDigits, WORD_DIGITS, wordsReversed } from "./_hex_dumps.ts";

/** An encoding a decoding undid; each is a rendering trait. */
export type Encoding = "base64" | "hex" | "percent_encoding" | "string_escapes";

/** The text one encoded part of a string decodes to. */
export interface DecodedText {
  encoding: Encoding;
  text: string;
}

/**
 * Every decoding of `value` that could hold `shortest` characters, in the
 * order tried: base64, hex, percent-encoding, string escapes. Lazy, so a
 * search stops at the first decoding that holds what it looks for.
 */
export function* decodedTexts(
  value: string,
  shortest: number,
): Generator<DecodedText> {
  // Every decoding needs at least `shortest` characters written (base64 and
  // hex more): most strings of an answer are words, keys and ids, for which
  // scanning for runs would find none worth decoding.
  if (value.length < shortest) return;
  for (const text of base64Texts(value, shortest)) {
    yield { encoding: "base64", text };
  }
  for (const text of hexTexts(value, shortest)) {
    yield { encoding: "hex", text };
  }
  const percent = percentDecoded(value);
  if (percent !== null) yield { encoding: "percent_encoding", text: percent };
  const unescaped = withoutStringEscapes(value);
  if (unescaped !== null) yield { encoding: "string_escapes", text: unescaped };
}

/** Standard or URL-safe base64, padded or not. */
const WHOLE_BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;

/** How runs of one encoding's alphabet are found and read, for {@link quantumRuns}. */
interface RunPattern {
  pattern: RegExp;
  /** Characters of one group: a wrapped line ends after a whole number of them. */
  quantum: number;
  /** A line of a run as the encoding's own characters, when it may write one escaped. */
  read?: (line: string) => string;
}

/**
 * Runs of each base64 alphabet, line breaks inside allowed. Two alphabets,
 * so a standard payload glued to a name by `_` or `-` (`payload_dHJh…`)
 * still starts a run of its own. A run of the standard alphabet may write
 * `/` as `\/`, as JSON serialised twice does (`data:text\/plain;base64,…`),
 * read as the `/` it escapes.
 */
const BASE64_RUNS: readonly RunPattern[] = [
  {
    pattern: /(?:[A-Za-z0-9+/]|\\\/)+(?:\r?\n(?:[A-Za-z0-9+/]|\\\/)+)*/g,
    quantum: 4,
    read: (line) => line.replaceAll("\\/", "/"),
  },
  { pattern: /[A-Za-z0-9_-]+(?:\r?\n[A-Za-z0-9_-]+)*/g, quantum: 4 },
];

const UTF8 = new TextDecoder("utf-8", { fatal: true });
const LENIENT_UTF8 = new TextDecoder("utf-8");

/**
 * `bytes` as UTF-8 text, or `null` when they are not valid UTF-8: a whole
 * string counts as base64 only when it decodes to text (its runs are still
 * read, one UTF-8 sequence at a time, when it does not). A fatal
 * decoder's throw per run cost more than the rest of the search: a lenient
 * decoding without U+FFFD was valid, and one with it was not unless the
 * bytes hold U+FFFD itself (`EF BF BD`), which the fatal decoder settles.
 */
function utf8Text(bytes: Uint8Array): string | null {
  const text = LENIENT_UTF8.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  if (!holdsReplacementCharacter(bytes)) return null;
  try {
    return UTF8.decode(bytes);
  } catch {
    // Bytes that are not text: nothing to search.
    return null;
  }
}

/** Whether `bytes` hold the UTF-8 encoding of U+FFFD. */
function holdsReplacementCharacter(bytes: Uint8Array): boolean {
  for (let i = bytes.indexOf(0xef); i >= 0; i = bytes.indexOf(0xef, i + 1)) {
    if (bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd) return true;
  }
  return false;
}

/**
 * The UTF-8 texts `value` holds as base64: the whole string when all of it
 * (line breaks aside) is base64 of text, else each maximal run of one alphabet,
 * decoded from its first character (one UTF-8 sequence at a time), as an encoder writes one (after
 * `base64,` in a data URI, after `=` or a space in other text). A run is
 * never decoded from a later start: every character is in at most one run
 * per alphabet, so the decodings together hold at most 3/4 of a character
 * per character of `value` per alphabet.
 */
function* base64Texts(value: string, shortest: number): Generator<string> {
  const decoded = new Set<string>();
  const compact = value.replace(/[\r\n]/g, "").replaceAll("\\/", "/");
  // A whole string that is base64 but not of text (an id, a digest) is
  // also the run at its start: its bytes are decoded once, for both.
  let whole: { text: string; bytes: Uint8Array | null } | null = null;
  if (WHOLE_BASE64.test(compact)) {
    const text = compact.replace(/=+$/, "");
    whole = { text, bytes: base64Bytes(text, shortest) };
    const utf8 = whole.bytes && utf8Text(whole.bytes);
    if (utf8) {
      yield utf8;
      return;
    }
  }
  const longEnough = base64Length(shortest);
  for (const alphabet of BASE64_RUNS) {
    for (const run of quantumRuns(value, alphabet)) {
      // Most runs are words: too short to decode, so never worth a key.
      if (run.text.length < longEnough) continue;
      const key = `${run.start}:${run.text.length}`;
      if (decoded.has(key)) continue;
      decoded.add(key);
      const bytes = run.text === whole?.text
        ? whole.bytes
        : base64Bytes(run.text, shortest);
      if (bytes) yield bytesText(bytes);
    }
  }
}

/** Keeps a leading U+FEFF, as {@link utf8Sequences} reads it. */
const RUN_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * {@link utf8Sequences} of `bytes`, each byte that starts no valid
 * sequence a {@link BYTE_BREAK}: natively decoded when no U+FFFD comes of
 * it (the bytes are valid UTF-8, as most runs of text are), read sequence
 * by sequence otherwise.
 */
function bytesText(bytes: Uint8Array): string {
  const text = RUN_UTF8.decode(bytes);
  return text.includes("\uFFFD")
    ? utf8Sequences(bytes, () => BYTE_BREAK)
    : text;
}

/** Characters of unpadded base64 that encode `characters` bytes. */
function base64Length(characters: number): number {
  return Math.ceil(characters * 4 / 3);
}

/**
 * The bytes unpadded base64 `run` encodes, when it could hold `shortest`
 * characters. A run's bytes are read one UTF-8 sequence at a time, as hex
 * is, not only when all of them are valid UTF-8: two bytes that are not
 * text before the rest (`\xff\xfe`, a binary header) hid the text after
 * them.
 */
function base64Bytes(run: string, shortest: number): Uint8Array | null {
  if (run.length < base64Length(shortest) || run.length % 4 === 1) {
    return null;
  }
  const standard = run.replace(/-/g, "+").replace(/_/g, "/");
  let binary: string;
  try {
    binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, "="));
  } catch {
    // Not base64 after all: nothing to search.
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A run of one alphabet in a string, line breaks removed. */
interface EncodedRun {
  start: number;
  text: string;
}

/**
 * The runs `runs.pattern` finds in `value`, each line read as `runs.read`
 * says, split at each line break that does not follow a whole number of
 * `runs.quantum`-character groups: an encoder that wraps its output breaks
 * lines between groups, while a word on the line before would shift every
 * group after it.
 */
function* quantumRuns(value: string, runs: RunPattern): Generator<EncodedRun> {
  for (const match of value.matchAll(runs.pattern)) {
    let start = match.index;
    let text = "";
    let offset = match.index;
    for (const line of match[0].split(/(?<=\r?\n)/)) {
      const content = line.replace(/\r?\n$/, "");
      text += runs.read ? runs.read(content) : content;
      offset += line.length;
      const broken = content.length < line.length;
      if (broken && text.length % runs.quantum !== 0) {
        yield { start, text };
        start = offset;
        text = "";
      }
    }
    if (text.length > 0) yield { start, text };
  }
}

/** Runs of hex digits, either case, line breaks inside allowed. */
const HEX_RUNS = /[0-9A-Fa-f]+(?:\r?\n[0-9A-Fa-f]+)*/g;

/** Two hex digits with no hex digit after them. */
const HEX_BYTE = "[0-9A-Fa-f]{2}(?![0-9A-Fa-f])";

/**
 * Bytes written as two hex digits each with one separator between them, the
 * same one throughout (`de ad be ef`, `de:ad:be:ef`), or a line break with that
 * separator on either side or neither (a dump wrapped every 16 bytes, as
 * `od -An -tx1` writes one), from a byte no letter or digit precedes: the
 * `de` of `Unicode` starts no run. A letter after a byte ends the run there
 * and keeps the byte (`… 61x`).
 */
const SEPARATED_HEX_RUNS = new RegExp(
  `(?<![0-9A-Za-z])${HEX_BYTE}([ :-])${HEX_BYTE}` +
    `(?:(?:\\1|\\1?\\r?\\n\\1?)${HEX_BYTE})*`,
  "g",
);

/**
 * Words of one width (2, 4 or 8 bytes: 4, 8 or 16 hex digits) with one space
 * between them, or a line break with a space on either side or neither, as
 * `od -An -x`, `od -An -t x4` and `od -An -t x8` write them, from a word no
 * letter or digit precedes, each word followed by no hex digit. The width
 * is in each pattern, so runs of one pattern never share a character with
 * runs of another.
 */
const SEPARATED_WORD_RUNS: readonly { digits: number; pattern: RegExp }[] =
  WORD_DIGITS.map((digits) => {
    const word = `[0-9A-Fa-f]{${digits}}(?![0-9A-Fa-f])`;
    return {
      digits,
      pattern: new RegExp(
        `(?<![0-9A-Za-z])${word}(?:(?: | ?\\r?\\n ?)${word})+`,
        "g",
      ),
    };
  });

/**
 * Bytes a line of a separated run holds at least on average: with fewer, the
 * bytes beside its line breaks, which a run of digits alone may hold too,
 * would leave it less than twice its bytes in characters of its own
 * (docs/report.md works it out).
 */
const MIN_BYTES_PER_LINE = 5;

/**
 * The texts `value` holds as hex: each maximal run of hex digits, read from
 * its first digit and from its second (a whole string of hex is one such
 * run), then each run of bytes with one separator or a line break between
 * them, then each run of separated words of one width, as written and with
 * each word's bytes reversed, then each dump with an offset column, each
 * read as {@link hexText} says. Every digit is in at most two readings of a
 * run of digits alone, and a separated run shares at most its first and last
 * byte and the bytes and break at each of its line breaks with those, so
 * those runs together hold at most one character per character of `value`;
 * the runs of words, disjoint and read twice, at most another one (n words
 * of w digits decode to at most n · w bytes from n · (w + 1) − 1
 * characters); and the dumps, whose lines are disjoint and read at most
 * twice, at most another one (docs/report.md works it out).
 */
function* hexTexts(value: string, shortest: number): Generator<string> {
  for (const digits of hexDigitRuns(value, shortest)) {
    if (digits.length < 2 * shortest) continue;
    yield hexText(digits);
  }
  for (const match of value.matchAll(SEPARATED_HEX_RUNS)) {
    const digits = match[0].replace(/[^0-9A-Fa-f]/g, "");
    const lines = 1 + (match[0].match(/\n/g)?.length ?? 0);
    if (digits.length < 2 * Math.max(shortest, MIN_BYTES_PER_LINE * lines)) {
      continue;
    }
    yield hexText(digits);
  }
  for (const words of SEPARATED_WORD_RUNS) {
    for (const match of value.matchAll(words.pattern)) {
      // Counted apart in the bound (docs/report.md), so any number a line.
      const digits = match[0].replace(/[^0-9A-Fa-f]/g, "");
      if (digits.length < 2 * shortest) continue;
      yield hexText(digits);
      yield hexText(wordsReversed(digits, words.digits));
    }
  }
  for (const digits of hexDumpDigits(value, shortest)) yield hexText(digits);
}

/**
 * The whole bytes of each run of hex digits in `value`, line breaks removed:
 * each maximal run read twice, pairing its digits from its first digit and
 * from its second. In each reading a line break continues a part only after
 * whole bytes; a byte whose two digits a line break would split is not read,
 * and the next part starts at the second digit of the line after it. A digit
 * left over at a run's end is not read (an encoding cut to an odd length).
 * So an encoding glued after a word that ends in a hex letter (`data7472…`
 * makes the run `a7472…`), cut at its start or its end, glued and cut, or
 * written on a line after other hex (a SHA-256 on the line before) is whole
 * bytes in one of the two readings. Each reading splits the run into
 * disjoint parts, so every digit is in at most two.
 */
function* hexDigitRuns(value: string, shortest: number): Generator<string> {
  for (const match of value.matchAll(HEX_RUNS)) {
    // Most runs are words with hex letters (`de`, `cafe`): too short to hold
    // `shortest` bytes, so not worth splitting.
    if (match[0].length < 2 * shortest) continue;
    const lines = match[0].split(/\r?\n/);
    yield* pairedRuns(lines, 0);
    yield* pairedRuns(lines, 1);
  }
}

/**
 * The parts of whole bytes that `lines` of hex digits hold when their digits,
 * line breaks removed, are paired from digit `first` of the first line. A line
 * that starts in the middle of a byte ends the part before it (without that
 * byte's first digit) and starts the next one at its own second digit.
 */
function pairedRuns(lines: readonly string[], first: 0 | 1): string[] {
  const runs: string[] = [];
  let run = "";
  let at = first;
  for (const [i, line] of lines.entries()) {
    if (at % 2 === 0) {
      run += line;
    } else {
      if (i > 0) runs.push(wholeBytes(run));
      run = line.slice(1);
    }
    at += line.length;
  }
  runs.push(wholeBytes(run));
  return runs.filter((digits) => digits.length > 0);
}

/** `digits` without a last digit that makes no whole byte. */
function wholeBytes(digits: string): string {
  return digits.length % 2 === 0 ? digits : digits.slice(0, -1);
}

/**
 * What a byte that is not part of valid UTF-8 decodes to in base64 and hex:
 * a break the fold drops, so bytes that are no text (`FF FE` before it, a
 * binary header) hide nothing after them.
 */
const BYTE_BREAK = " ";

/**
 * The text an even number of hex `digits` encodes, read one UTF-8 sequence at
 * a time: a byte that starts no valid sequence (a number or a word beside the
 * run, `Score 95 …`, `It will be 74 72 …`, `… 99 bottles`) is a break between
 * texts, so the text beside it is still read. One pass, and never more
 * characters, nor more bytes of UTF-8, than `digits` hold bytes: each valid
 * sequence is the run's own bytes, each break one byte for at least one.
 */
function hexText(digits: string): string {
  const bytes = new Uint8Array(digits.length / 2);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = (nibble(digits, 2 * i) << 4) | nibble(digits, 2 * i + 1);
  }
  return bytesText(bytes);
}

/** The value of the hex digit at `digits[i]` (one of `[0-9A-Fa-f]`): no string per byte. */
function nibble(digits: string, i: number): number {
  const code = digits.charCodeAt(i);
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;
const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * `value` with its `%XX` escapes decoded as UTF-8 and `+` read as a space,
 * as a query string is; an escape that is not part of valid UTF-8 is left
 * as written. `null` when `value` has no escape. Each escape of three
 * characters decodes to at most one.
 */
function percentDecoded(value: string): string | null {
  if (!PERCENT_ESCAPE.test(value)) return null;
  return value.replace(/\+/g, " ").replace(PERCENT_ESCAPES, decodeEscapes);
}

/** A run of `%XX` escapes decoded, each one that is not valid UTF-8 left as written. */
function decodeEscapes(run: string): string {
  const bytes = Uint8Array.from(
    run.match(/%[0-9A-Fa-f]{2}/g)!,
    (escape) => Number.parseInt(escape.slice(1), 16),
  );
  return utf8Sequences(bytes, (i) => run.slice(3 * i, 3 * i + 3));
}

/**
 * `bytes` read one UTF-8 sequence at a time: each valid sequence as its
 * character, each byte that starts none (or starts an invalid or cut one) as
 * `invalid` says for its index.
 */
function utf8Sequences(
  bytes: Uint8Array,
  invalid: (index: number) => string,
): string {
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const length = utf8SequenceLength(bytes[i]!);
    const point = length === 0 ? -1 : sequencePoint(bytes, i, length);
    if (point < 0) {
      out += invalid(i);
      i += 1;
    } else {
      out += String.fromCodePoint(point);
      i += length;
    }
  }
  return out;
}

/**
 * The code point of the `length`-byte UTF-8 sequence at `bytes[i]`, or -1
 * when it is cut, overlong, a surrogate or past U+10FFFF. Checked by hand
 * rather than by a fatal `TextDecoder`: an encoded run of arbitrary bytes
 * holds invalid sequences by the thousand, and each refusal would be a
 * thrown error.
 */
function sequencePoint(bytes: Uint8Array, i: number, length: number): number {
  if (i + length > bytes.length) return -1;
  const lead = bytes[i]!;
  let point = length === 1
    ? lead
    : lead & (length === 2 ? 0x1f : length === 3 ? 0x0f : 0x07);
  for (let k = 1; k < length; k++) {
    const next = bytes[i + k]!;
    if ((next & 0xc0) !== 0x80) return -1;
    point = (point << 6) | (next & 0x3f);
  }
  const shortest = length === 3 ? 0x800 : length === 4 ? 0x10000 : 0;
  if (point < shortest || point > 0x10ffff) return -1;
  if (point >= 0xd800 && point <= 0xdfff) return -1;
  return point;
}

/** How many bytes a UTF-8 sequence starting with `lead` has; 0 when `lead` starts none. */
function utf8SequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * A JSON or JavaScript string escape: `\uXXXX`, `\u{X…}`, `\xXX`, or a
 * backslash before a quote, a backslash, `/` or a control letter.
 */
const STRING_ESCAPES =
  /\\(?:u([0-9A-Fa-f]{4})|u\{([0-9A-Fa-f]{1,6})\}|x([0-9A-Fa-f]{2})|(["'\\/bfnrtv]))/g;

const STRING_ESCAPE = new RegExp(STRING_ESCAPES.source);

const SINGLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "'": "'",
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/**
 * `value` with its string escapes undone, as a JSON string encoded twice or
 * a JavaScript literal holds text; `null` when it has none. Read left to
 * right, so `\\u0074` is a backslash and `u0074`. Each escape decodes to
 * fewer characters than it is written with.
 */
function withoutStringEscapes(value: string): string | null {
  if (!STRING_ESCAPE.test(value)) return null;
  return value.replace(
    STRING_ESCAPES,
    (escape, unit?: string, point?: string, byte?: string, single?: string) => {
      if (single !== undefined) return SINGLE_ESCAPES[single]!;
      const code = Number.parseInt(unit ?? point ?? byte!, 16);
      if (unit !== undefined || byte !== undefined) {
        return String.fromCharCode(code);
      }
      return code <= 0x10ffff ? String.fromCodePoint(code) : escape;
    },
  );
}
