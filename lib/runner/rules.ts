/**
 * The rules revision and what it covers: every finding code the verdict rules
 * (`findings.ts`, and the engine's own checkpoint note) can emit, with the
 * severities and subjects each may carry, the assertion families those
 * subjects fall in (`families.ts`), and how evidence is read (how a marker is
 * recognised, what an interrupted window decides). Regressions and
 * comparisons pin the revision, so a change to any of these must come with a
 * new revision; the pinned digest below makes a test fail when it does not.
 *
 * Revision 2: the marker counts as seen under a normalization that survives
 * rendering (it was a byte-exact match), and an interrupted window is
 * INCONCLUSIVE whatever its last sample showed (its last sample was judged as
 * the final one).
 *
 * Revision 3: a transient residual needs a later sample that read 0; data
 * that could no longer be read after its last non-zero reading (the adapter
 * died mid-window) is no longer called transient.
 *
 * Revision 4: the marker is looked for in the whole /query answer (every
 * field and key at any depth, not only `text`), and the deleted canary's
 * marker in the control query's answer is retrieval evidence too; at
 * cleanup, either marker in either namespace's answer keeps it incomplete.
 * A count the test inventory answers beside the contract's four (a store
 * the verdict cannot see) is a note, `unread_inventory_count`.
 *
 * Revision 5: data that went away is a transient residual only when the
 * clean reads after its last sighting outnumber the longest run of clean
 * reads it came back after (else INCONCLUSIVE, `intermittent_residual`), and
 * when the first clean read after it started no later than one sample
 * interval after the window's end (else INCONCLUSIVE,
 * `window_end_unobserved`: the samples fell behind their schedule).
 *
 * Revision 6: the marker is also read in text an answer's strings ship
 * encoded: base64 inside a longer string (a data URI, a run after a name),
 * hex, percent-encoding, and JSON or JavaScript string escapes, each decoded
 * once from the string as written.
 *
 * Revision 7: the fold reads Cyrillic and Greek look-alikes as the Latin
 * letters they pass for (a listed table, `homoglyphs`) and every Unicode
 * decimal digit as its ASCII digit; hex is also read as bytes with one
 * separator between them (`de ad be ef`, `de:ad:be:ef`), wrapped over lines
 * as a dump is, and hex bytes are read one UTF-8 sequence at a time, a byte
 * that is not text (a word or a number beside the run, `It will be 74 72…`,
 * `Score 95 74 72…`) a break rather than the end of the reading; a base64 run
 * may write `/` as `\/` (JSON serialised twice).
 *
 * Revision 8: hex is also read from a dump with an offset column, byte
 * groups and a text column, as `xxd`, `hexdump -C` and `od -t x1` print one
 * (a line's bytes are told from its text column by the offset of the line
 * after it); a rendered marker written in compatibility forms other than
 * full-width ones (mathematical `𝟕` or `𝐭`, circled `①`) names them as the
 * rendering trait `compatibility_forms`, where it named nothing. The string
 * values of one object adjacent in its key order are joined as an array's
 * adjacent strings are (`split_items`): a marker split across an object's
 * fields (`{"chunk_0": …, "chunk_1": …}`) was unseen.
 * Also a complete control inventory after the deletion that counts
 * more source or vector records than the baseline's is INCONCLUSIVE,
 * `control_grew`: only the application writes records to the run's
 * control namespace, so the
 * deletion may have moved or copied the records there instead of erasing
 * them. Samples keep the control inventory's counts (`control_inventory`).
 *
 * Revision 9: hex is also read from dumps with decimal offsets (`od -A d`),
 * from dumps of 2-, 4- and 8-byte words in little-endian byte order
 * (`od -x`, `od -t x4`, `od -t x8`, `hexdump` without `-C`, `hexdump -x`,
 * `xxd -e`: a dump whose groups are all words of one width is read as
 * written and with each word's bytes reversed), from runs of such words
 * without offsets (`od -An -x`), read both ways, and from every run of hex
 * digits paired from its second digit as well as from its first (glued
 * to a word at a hex letter on either side, cut, or on a line below other
 * hex); revision 8 read a run from its first digit alone and only
 * when of even length.
 *
 * Revision 10: every named character reference of HTML's list is decoded
 * (`&aopf;` for `𝕒`, `&alpha;`, `&acy;`, `&sup2;`), the legacy names also
 * without their `;` (`&sup2`), and numeric ones with any number of leading
 * zeros, where revision 9 knew 21 names and dropped the rest; and a markup tag ends at its first `>` outside a value quoted
 * after `=` (`<span title="a>b">`), where revision 9 ended it at the first
 * `>` and left the rest of the tag as text between the marker's characters.
 * HTML comments are removed as tags are (`tra<!-- x -->ce`); Unicode tag
 * characters (U+E0020 to U+E007E, which render as nothing and a model reads
 * as ASCII) read as the ASCII they stand for (rendering `tag_characters`);
 * and base64 is read one UTF-8 sequence at a time as hex is, where revision
 * 9 decoded a run only when all its bytes were valid UTF-8 (two bytes such
 * as `FF FE` before the text hid it).
 * The look-alike table adds Latin small capitals (`ᴀ ʙ ᴄ …`, `ǫ` for q),
 * `ɑ` and `ɡ`. An answer whose search takes longer than its request's
 * timeout (after an interrupt, than the bound) is not read, a request error,
 * where revision 9 searched every answer to its end however long it took.
 *
 * Revision 11: an answer the transport changed by replacing the run's
 * bearer token, in which the marker was not found, is not read (a request
 * error), and two keys the replacement makes equal are both kept.
 *
 * Revision 12: a letter written with accents or other marks reads as its
 * base letter (`á` as `a`), where NFKC composed it into one character the
 * fold dropped, so one accented letter hid the marker, and so does a Latin
 * letter written with a stroke or a bar (`ø`, `đ`, a listed table,
 * `stroked_letters`), which has no decomposition (rendering `diacritics`,
 * which a mark on its own, as NFD text writes it, now names too, where it
 * counted as a separator; a variation selector is `invisible_characters`); negative circled, negative squared
 * and regional-indicator letters (`🅐`, `🅰`, `🇦`), which NFKC leaves, read
 * as the Latin letters they enclose (rendering `enclosed_letters`).
 *
 * @module
 */

