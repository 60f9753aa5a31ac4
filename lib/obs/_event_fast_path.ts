/**
 * The event schema's rules written out by hand for the events it accepts,
 * because ingest validates every event and valibot's general machinery
 * costs several times these checks. It only ever accepts: anything it does
 * not recognise at once (an unknown or `__proto__` key, a key present with
 * `undefined`, a value of another type, an object that is not plain) returns
 * `null`, and the caller asks `EventInputSchema`, which decides and words
 * the refusal. What it returns equals valibot's output, and its nested
 * objects (which are stored) have valibot's key order; tests compare the
 * two on every case they hold. Private to `lib/obs/`.
 *
 * Fields are read by name rather than by computed key: V8 handles the
 * events of one writer, which share a shape, much faster that way.
 *
 * @module
 */

import {
  attributeValueFits,
  EARLIEST_EVENT_TIME,
  EVENT_STATUSES,
  EventInputSchema,
  isAllowedAttributeKey,
  isRealDateTime,
  LATEST_EVENT_TIME,
  LIMITS,
  OUTCOME_STATUSES,
  RESOURCE_ROLES,
  SELECTION_REASONS,
  STORES,
  TOKEN,
  UNSAFE_ID_CHAR,
  type ValidEventInput,
} from "./model.ts";

// deno-lint-ignore no-explicit-any
type Plain = Record<string, any>;

const keySet = (keys: readonly string[]): ReadonlySet<string> => new Set(keys);
const EVENT_KEYS = keySet(Object.keys(EventInputSchema.pipe[0].entries));
const REF_KEYS = keySet(["type", "id", "version", "role"]);
const CANDIDATE_KEYS = keySet(["ref", "rank", "score", "selected", "reason"]);
const SELECTION_KEYS = keySet(["strategy", "candidates", "omitted_candidates"]);
const OUTCOME_KEYS = keySet(["verified", "status", "code", "artifact"]);

const STATUS_SET = keySet(EVENT_STATUSES);
const STORE_SET = keySet(STORES);
const ROLE_SET = keySet(RESOURCE_ROLES);
const REASON_SET = keySet(SELECTION_REASONS);
const OUTCOME_STATUS_SET = keySet(OUTCOME_STATUSES);

/** A plain object (the prototype of `{}` or none) that is not an array. */
function isPlain(value: unknown): value is Plain {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return false;
  }
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * How many enumerable keys `value` has, or -1 when one is not in `allowed`.
 * A key present with `undefined` is counted here but not as a defined
 * field, so the caller's count comparison sends it to the schema.
 */
function keyCount(value: Plain, allowed: ReadonlySet<string>): number {
  let count = 0;
  for (const key in value) {
    if (!allowed.has(key)) return -1;
    count++;
  }
  return count;
}

const defined = (value: unknown) => value !== undefined ? 1 : 0;

function isId(value: unknown, max: number = LIMITS.idChars): boolean {
  return typeof value === "string" && value.length >= 1 &&
    value.length <= max && value.isWellFormed() && !UNSAFE_ID_CHAR.test(value);
}

const isOptionalId = (value: unknown) =>
  value === undefined || value === null || isId(value);
const isToken = (value: unknown) =>
  typeof value === "string" && TOKEN.test(value);
const isOptionalToken = (value: unknown, nullable: boolean) =>
  value === undefined || (nullable && value === null) || isToken(value);
const isNumber = (value: unknown): value is number =>
  typeof value === "number" && !Number.isNaN(value);
const isWholeCount = (value: unknown) =>
  isNumber(value) && Number.isSafeInteger(value) && value >= 0;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Digits of `text` from `start` to `end` as a number, or -1 when one is not a digit. */
