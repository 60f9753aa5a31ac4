/**
 * Letters and digits of other scripts that the marker fold reads as the Latin
 * letters and ASCII digits they pass for.
 *
 * Homoglyphs: Cyrillic or Greek letters that look like Latin ones (`а`, `ο`,
 * `ѕ`, `З`), as a spoof or a font substitution writes them, and Latin small
 * capitals (`ᴀ`, `ʙ`, `ᴄ`), as a "fancy text" generator writes them. Unicode's
 * confusables.txt is the full list, but it is large, mostly maps to
 * characters no marker holds, and no package of it is worth pinning; this
 * table keeps the common look-alikes whose Latin character is in the marker
 * alphabet, or is `o`, `i` or `l`, which the fold then reads as `0` and `1`.
 * It applies after NFKC, so it lists no character NFKC changes.
 *
 * Digits: every Unicode decimal digit (`\p{Nd}`: Arabic-Indic `٣`,
 * Devanagari `३`) reads as the ASCII digit of its value; NFKC leaves them.
 *
 * Stroked letters: Latin letters with a stroke or a bar (`ø`, `ł`, `đ`),
 * which have no decomposition, read as the letter under the stroke.
 *
 * Enclosed letters: negative circled, negative squared and regional
 * indicator letters (`🅐`, `🅰`, `🇦`) read as the capital they enclose; NFKC
 * leaves them, where it makes the plain circled and squared ones ASCII.
 *
 * Each maps one character to one, so a folded text grows no longer.
 *
 * @module
 */

/** Cyrillic, Greek and Latin small-capital look-alikes, each to the Latin letter or digit it passes for, in that letter's case. */
export const HOMOGLYPHS: Readonly<Record<string, string>> = {
  // Cyrillic, small.
  "\u0430": "a", // а
  "\u0431": "6", // б
  "\u0501": "d", // ԁ
  "\u0435": "e", // е
  "\u04bb": "h", // һ
  "\u0456": "i", // і
  "\u0458": "j", // ј
  "\u04cf": "l", // ӏ
  "\u043e": "o", // о
  "\u0440": "p", // р
  "\u051b": "q", // ԛ
  "\u0455": "s", // ѕ
  "\u0441": "c", // с
  "\u051d": "w", // ԝ
  "\u0445": "x", // х
  "\u0443": "y", // у
  // Cyrillic, capital.
  "\u0410": "A", // А
  "\u0412": "B", // В
  "\u0421": "C", // С
  "\u0415": "E", // Е
  "\u041d": "H", // Н
  "\u04ba": "H", // Һ
  "\u0406": "I", // І
  "\u04c0": "I", // Ӏ
  "\u0408": "J", // Ј
  "\u041a": "K", // К
  "\u041c": "M", // М
  "\u041e": "O", // О
  "\u0420": "P", // Р
  "\u051a": "Q", // Ԛ
  "\u0405": "S", // Ѕ
  "\u0422": "T", // Т
  "\u051c": "W", // Ԝ
  "\u0425": "X", // Х
  "\u0423": "Y", // У
  "\u04ae": "Y", // Ү
  "\u0417": "3", // З
  // Greek, small.
  "\u03b1": "a", // α
  "\u03b5": "e", // ε
  "\u03b9": "i", // ι
  "\u03f3": "j", // ϳ
  "\u03ba": "k", // κ
  "\u03b7": "n", // η
  "\u03bf": "o", // ο
  "\u03c1": "p", // ρ
  "\u03c4": "t", // τ
  "\u03bd": "v", // ν
  "\u03c7": "x", // χ
  "\u03b3": "y", // γ
  // Greek, capital.
  "\u0391": "A", // Α
  "\u0392": "B", // Β
  "\u0395": "E", // Ε
  "\u0397": "H", // Η
  "\u0399": "I", // Ι
  "\u037f": "J", // Ϳ
  "\u039a": "K", // Κ
  "\u039c": "M", // Μ
  "\u039d": "N", // Ν
  "\u039f": "O", // Ο
  "\u03a1": "P", // Ρ
  "\u03a4": "T", // Τ
  "\u03a5": "Y", // Υ
  "\u03a7": "X", // Χ
  "\u0396": "Z", // Ζ
  // Latin small capitals, as "fancy text" generators write them (no small
  // capital x or q exists: they write `x` and `ǫ`), and IPA letters that
  // pass for a and g.
  "\u1d00": "a", // ᴀ
  "\u0299": "b", // ʙ
  "\u1d04": "c", // ᴄ
  "\u1d05": "d", // ᴅ
  "\u1d07": "e", // ᴇ
  "\ua730": "f", // ꜰ
  "\u0262": "g", // ɢ
  "\u029c": "h", // ʜ
  "\u026a": "i", // ɪ
  "\u1d0a": "j", // ᴊ
  "\u1d0b": "k", // ᴋ
  "\u029f": "l", // ʟ
  "\u1d0d": "m", // ᴍ
  "\u0274": "n", // ɴ
  "\u1d0f": "o", // ᴏ
  "\u1d18": "p", // ᴘ
  "\u01eb": "q", // ǫ
  "\u0280": "r", // ʀ
  "\ua731": "s", // ꜱ
  "\u1d1b": "t", // ᴛ
  "\u1d1c": "u", // ᴜ
  "\u1d20": "v", // ᴠ
  "\u1d21": "w", // ᴡ
  "\u028f": "y", // ʏ
  "\u1d22": "z", // ᴢ
  "\u0251": "a", // ɑ
  "\u0261": "g", // ɡ
};

