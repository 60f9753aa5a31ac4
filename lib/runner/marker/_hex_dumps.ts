/**
 * Hex dumps with an offset column, as tools print a file's bytes: `xxd`
 * (`00000000: 7472 6163 …  trace_ca…`, bytes in groups), `hexdump -C`
 * (`00000000  74 72 … 63 61  6e 61 …  |trace_ca…|`), `od -t x1`
 * (`0000000 74 72 …`, hex, octal or decimal offsets), `od -x`, `hexdump`
 * without `-C` and `hexdump -x` (`0000000 7274 6361 …`, 2-byte words in the
 * machine's byte order), `od -t x4`, `od -t x8` and `xxd -e` (4- and 8-byte
 * words in that order). Each line is its offset, then its bytes as groups of
 * two hex digits or more, each after a run of spaces, then perhaps a text
 * column.
 * The text column may look like hex too (`  cafe`), so a line's bytes are
 * told from it by the offset of the line after it: they are its first
 * groups that together hold exactly the bytes between the two offsets. Only
 * lines whose offsets step so are a dump: random text seldom reads as one,
 * and every line is in at most one dump, read at most twice.
 *
 * @module
 */

/** A line's offset column: hex digits, and a colon after them as `xxd` writes one. */
const OFFSET = /^[ \t]*([0-9A-Fa-f]{4,12}):?(?= |$)/;

/**
 * A line that starts with an offset and a group of bytes, found with the line
 * break before it. A dump starts with such a line and only such a line can
 * step to the next, so the lines between them are skipped unread: text with
 * no dump costs one search.
 */
const DUMP_START = /(?:^|\n)[ \t]*[0-9A-Fa-f]{4,12}:? +[0-9A-Fa-f]{2}/g;

/**
 * A group of bytes after a run of spaces (`hexdump -x` writes four), as whole
 * hex digit pairs ending at a space or the line's end.
 */
const GROUP = / +((?:[0-9A-Fa-f]{2})+)(?= |$)/y;

/** One line that starts with an offset. */
interface DumpLine {
  offset: string;
  /** The hex digits of each group after the offset, in order: the bytes and perhaps a text column that looks like hex. */
  groups: string[];
  /** The spaces before each group. */
  gaps: number[];
}

/** Bases a dump's offsets are written in: `od` writes octal ones unless told otherwise (`-A d`, `-A x`). */
type OffsetBase = 16 | 10 | 8;

/** Every base, before a dump's first step has ruled any out. */
const OFFSET_BASES: readonly OffsetBase[] = [16, 10, 8];

/** A dump being read: its bytes' digits so far, its bases and widest line. */
interface OpenDump {
  digits: string[];
  /** The bases every step so far read the same bytes in: all of one dump's offsets are read in one. */
  bases: readonly OffsetBase[];
  /**
   * The digits of every group read as bytes so far when they all have as
   * many (`4` for the 2-byte words of `od -x`), else 0.
   */
  groupDigits: number;
  /** Offsets that stepped so far: a dump needs one, so two lines. */
  steps: number;
  width: number;
  /**
   * Where every line read so far has a gap of more than one space between its
   * bytes, of the same width: `"8:2"` (two spaces after 8 bytes) for
   * `hexdump -C`, which splits each line in halves, none for `xxd` and `od`,
   * one before each word for `hexdump -x`.
   */
  innerGaps: string[];
}

/**
 * The hex digits of each dump in `value` that holds at least `shortest`
 * bytes, its lines' byte columns joined: at least two lines whose offsets
 * step by the bytes of the line before (a last line with no offset after it
 * read up to its first gap wider than one space where the lines before have
 * none as wide, and no wider than they are). A dump whose groups are all
 * words of one width, 2, 4 or 8 bytes, is yielded twice, in written order
 * (`xxd` writes words in file order) and with each word's bytes reversed
 * (`od -x`, `od -t x4`, `hexdump` and `xxd -e` write a little-endian
 * machine's words, the low byte last): the same groups cannot tell which
 * tool wrote them. A line is in at most one dump, and a dump yields at most
 * twice the digits of its lines, so the dumps together hold at most one byte
 * per character of `value`.
 */