function digits(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Epoch ms of a time in `toISOString()` form (`2026-09-01T12:00:00.000Z`)
 * naming a real date and time, else `NaN` (other forms take the general
 * check).
 */
function canonicalTime(text: string): number {
  if (
    text.length !== 24 || text[4] !== "-" || text[7] !== "-" ||
    text[10] !== "T" || text[13] !== ":" || text[16] !== ":" ||
    text[19] !== "." || text[23] !== "Z"
  ) return NaN;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const ms = digits(text, 20, 23);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1] ?? 0;
  // Years before 1000 take the general path (Date.UTC maps 0-99 to 19xx).
  const real = year >= 1000 && ms >= 0 && day >= 1 && day <= days &&
    hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 &&
    second <= 59;
  return real ? Date.UTC(year, month - 1, day, hour, minute, second, ms) : NaN;
}

/** Epoch ms of a valid event time, `null` when absent or null, `NaN` when invalid. */
function eventTime(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") return NaN;
  let ms = canonicalTime(value);
  if (Number.isNaN(ms)) ms = isRealDateTime(value) ? Date.parse(value) : NaN;
  return ms >= EARLIEST_EVENT_TIME && ms < LATEST_EVENT_TIME ? ms : NaN;
}

function resourceRef(value: unknown): Plain | null {
  if (!isPlain(value)) return null;
  const { type, id, version, role } = value;
  if (keyCount(value, REF_KEYS) !== 2 + defined(version) + defined(role)) {
    return null;
  }
  if (!isToken(type) || !isId(id)) return null;
  if (version !== undefined && !isId(version, 128)) return null;
  if (role !== undefined && !ROLE_SET.has(role)) return null;
  const out: Plain = { type, id };
  if (version !== undefined) out.version = version;
  if (role !== undefined) out.role = role;
  return out;
}

function list(
  value: unknown,
  max: number,
  item: (entry: unknown) => Plain | null,
): Plain[] | null {
  if (!Array.isArray(value) || value.length > max) return null;
  const out: Plain[] = [];
  for (let i = 0; i < value.length; i++) {
    const parsed = item(value[i]);
    if (parsed === null) return null;
    out.push(parsed);
  }
  return out;
}

function candidate(value: unknown): Plain | null {
  if (!isPlain(value)) return null;
  const { rank, score, selected, reason } = value;
  const count = 3 + defined(rank) + defined(score);
  if (keyCount(value, CANDIDATE_KEYS) !== count) return null;
  const ref = resourceRef(value.ref);
  if (ref === null || typeof selected !== "boolean") return null;
  if (!REASON_SET.has(reason)) return null;
  if (rank !== undefined && rank !== null && !isWholeCount(rank)) return null;
  if (
    score !== undefined && score !== null &&
    !(isNumber(score) && Number.isFinite(score))
  ) return null;
  const out: Plain = { ref };
  if (rank !== undefined) out.rank = rank;
  if (score !== undefined) out.score = score;
  out.selected = selected;
  out.reason = reason;
  return out;
}

function selection(value: unknown): Plain | null {
  if (!isPlain(value)) return null;
  const { strategy, omitted_candidates: omitted } = value;
  const count = 1 + defined(strategy) + defined(omitted);
  if (keyCount(value, SELECTION_KEYS) !== count) return null;
  if (!isOptionalToken(strategy, false)) return null;
  if (omitted !== undefined && !isWholeCount(omitted)) return null;
  const candidates = list(value.candidates, LIMITS.candidates, candidate);
  if (candidates === null || candidates.length < 1) return null;
  const out: Plain = {};
  if (strategy !== undefined) out.strategy = strategy;
  out.candidates = candidates;
  if (omitted !== undefined) out.omitted_candidates = omitted;
  return out;
}

function outcome(value: unknown): Plain | null {
  if (!isPlain(value)) return null;
  const { verified, status, code, artifact } = value;
  const count = 2 + defined(code) + defined(artifact);
  if (keyCount(value, OUTCOME_KEYS) !== count) return null;
  if (typeof verified !== "boolean" || !OUTCOME_STATUS_SET.has(status)) {
    return null;
  }
  if (!isOptionalToken(code, false)) return null;
  const ref = artifact === undefined ? undefined : resourceRef(artifact);
  if (ref === null) return null;
  const out: Plain = { verified, status };
  if (code !== undefined) out.code = code;
  if (ref !== undefined) out.artifact = ref;
  return out;
}

