/**
 * Hex dumps with an offset column, as tools print a file's bytes: `xxd`
 * (`00000000: 7472 6163 …  trace_ca…`, bytes in groups), `hexdump -C`
 * (`00000000  74 72 … 63 61  6e 61 …  |trace_ca…|`) and `od -t x1`
 * (`0000000 74 72 …`, hex or octal offsets). Each line is its offset, then
 * its bytes as groups of two hex digits or more, then perhaps a text column.
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

/** A group of bytes after one or two spaces, as whole hex digit pairs ending at a space or the line's end. */
const GROUP = / {1,2}((?:[0-9A-Fa-f]{2})+)(?= |$)/y;

/** One line that starts with an offset. */
interface DumpLine {
  offset: string;
  /** The hex digits of each group after the offset, in order: the bytes and perhaps a text column that looks like hex. */
  groups: string[];
  /** How many of the first groups are joined by one space, as the bytes of a dump's last line are before its text column. */
  tightGroups: number;
}

/** Bases a dump's offsets are written in: `od` writes octal ones unless told otherwise. */
type OffsetBase = 16 | 8;

/** A dump being read: its bytes' digits so far, its base and widest line. */
interface OpenDump {
  digits: string[];
  base: OffsetBase | null;
  /** Offsets that stepped so far: a dump needs one, so two lines. */
  steps: number;
  width: number;
}

/**
 * The hex digits of each dump in `value` that holds at least `shortest`
 * bytes, its lines' byte columns joined: at least two lines whose offsets
 * step by the bytes of the line before (a last line with no offset after it
 * read up to its first gap of two spaces, and no wider than the lines
 * before). A line is in at most one dump, and a dump yields only digits of
 * its lines, so the dumps together hold at most half a byte per character
 * of `value`.
 */
export function* hexDumpDigits(
  value: string,
  shortest: number,
): Generator<string> {
  if (!value.includes("\n")) return;
  let open: OpenDump | null = null;
  let previous: DumpLine | null = null;
  for (const text of value.split(/\r?\n/)) {
    const line = dumpLine(text);
    const step = previous && line && open
      ? stepBetween(previous, line, open.base)
      : null;
    if (open && previous && step) {
      open.digits.push(step.digits);
      open.base = step.base;
      open.steps += 1;
      open.width = Math.max(open.width, step.digits.length / 2);
    } else {
      const closed = open && previous ? closeDump(open, previous) : null;
      if (closed !== null && closed.length >= 2 * shortest) yield closed;
      // A line that does not step from the one before may start a dump.
      open = line ? { digits: [], base: null, steps: 0, width: 0 } : null;
    }
    previous = line;
  }
  const closed = open && previous ? closeDump(open, previous) : null;
  if (closed !== null && closed.length >= 2 * shortest) yield closed;
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
  return { offset: offset[1]!, groups, tightGroups: tightGroupCount(gaps) };
}

/** How many first groups follow one another after one space (the first after any gap). */
function tightGroupCount(gaps: readonly number[]): number {
  const wide = gaps.findIndex((gap, i) => i > 0 && gap > 1);
  return wide < 0 ? gaps.length : wide;
}

/**
 * The digits of `line`'s bytes when `next`'s offset follows them in `base`
 * (hex, else octal when both offsets are octal and no base is set yet):
 * the first groups of `line` that hold exactly the bytes between the two
 * offsets, at least one.
 */
function stepBetween(
  line: DumpLine,
  next: DumpLine,
  base: OffsetBase | null,
): { digits: string; base: OffsetBase } | null {
  for (const candidate of base ? [base] : [16, 8] as const) {
    const step = offsetValue(next.offset, candidate) -
      offsetValue(line.offset, candidate);
    if (!(step >= 1)) continue;
    const digits = leadingBytes(line.groups, step);
    if (digits !== null) return { digits, base: candidate };
  }
  return null;
}

/** `offset` read in `base`: `NaN` when it has a digit the base lacks. */
function offsetValue(offset: string, base: OffsetBase): number {
  return base === 8 && /[89A-Fa-f]/.test(offset)
    ? Number.NaN
    : Number.parseInt(offset, base);
}

/** The digits of the first of `groups` that hold exactly `bytes` bytes, or `null` when no prefix does. */
function leadingBytes(groups: readonly string[], bytes: number): string | null {
  let digits = "";
  for (const group of groups) {
    if (digits.length === 2 * bytes) break;
    digits += group;
    if (digits.length > 2 * bytes) return null;
  }
  return digits.length === 2 * bytes ? digits : null;
}

/**
 * A dump's digits once `last`, its last line, is read: `null` when it has
 * not two lines. The last line has no offset after it, so its bytes are the
 * groups before its first gap of two spaces (where `xxd` starts its text
 * column), as many as the widest line before holds at most.
 */
function closeDump(open: OpenDump, last: DumpLine): string | null {
  if (open.steps === 0) return null;
  let tail = "";
  for (const group of last.groups.slice(0, last.tightGroups)) {
    if (tail.length + group.length > 2 * open.width) break;
    tail += group;
  }
  return open.digits.join("") + tail;
}