export function* hexDumpDigits(
  value: string,
  shortest: number,
): Generator<string> {
  if (!value.includes("\n")) return;
  let open: OpenDump | null = null;
  let previous: DumpLine | null = null;
  for (let start = nextDumpStart(value, 0); start >= 0;) {
    const end = value.indexOf("\n", start);
    const line = dumpLine(lineAt(value, start, end));
    const step = previous && line && open
      ? stepBetween(previous, line, open.bases)
      : null;
    if (open && previous && step) {
      const digits = step.groups.join("");
      const bytes = digits.length / 2;
      const gaps = innerGapsOf(previous, bytes);
      open.innerGaps = open.steps === 0
        ? gaps
        : open.innerGaps.filter((at) => gaps.includes(at));
      open.digits.push(digits);
      open.bases = step.bases;
      open.groupDigits = step.groups.reduce(sameWidth, open.groupDigits);
      open.steps += 1;
      open.width = Math.max(open.width, bytes);
    } else {
      yield* readings(open, previous, shortest);
      // A line that does not step from the one before may start a dump.
      open = line ? openDump() : null;
    }
    previous = line;
    if (end < 0) break;
    start = end + 1;
    if (!previous?.groups.length) {
      // No line steps from this one: the dump open ends here.
      yield* readings(open, previous, shortest);
      open = null;
      previous = null;
      start = nextDumpStart(value, end);
    }
  }
  yield* readings(open, previous, shortest);
}

/** A dump that has read no line yet. */
function openDump(): OpenDump {
  return {
    digits: [],
    bases: OFFSET_BASES,
    groupDigits: -1,
    steps: 0,
    width: 0,
    innerGaps: [],
  };
}

/**
 * The readings of the dump `open` closed by `last`, when it holds at least
 * `shortest` bytes: its digits as written, then, for a dump of words of one
 * width, with each word's bytes reversed.
 */
function* readings(
  open: OpenDump | null,
  last: DumpLine | null,
  shortest: number,
): Generator<string> {
  const closed = open && last ? closeDump(open, last) : null;
  if (closed === null || closed.digits.length < 2 * shortest) return;
  yield closed.digits;
  if (WORD_DIGITS.includes(closed.groupDigits)) {
    yield wordsReversed(closed.digits, closed.groupDigits);
  }
}

/** Digits of a word a little-endian machine writes low byte last: 2-, 4- and 8-byte words. */
export const WORD_DIGITS: readonly number[] = [4, 8, 16];

/**
 * The digits `width` shared by every group so far (-1: none yet) once `group`
 * is read: `group`'s own for the first, 0 once two differ.
 */
function sameWidth(width: number, group: string): number {
  return width === -1 || width === group.length ? group.length : 0;
}

/**
 * `digits` of words of `width` digits each, a last one perhaps shorter, with
 * each word's bytes reversed: `7274` becomes `7472`, `746e7953` `53796e74`.
 */
export function wordsReversed(digits: string, width: number): string {
  let reversed = "";
  for (let word = 0; word < digits.length; word += width) {
    const end = Math.min(word + width, digits.length);
    for (let at = end - 2; at >= word; at -= 2) {
      reversed += digits.slice(at, at + 2);
    }
  }
  return reversed;
}

/** Where the first line of `value` from `from` (a line's start or the break before it) that matches `DUMP_START` starts, or -1. */
function nextDumpStart(value: string, from: number): number {
  DUMP_START.lastIndex = from;
  const found = DUMP_START.exec(value);
  if (!found) return -1;
  return value[found.index] === "\n" ? found.index + 1 : found.index;
}

/** The line of `value` from `start` to the break at `end` (-1 for none), without a `\r` before that break. */
function lineAt(value: string, start: number, end: number): string {
  if (end < 0) return value.slice(start);
  return value.slice(
    start,
    end > start && value[end - 1] === "\r" ? end - 1 : end,
  );
}

/** `text` as a dump line, or `null` when it starts with no offset. */
function dumpLine(text: string): DumpLine | null {
  const offset = OFFSET.exec(text);
  if (!offset) return null;
  const groups: string[] = [];
  const gaps: number[] = [];
  GROUP.lastIndex = offset[0].length;
  for (let group = GROUP.exec(text); group; group = GROUP.exec(text)) {
    gaps.push(group[0].length - group[1]!.length);
    groups.push(group[1]!);
  }
  return { offset: offset[1]!, groups, gaps };
}

