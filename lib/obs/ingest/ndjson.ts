/**
 * NDJSON batches: one event per line, blank lines ignored, any bad line
 * refuses the batch. Bounded while reading: lines are counted before any is
 * parsed, so a body of millions of lines is refused at the event bound after
 * a scan of the text and nothing else; lines are parsed one at a time with
 * the strict JSON parser (duplicate keys and integers a double would round
 * are refused) under one value budget for the whole body; refused lines are
 * listed up to {@link MAX_REPORTED_ISSUES} and counted beyond. When some
 * lines are not JSON, the others are validated too, so one answer names
 * every bad line.
 *
 * @module
 */

import {
  type JsonBudget,
  jsonBudget,
  parseStrictJson,
  StrictJsonError,
} from "../../json/strict_json.ts";
import {
  BatchTooLargeError,
  MAX_BATCH_EVENTS,
  MAX_BATCH_JSON_VALUES,
  MAX_REPORTED_ISSUES,
} from "../batch.ts";
import { type EventIssue, normalizeEvent } from "../normalize.ts";
import { IngestBatchError } from "./ingest.ts";
import { runAtOnce, runInTurns } from "./_turns.ts";

/** The events of an NDJSON text and the 1-based line each came from. */
export interface NdjsonEvents {
  events: unknown[];
  /** `lines[i]` is the source line of `events[i]`; pass it to ingest as `lines`. */
  lines: number[];
  /** Source lines of export lines that named a preview, left out (an export holds its size, never its text); pass it to ingest as `previewlessLines`. */
  previewlessLines: number[];
}

/** Bounds for {@link parseNdjsonEvents}. */
export interface NdjsonOptions {
  /** Most non-blank lines (default {@link MAX_BATCH_EVENTS}). */
  maxEvents?: number;
  /** Most JSON values in all lines together (default {@link MAX_BATCH_JSON_VALUES}). */
  maxValues?: number;
  /**
   * Read lines of an events export (they carry `seq` and `received_at`)
   * without the fields a read adds, so an export can be ingested again.
   */
  exportLines?: boolean;
}

/**
 * Parses NDJSON text; throws {@link BatchTooLargeError} past a bound and
 * {@link IngestBatchError} naming every bad line (JSON or event rules).
 */
export function parseNdjsonEvents(
  text: string,
  options: NdjsonOptions = {},
): NdjsonEvents {
  return runAtOnce(ndjsonSteps(text, options));
}

/**
 * {@link parseNdjsonEvents}, letting the event loop turn between slices of
 * lines (a server parsing a large body keeps answering other requests).
 */
export function readNdjsonEvents(
  text: string,
  options: NdjsonOptions = {},
): Promise<NdjsonEvents> {
  return runInTurns(ndjsonSteps(text, options));
}

/** Lines parsed between two pauses of {@link ndjsonSteps}. */
const LINES_PER_STEP = 64;

function* ndjsonSteps(
  text: string,
  options: NdjsonOptions,
): Generator<void, NdjsonEvents> {
  const maxEvents = options.maxEvents ?? MAX_BATCH_EVENTS;
  requireLineCount(text, maxEvents);
  const budget = jsonBudget(options.maxValues ?? MAX_BATCH_JSON_VALUES);
  const events: unknown[] = [];
  const lines: number[] = [];
  const previewless: number[] = [];
  /** Position of each event among all items (non-blank lines). */
  const items: number[] = [];
  const refused = new IssueList();
  let item = 0;
  for (const { source, line } of nonBlankLines(text)) {
    const value = parseLine(source, line, item, budget);
    if ("issue" in value) refused.add(value.issue);
    else {
      const event = options.exportLines
        ? withoutReadFields(value.event)
        : value.event;
      if (event !== value.event && namesPreview(value.event)) {
        previewless.push(line);
      }
      events.push(event);
      lines.push(line);
      items.push(item);
    }
    if (++item % LINES_PER_STEP === 0) yield;
  }
  if (refused.count > 0) {
    // Name the event-rule problems of the other lines in the same answer.
    for (let i = 0; i < events.length; i++) {
      const result = normalizeEvent(events[i], items[i]!);
      if (!("fingerprint" in result)) {
        refused.add({ ...result, line: lines[i]! });
      }
      if ((i + 1) % LINES_PER_STEP === 0) yield;
    }
    throw new IngestBatchError(refused.sorted(), item, refused.count);
  }
  return { events, lines, previewlessLines: previewless };
}