/** A Unicode decimal digit, of any script. */
const DECIMAL_DIGIT = /^\p{Nd}$/u;

/** The first decimal digit outside ASCII (U+0660, Arabic-Indic zero): no character below it is one. */
const FIRST_OTHER_DIGIT = "\u0660";

/**
 * What each character tried stands for as a digit (`null`: none), by
 * character: the same few scripts recur, and most characters of a text in
 * another script are no digit, so misses are kept too. At most
 * {@link MAX_KNOWN_CHARACTERS}, so an answer cannot grow it without end.
 */
const digitValues = new Map<string, string | null>();

const MAX_KNOWN_CHARACTERS = 8192;

/**
 * The ASCII digit a decimal digit of another script stands for, or `null`
 * when `ch` is none. Unicode keeps decimal digits in contiguous runs of ten
 * from `0` to `9`, some runs adjacent (the mathematical digits), so the value
 * is the offset from the first digit of its block, modulo ten.
 */
function asciiDigit(ch: string): string | null {
  if (ch < FIRST_OTHER_DIGIT) return ch >= "0" && ch <= "9" ? ch : null;
  const known = digitValues.get(ch);
  if (known !== undefined) return known;
  const digit = DECIMAL_DIGIT.test(ch) ? digitValue(ch) : null;
  if (digitValues.size < MAX_KNOWN_CHARACTERS) digitValues.set(ch, digit);
  return digit;
}

function digitValue(ch: string): string {
  const point = ch.codePointAt(0)!;
  let first = point;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(first - 1))) first--;
  return String((point - first) % 10);
}

/** `ch` with a Cyrillic or Greek look-alike read as its Latin letter and another script's digit as ASCII. */
export function latinOf(ch: string): string {
  // Most answers are ASCII: no table or property lookup for those.
  if (ch < "\u0080") return ch;
  return HOMOGLYPHS[ch] ?? asciiDigit(ch) ?? tagCharacterText(ch) ??
    enclosedLetter(ch) ?? ch;
}

/**
 * Latin letters written with a stroke or a bar (`ø`, `ł`, `đ`, `ħ`), each to
 * the letter under it, in its case. Unicode gives them no decomposition, so
 * taking the marks off a letter's NFD (as the fold does for accents) leaves
 * them whole; without this table one of them in a marker hid it.
 */
export const STROKED_LETTERS: Readonly<Record<string, string>> = {
  "\u00f8": "o", // ø
  "\u00d8": "O", // Ø
  "\u0142": "l", // ł
  "\u0141": "L", // Ł
  "\u019a": "l", // ƚ
  "\u0111": "d", // đ
  "\u0110": "D", // Đ
  "\u0127": "h", // ħ
  "\u0126": "H", // Ħ
  "\u0167": "t", // ŧ
  "\u0166": "T", // Ŧ
  "\u0180": "b", // ƀ
  "\u0243": "B", // Ƀ
  "\u0268": "i", // ɨ
  "\u0197": "I", // Ɨ
  "\u01b6": "z", // ƶ
  "\u01b5": "Z", // Ƶ
  "\u023c": "c", // ȼ
  "\u023b": "C", // Ȼ
  "\u0247": "e", // ɇ
  "\u0246": "E", // Ɇ
  "\u0249": "j", // ɉ
  "\u0248": "J", // Ɉ
  "\u024d": "r", // ɍ
  "\u024c": "R", // Ɍ
  "\u024f": "y", // ɏ
  "\u024e": "Y", // Ɏ
  "\u01e5": "g", // ǥ
  "\u01e4": "G", // Ǥ
  "\ua741": "k", // ꝁ
  "\ua740": "K", // Ꝁ
  "\ua751": "p", // ꝑ
  "\ua750": "P", // Ꝑ
  "\ua757": "q", // ꝗ
  "\ua756": "Q", // Ꝗ
};

/**
 * Blocks of enclosed Latin letters, `A` to `Z` in order, that NFKC leaves as
 * they are (the plain circled and squared ones it makes ASCII): negative
 * circled `🅐`, negative squared `🅰` and the regional indicators `🇦`, as
 * "fancy text" generators and flag-letter spellings write them.
 */
const ENCLOSED_LETTER_BLOCKS = [0x1f150, 0x1f170, 0x1f1e6] as const;

/**
 * The capital Latin letter an enclosed or regional-indicator letter of
 * {@link ENCLOSED_LETTER_BLOCKS} stands for, or `null`.
 */
export function enclosedLetter(ch: string): string | null {
  if (ch.length !== 2) return null;
  const point = ch.codePointAt(0)!;
  for (const first of ENCLOSED_LETTER_BLOCKS) {
    if (point >= first && point < first + 26) {
      return String.fromCharCode(0x41 + point - first);
    }
  }
  return null;
}

/**
 * The ASCII character a Unicode tag character stands for (U+E0020 to
 * U+E007E, each U+E0000 above its ASCII character), or `null`. They render
 * as nothing, but a model reads them as the text they spell ("ASCII
 * smuggling"), so a marker written in them is retrievable.
 */
export function tagCharacterText(ch: string): string | null {
  const point = ch.codePointAt(0)!;
  return point >= 0xe0020 && point <= 0xe007e && ch.length === 2
    ? String.fromCharCode(point - 0xe0000)
    : null;
}
