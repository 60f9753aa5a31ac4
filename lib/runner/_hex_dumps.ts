/**
 * Hex dumps with an offset column, as tools print a file's bytes: `xxd`
 * (`00000000: 7472 6163 …  trace_ca…`, bytes in groups), `hexdump -C`
 * (`00000000  74 72 … 63 61  6e 61 …  |trace_ca…|`), `od -t x1`
 * (`0000000 74 72 …`, hex, octal or decimal offsets), and `od -x` and
 * `hexdump` without `-C` (`0000000 7274 6361 …`, 2-byte words in the
 * machine's byte order). Each line is its offset, then its bytes as groups of
 * two hex digits or more, then perhaps a text column.
 * The text column may look like hex too (`  cafe`), so a line's bytes are
 * told from it by the offset of the line after it: they are its first
 * groups that together hold exactly the bytes between the two offsets. Only
 * lines whose offsets step so are a dump: random text seldom reads as one,
 * and every line is in at most one dump, read once.
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
const DUMP_START = /(?:^|\n)[ \t]*[0-9A-Fa-f]{4,12}:? {1,2}[0-9A-Fa-f]{2}/g;

/** A group of bytes after one or two spaces, as whole hex digit pairs ending at a space or the line's end. */
const GROUP = / {1,2}((?:[0-9A-Fa-f]{2})+)(?= |$)/y;

/** One line that starts with an offset. */
interface DumpLine {
  offset: string;
  /** The hex digits of each group after the offset, in order: the bytes and perhaps a text column that looks like hex. */
  groups: string[];
  /** The spaces before each group: 2 where a gap of two spaces comes before it. */
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
  /** Whether every group read as bytes so far is a 2-byte word (4 digits), as `od -x` writes them. */
  words: boolean;
  /** Offsets that stepped so far: a dump needs one, so two lines. */
  steps: number;
  width: number;
  /**
   * Where every line read so far has a gap of two spaces between its bytes,
   * as a count of the bytes before it: `[8]` for `hexdump -C`, which splits
   * each line in halves, none for `xxd` and `od`.
   */
  innerGaps: number[];
}

/**
 * The hex digits of each dump in `value` that holds at least `shortest`
 * bytes, its lines' byte columns joined: at least two lines whose offsets
 * step by the bytes of the line before (a last line with no offset after it
 * read up to its first gap of two spaces where the lines before have none,
 * and no wider than they are). A dump whose groups are all 2-byte words is
 * yielded twice, in written order (`xxd` writes words in file order) and
 * with each word's bytes swapped (`od -x` and `hexdump` write the low byte
 * last): the same groups cannot tell which tool wrote them. A line is in at
 * most one dump, and a dump yields at most twice the digits of its lines,
 * so the dumps together hold at most one byte per character of `value`.
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
      open.words &&= step.groups.every(isWord);
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
    words: true,
    steps: 0,
    width: 0,
    innerGaps: [],
  };
}

/**
 * The readings of the dump `open` closed by `last`, when it holds at least
 * `shortest` bytes: its digits as written, then, for a dump of 2-byte words,
 * with each word's bytes swapped.
 */
function* readings(
  open: OpenDump | null,
  last: DumpLine | null,
  shortest: number,
): Generator<string> {
  const closed = open && last ? closeDump(open, last) : null;
  if (closed === null || closed.digits.length < 2 * shortest) return;
  yield closed.digits;
  if (closed.words) yield wordsSwapped(closed.digits);
}

/** Whether `group` is one 2-byte word. */
function isWord(group: string): boolean {
  return group.length === 4;
}

/** `digits` of 2-byte words with each word's two bytes swapped: `7274` becomes `7472`. */
function wordsSwapped(digits: string): string {
  let swapped = "";
  for (let i = 0; i < digits.length; i += 4) {
    swapped += digits.slice(i + 2, i + 4) + digits.slice(i, i + 2);
  }
  return swapped;
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

/** Where `line` has a gap of two spaces between its first `bytes` bytes, as a count of the bytes before each. */
function innerGapsOf(line: DumpLine, bytes: number): number[] {
  const at: number[] = [];
  let before = 0;
  for (let i = 0; i < line.groups.length && before < bytes; i++) {
    if (i > 0 && line.gaps[i]! > 1) at.push(before);
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
 * A dump's digits once `last`, its last line, is read, and whether all its
 * groups are 2-byte words: `null` when it has not two lines. The last line
 * has no offset after it, so its bytes are the groups before its first gap
 * of two spaces (where `xxd` starts its text column) that falls where the
 * lines before have none (`hexdump -C` has one after byte 8 of each line),
 * as many as the widest line before holds at most.
 */
function closeDump(
  open: OpenDump,
  last: DumpLine,
): { digits: string; words: boolean } | null {
  if (open.steps === 0) return null;
  let tail = "";
  let words = open.words;
  for (let i = 0; i < last.groups.length; i++) {
    const group = last.groups[i]!;
    const wide = i > 0 && last.gaps[i]! > 1;
    if (wide && !open.innerGaps.includes(tail.length / 2)) break;
    if (tail.length + group.length > 2 * open.width) break;
    tail += group;
    words &&= isWord(group);
  }
  return { digits: open.digits.join("") + tail, words };
}