/** Refuses the text once it holds more than `max` non-blank lines, before parsing any. */
function requireLineCount(text: string, max: number): void {
  let count = 0;
  for (let start = 0; start < text.length;) {
    const end = lineEnd(text, start);
    if (!isBlank(text, start, end) && ++count > max) {
      throw new BatchTooLargeError(
        `Cannot ingest the batch: more than ${max} events (NDJSON lines); send smaller batches`,
        max,
      );
    }
    start = end + 1;
  }
}

function lineEnd(text: string, start: number): number {
  const end = text.indexOf("\n", start);
  return end === -1 ? text.length : end;
}

/** True when the line holds only JSON whitespace (a CR of CRLF included). */
function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/** Each non-blank line and its 1-based number. */
function* nonBlankLines(
  text: string,
): Generator<{ source: string; line: number }> {
  let line = 0;
  for (let start = 0; start < text.length;) {
    const end = lineEnd(text, start);
    line++;
    if (!isBlank(text, start, end)) {
      yield { source: text.slice(start, end), line };
    }
    start = end + 1;
  }
}

function parseLine(
  source: string,
  line: number,
  index: number,
  budget: JsonBudget,
): { event: object } | { issue: EventIssue } {
  let value: unknown;
  try {
    value = parseStrictJson(source, { budget, exactIntegers: true });
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    if (error.reason === "too_many_values") {
      throw new BatchTooLargeError(
        `Cannot ingest the batch: the body holds more than ${budget.limit} JSON values; send smaller batches`,
        budget.limit,
      );
    }
    // The detail never quotes the line, which may hold content.
    const message = byteOrderMarkProblem(source, error) ??
      `is not valid JSON (column ${error.column}: ${error.detail})`;
    return { issue: { index, line, field: "(root)", message } };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    // A JSON array is what the JSON API takes: say what NDJSON is instead.
    const message = Array.isArray(value)
      ? "must be a JSON object; NDJSON holds one event object per line, not an array"
      : "must be a JSON object";
    return { issue: { index, line, field: "(root)", message } };
  }
  return { event: value };
}

/**
 * A byte-order mark where JSON refused a character. Decoding drops one at the
 * very start of the text only; one further on usually comes from files saved
 * with a mark and joined (`cat a.ndjson b.ndjson`), and "unexpected character"
 * names nothing a reader can see.
 */
function byteOrderMarkProblem(
  source: string,
  error: StrictJsonError,
): string | undefined {
  const refusedCharacter = error.reason === "syntax" ||
    error.reason === "trailing_data";
  if (!refusedCharacter || source.charCodeAt(error.offset) !== 0xfeff) {
    return undefined;
  }
  if (source.slice(0, error.offset).trim() !== "") {
    return `is not valid JSON (column ${error.column}: a byte-order mark, U+FEFF, outside a string); remove it`;
  }
  return "starts with a byte-order mark (U+FEFF); only the first line of a file may start with one, so remove it (files joined with cat keep each part's mark; save the parts as UTF-8 without BOM)";
}

/** Fields a read adds to an event; an export line carries all of them. */
const READ_FIELDS = ["seq", "ts", "received_at", "preview"] as const;

/**
 * An export line without {@link READ_FIELDS}: the index assigns them again,
 * and `preview` there is a size, never the content. A line missing `seq` or
 * `received_at` is not an export and is left to be refused as sent.
 */
function withoutReadFields(event: object): object {
  if (!Object.hasOwn(event, "seq") || !Object.hasOwn(event, "received_at")) {
    return event;
  }
  const copy: Record<string, unknown> = { ...event };
  for (const field of READ_FIELDS) delete copy[field];
  return copy;
}

/** Whether an export line says its event had a preview (`preview` not null). */
function namesPreview(event: object): boolean {
  const preview = (event as { preview?: unknown }).preview;
  return preview !== undefined && preview !== null;
}

/** Refused lines: the first {@link MAX_REPORTED_ISSUES} by position kept, all counted. */
class IssueList {
  #issues: EventIssue[] = [];
  /** Lines refused in all. */
  count = 0;

  add(issue: EventIssue): void {
    this.count++;
    this.#issues.push(issue);
    if (this.#issues.length > 2 * MAX_REPORTED_ISSUES) this.#trim();
  }

  /** The kept issues in line order. */
  sorted(): EventIssue[] {
    this.#trim();
    return this.#issues;
  }

  #trim(): void {
    this.#issues.sort((a, b) => a.index - b.index);
    this.#issues.length = Math.min(this.#issues.length, MAX_REPORTED_ISSUES);
  }
}