/**
 * Where `line` has a gap of more than one space between its first `bytes`
 * bytes, each as the count of the bytes before it and its width (`"8:2"`).
 */
function innerGapsOf(line: DumpLine, bytes: number): string[] {
  const at: string[] = [];
  let before = 0;
  for (let i = 0; i < line.groups.length && before < bytes; i++) {
    if (i > 0 && line.gaps[i]! > 1) at.push(`${before}:${line.gaps[i]}`);
    before += line.groups[i]!.length / 2;
  }
  return at;
}

/**
 * The groups of `line`'s bytes when `next`'s offset follows them in one of
 * `bases`: the first groups of `line` that hold exactly the bytes between the
 * two offsets, at least one, and the bases that read that step. Where bases
 * read different steps (`0000016` after `0000000` is 22 bytes in hex, 16 in
 * decimal, 14 in octal), the widest that the groups hold wins: a dump's bytes
 * fill its lines, and a narrower step would leave a line's last bytes
 * unread, as if they were its text column.
 */
function stepBetween(
  line: DumpLine,
  next: DumpLine,
  bases: readonly OffsetBase[],
): { groups: string[]; bases: OffsetBase[] } | null {
  const stepIn = (base: OffsetBase) =>
    offsetValue(next.offset, base) - offsetValue(line.offset, base);
  let widest = 0;
  let groups: string[] | null = null;
  for (const base of bases) {
    const bytes = stepIn(base);
    if (!(bytes > widest)) continue;
    const leading = leadingGroups(line.groups, bytes);
    if (leading === null) continue;
    widest = bytes;
    groups = leading;
  }
  if (groups === null) return null;
  return { groups, bases: bases.filter((base) => stepIn(base) === widest) };
}

/** The hex digits a base lacks: an offset holding one is not written in it. */
const NOT_DIGITS: Readonly<Record<OffsetBase, RegExp | null>> = {
  16: null,
  10: /[A-Fa-f]/,
  8: /[89A-Fa-f]/,
};

/** `offset` read in `base`: `NaN` when it has a digit the base lacks. */
function offsetValue(offset: string, base: OffsetBase): number {
  return NOT_DIGITS[base]?.test(offset)
    ? Number.NaN
    : Number.parseInt(offset, base);
}

/** The first of `groups` that hold exactly `bytes` bytes, or `null` when no prefix does. */
function leadingGroups(
  groups: readonly string[],
  bytes: number,
): string[] | null {
  const leading: string[] = [];
  let digits = 0;
  for (const group of groups) {
    if (digits === 2 * bytes) break;
    leading.push(group);
    digits += group.length;
    if (digits > 2 * bytes) return null;
  }
  return digits === 2 * bytes ? leading : null;
}

/**
 * A dump's digits once `last`, its last line, is read, and the digits its
 * groups all have (0 when they differ): `null` when it has not two lines. The
 * last line has no offset after it, so its bytes are the groups before its
 * first gap wider than one space (where `xxd` starts its text column) that
 * falls where the lines before have none as wide (`hexdump -C` has one of two
 * spaces after byte 8 of each line, `hexdump -x` one of four before each
 * word), as many as the widest line before holds at most. In a dump of words
 * of one width, a shorter last word (a file's cut end) ends the line, after
 * one space or right-aligned as `xxd -e` writes it, the spaces of its missing
 * digits before it.
 */
function closeDump(
  open: OpenDump,
  last: DumpLine,
): { digits: string; groupDigits: number } | null {
  if (open.steps === 0) return null;
  let tail = "";
  let groupDigits = open.groupDigits;
  for (let i = 0; i < last.groups.length; i++) {
    const group = last.groups[i]!;
    const gap = last.gaps[i]!;
    const cut = WORD_DIGITS.includes(groupDigits) &&
      group.length < groupDigits;
    const aligned = cut && gap === 1 + groupDigits - group.length;
    const wide = i > 0 && gap > 1 && !aligned;
    if (wide && !open.innerGaps.includes(`${tail.length / 2}:${gap}`)) break;
    if (tail.length + group.length > 2 * open.width) break;
    tail += group;
    if (cut) break;
    groupDigits = sameWidth(groupDigits, group);
  }
  return { digits: open.digits.join("") + tail, groupDigits };
}