function isAttributeValue(value: unknown): boolean {
  if (typeof value === "string") {
    return value.length <= LIMITS.attributeValueChars && value.isWellFormed();
  }
  return value === null || typeof value === "boolean" ||
    (isNumber(value) && Number.isFinite(value));
}

function attributes(value: unknown): Plain | null {
  if (!isPlain(value)) return null;
  const out: Plain = {};
  let count = 0;
  for (const key in value) {
    // Keys valibot's record would skip or refuse (inherited, `__proto__`,
    // not allowlisted) go to valibot.
    if (!Object.hasOwn(value, key) || !isAllowedAttributeKey(key)) return null;
    const item = value[key];
    if (!isAttributeValue(item) || !attributeValueFits(key, item)) return null;
    if (++count > LIMITS.attributes) return null;
    out[key] = item;
  }
  return out;
}

/** Ids, tokens, picklists, flags and the preview. */
function scalarsValid(input: Plain): boolean {
  return isId(input.event_id) && input.event_id !== "." &&
    input.event_id !== ".." && isId(input.application_id) &&
    isOptionalId(input.user_id) && isOptionalId(input.agent_id) &&
    isOptionalId(input.memory_id) && isOptionalId(input.thread_id) &&
    isOptionalId(input.root_trace_id) && isOptionalId(input.turn_id) &&
    isOptionalId(input.run_id) && isOptionalId(input.parent_event_id) &&
    isOptionalId(input.tool) && isToken(input.kind) &&
    isOptionalToken(input.stage, true) &&
    isOptionalToken(input.coverage_profile, true) &&
    (input.status === undefined || STATUS_SET.has(input.status)) &&
    (input.store === undefined || STORE_SET.has(input.store)) &&
    (input.success === undefined || input.success === null ||
      typeof input.success === "boolean") &&
    (input.preview === undefined || input.preview === null ||
      (typeof input.preview === "string" &&
        input.preview.length <= LIMITS.previewInputChars &&
        input.preview.isWellFormed()));
}

/** Both times valid and in order, and an agent or a memory named (the schema's checks). */
function timesAndScopeValid(input: Plain): boolean {
  const started = eventTime(input.started_at);
  const ended = eventTime(input.ended_at);
  if (Number.isNaN(started) || Number.isNaN(ended)) return false;
  if (started !== null && ended !== null && ended < started) return false;
  return Boolean(input.agent_id) || Boolean(input.memory_id);
}

/** Number of event fields present with a value other than `undefined`. */
function definedFields(input: Plain): number {
  let n = 0;
  for (const value of Object.values(input)) n += defined(value);
  return n;
}

/**
 * The valibot output for `input` when the fast path recognises it as a
 * valid event; `null` otherwise (then only the schema may decide).
 */
export function fastValidEvent(input: unknown): ValidEventInput | null {
  if (!isPlain(input)) return null;
  const count = keyCount(input, EVENT_KEYS);
  if (count < 0 || count !== definedFields(input)) return null;
  if (!scalarsValid(input) || !timesAndScopeValid(input)) return null;
  const out: Plain = { ...input };
  const { resources, attributes: attrs, selection: sel, outcome: out_ } = input;
  if (resources !== undefined) {
    out.resources = list(resources, LIMITS.resources, resourceRef);
    if (out.resources === null) return null;
  }
  if (attrs !== undefined) {
    out.attributes = attributes(attrs);
    if (out.attributes === null) return null;
  }
  if (sel !== undefined && sel !== null) {
    out.selection = selection(sel);
    if (out.selection === null) return null;
  }
  if (out_ !== undefined && out_ !== null) {
    out.outcome = outcome(out_);
    if (out.outcome === null) return null;
  }
  return out as ValidEventInput;
}