import { digestOf } from "../canonical_json.ts";
import { STORES } from "../contract/protocol.ts";
import { INTERRUPTED_CLEANUP_LIMIT_MS } from "./_cleanup.ts";
import { RECORD_STORES } from "./control_state.ts";
import { ASSERTION_FAMILIES, familiesOf } from "./families.ts";
import {
  HOMOGLYPHS,
  MARKER_ALPHABET,
  MARKER_PREFIX,
  MARKER_RANDOM_LENGTH,
  RENDERING_TRAITS,
  STROKED_LETTERS,
} from "./marker/mod.ts";
import type { FindingSeverity } from "./report.ts";

/** Revision of the verdict rules, finding codes and families that assertions refer to. */
export const ASSERTION_RULES_REVISION = "trace-assertions/12" as const;

/** How the rules read evidence, beyond the codes they emit. */
export const EVIDENCE_RULES = {
  marker: {
    prefix: MARKER_PREFIX,
    alphabet: MARKER_ALPHABET,
    random_length: MARKER_RANDOM_LENGTH,
    match:
      "exact substring, else the random part in the answer folded: &amp; unwrapped, character references decoded (numeric ones with any number of leading zeros, and every named one of HTML's list, the legacy names also without their ;, a &name; of no list dropped), NFKC, a letter NFKC writes with marks (accents) read as its base letter, a Latin letter written with a stroke or a bar in stroked_letters read as its letter, and a mark on its own dropped, each Cyrillic, Greek or Latin small-capital look-alike in homoglyphs read as its Latin letter or digit, each negative circled, negative squared or regional-indicator letter (U+1F150 to U+1F169, U+1F170 to U+1F189, U+1F1E6 to U+1F1FF) read as its Latin letter, each Unicode decimal digit (\\p{Nd}) read as its ASCII digit, each Unicode tag character (U+E0020 to U+E007E) read as its ASCII character, lower case, o as 0, i and l as 1, only [0-9a-z] kept; each string also with markup tags and HTML comments removed (a tag ends at its first > outside a value quoted right after an attribute's =, a comment at its first --> or --!>, <!--> and <!---> being empty comments, each of at most 256 characters); then each decoding of the string as written, searched the same way and never decoded again: base64 (the whole string, line breaks aside, when it decodes to text, else each maximal run of the standard or the URL-safe alphabet from its first character, a line break continuing a run only after a whole number of 4-character groups; in the whole string and in a run of the standard alphabet \\/ is read as /), hex (each maximal run of hex digits, either case, read twice, its digits paired from its first digit and from its second, a line break continuing a reading only after whole bytes, a byte whose two digits a line break splits unread and the reading going on from the second digit of the next line, a digit left over at the run's end unread; and each run of two-digit bytes, either case, with one separator between bytes, the same space, colon or dash throughout, or a line break with that separator on either side or neither, starting at a byte no letter or digit precedes, each byte followed by no hex digit, its separators and line breaks not counted in its length, only when its lines hold at least 5 bytes on average; and each run of words of one width, 4, 8 or 16 hex digits, with one space between words, or a line break with a space on either side or neither, starting at a word no letter or digit precedes, each word followed by no hex digit, its separators and line breaks not counted in its length, however few words a line holds, read both as written and with each word's bytes reversed; and each dump with an offset column as xxd, hexdump -C, od -t x1, od -x, od -t x4, od -t x8, hexdump, hexdump -x and xxd -e print one: two or more consecutive lines, each an offset of 4 to 12 hex digits (a colon after it allowed) then groups of whole bytes (two hex digits each) each after a run of spaces, whose offsets step, all in hex, all in octal or all in decimal (the widest step the groups hold where the bases differ, then only the bases that read it), by the bytes of the first groups of the line before, those groups being that line's bytes, the last line's bytes its groups up to its first gap wider than one space at a place the lines before have no gap as wide, and no more than the widest line before, a shorter last word of a dump of words of one width, after one space or after the spaces of its missing digits, ending them, a dump whose groups are all words of one width (4, 8 or 16 digits) read both as written and with each word's bytes reversed; the bytes of any kind of run and of a dump read one UTF-8 sequence at a time, each byte that starts no valid sequence read as a space), each only when at least as long as the encoding of 26 characters, base64's bytes read one UTF-8 sequence at a time the same way; percent-encoding (%XX escapes decoded as UTF-8, escapes that are not valid UTF-8 left as written, + as a space); JSON and JavaScript string escapes (\\uXXXX, \\u{X}, \\xXX, and a backslash before a quote, a backslash, / or b f n r t v)",
    searched:
      "every string of the /query answer, values and keys at any depth, text first, and the adjacent strings of one array joined, and the string values of one object adjacent in its key order (the answer's order, keys that are array indexes first in numeric order) joined, keys never joined; after the deletion the test marker in the control query's answer counts too, and either namespace's /inventory answer is searched the same way (the control's own marker there does not count); at cleanup either marker in either namespace's answers",
    homoglyphs: HOMOGLYPHS,
    stroked_letters: STROKED_LETTERS,
    forms: ["exact", "rendered"],
    rendering_traits: [...RENDERING_TRAITS],
    rendered_counts_as_seen: true,
  },
  unread_answer:
    "an answer whose search for a marker takes longer than its request's timeout_seconds (after an interrupt, longer than the bound), or whose search thread fails, is not read: a request error of that operation, the marker there unknown; so is an answer that echoed the run's bearer token (8 characters or more), replaced before the search, in which the marker was not found: the replacement may have cut it, and two keys it made equal are both kept",
  interrupted_window:
    "INCONCLUSIVE with state interrupted; residuals are not judged without a final sample",
  transient_residual:
    "data above 0 during the window is transient only when a later sample read it 0 and the final sample does not read it above 0; data that could no longer be read after its last non-zero reading is not transient",
  intermittent_residual:
    "data that came back after a clean read is transient only when the clean reads after its last sighting outnumber the longest run of clean reads it came back after; otherwise INCONCLUSIVE",
  window_end_unobserved:
    "data last seen in a sample begun inside the window whose next clean read began more than one sample interval after the window's end is INCONCLUSIVE: the window's end was not read; sightings are timed by when their sample began",
  control_growth: {
    stores: RECORD_STORES,
    rule:
      "a complete control inventory after the deletion that counts more in one of these stores than the baseline's complete control inventory is INCONCLUSIVE; the cache is not compared, since the runner's own control queries fill it",
  },
  interrupted_cleanup_limit_seconds: INTERRUPTED_CLEANUP_LIMIT_MS / 1000,
} as const;

/**
 * Digest of {@link rulesCatalogue} under {@link ASSERTION_RULES_REVISION}.
 * Changing a code, a severity, a subject or a family changes it: bump the
 * revision, then pin the new digest here.
 */
export const ASSERTION_RULES_DIGEST =
  "sha256:dbf99bfa1e2ae5c2af833f20d222a0fddc9d0da849d5709fe3ef131dc3a4fe15" as const;

/** What one finding code may carry. */
export interface FindingRule {
  severities: readonly FindingSeverity[];
  subjects: readonly string[];
}

/** Every finding code a run can produce, with its severities and subjects. */
export const FINDING_CODES = {
  baseline_failed: { severities: ["inconclusive"], subjects: ["baseline"] },
  delete_unacknowledged: {
    severities: ["inconclusive"],
    subjects: ["deletion"],
  },
  marker_retrievable: { severities: ["fail"], subjects: ["retrieval"] },
  residual_store: { severities: ["fail"], subjects: STORES },
  transient_residual: {
    severities: ["transient"],
    subjects: ["retrieval", ...STORES],
  },
  intermittent_residual: {
    severities: ["inconclusive"],
    subjects: ["retrieval", ...STORES],
  },
  window_end_unobserved: {
    severities: ["inconclusive"],
    subjects: ["retrieval", ...STORES],
  },
  request_error: { severities: ["inconclusive"], subjects: ["observation"] },
  inventory_incomplete: {
    severities: ["inconclusive"],
    subjects: ["inventory"],
  },
  control_inventory_incomplete: {
    severities: ["inconclusive"],
    subjects: ["control"],
  },
  control_lost: { severities: ["inconclusive"], subjects: ["control"] },
  control_grew: { severities: ["inconclusive"], subjects: ["control"] },
  interrupted: { severities: ["inconclusive"], subjects: ["window"] },
  cleanup_incomplete: {
    severities: ["inconclusive", "note"],
    subjects: ["cleanup"],
  },
  unread_inventory_count: { severities: ["note"], subjects: ["inventory"] },
  erased: { severities: ["note"], subjects: ["deletion"] },
  checkpoint_unwritten: { severities: ["note"], subjects: ["checkpoint"] },
} as const satisfies Record<string, FindingRule>;

/** One of the keys of {@link FINDING_CODES}. */
export type FindingCode = keyof typeof FINDING_CODES;

/** The codes, severities, subjects and families the revision covers, in a stable order. */
export function rulesCatalogue(): {
  codes: { code: string; severities: string[]; subjects: string[] }[];
  families: string[];
  subject_families: Record<string, string[]>;
  evidence: typeof EVIDENCE_RULES;
} {
  const codes = Object.entries(FINDING_CODES as Record<string, FindingRule>)
    .map(([code, rule]) => ({
      code,
      severities: [...rule.severities].sort(),
      subjects: [...rule.subjects].sort(),
    }))
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  const subjects = [...new Set(codes.flatMap((c) => c.subjects))].sort();
  return {
    codes,
    families: [...ASSERTION_FAMILIES],
    subject_families: Object.fromEntries(
      subjects.map((subject) => [subject, [...familiesOf(subject)]]),
    ),
    evidence: EVIDENCE_RULES,
  };
}

/** The digest of {@link rulesCatalogue} as this build computes it. */
export function rulesDigest(): string {
  return digestOf(rulesCatalogue());
}
