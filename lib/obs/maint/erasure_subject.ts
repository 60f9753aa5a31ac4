/**
 * Who is to be forgotten: an erasure subject is one application plus one
 * selector (a user, the anonymous users, a thread, a memory, or a list of
 * event ids). Subjects are identified outside the index only by a keyed
 * digest (HMAC-SHA256 with the data directory's erasure key), never by their
 * raw ids: a receipt proves which subject was erased to someone who knows the
 * subject and holds the key, and tells nobody else who it was.
 *
 * @module
 */

import { createHash, createHmac } from "node:crypto";
import * as v from "valibot";
import { canonicalJson } from "../../canonical_json.ts";
import { ConfigError } from "../../errors.ts";
import { describeIssues, objectIssueMessage } from "../../issues.ts";
import { OpaqueIdSchema } from "../model.ts";

/** Ways a subject is selected within one application. */
export const SUBJECT_KINDS = [
  "user",
  "anonymous",
  "thread",
  "memory",
  "events",
] as const;
/** One of {@link SUBJECT_KINDS}. */
export type SubjectKind = typeof SUBJECT_KINDS[number];

/** Most event ids one subject may list. */
export const MAX_SUBJECT_EVENT_IDS = 10_000;

/** A subject in canonical form: what digests and matching work on. */
export interface ErasureSubject {
  /** The tenant. */
  application_id: string;
  /** Which selector named it. */
  kind: SubjectKind;
  /**
   * The user, thread or memory id (one); the event ids (sorted, each once);
   * nothing for the anonymous users.
   */
  ids: string[];
}

/** The selectors, of which a subject gives exactly one. */
const SelectorEntries = {
  user_id: v.optional(OpaqueIdSchema),
  anonymous: v.optional(v.literal(true, "must be true")),
  thread_id: v.optional(OpaqueIdSchema),
  memory_id: v.optional(OpaqueIdSchema),
  event_ids: v.optional(v.pipe(
    v.array(OpaqueIdSchema, "must be an array of event ids"),
    v.minLength(1, "must list at least one event id"),
    v.maxLength(
      MAX_SUBJECT_EVENT_IDS,
      `must list at most ${MAX_SUBJECT_EVENT_IDS} event ids`,
    ),
  )),
};

const SELECTOR_KEYS = Object.keys(SelectorEntries) as Array<
  keyof typeof SelectorEntries
>;

const SubjectInputObject = v.strictObject(
  { application_id: OpaqueIdSchema, ...SelectorEntries },
  objectIssueMessage(
    `allowed keys: application_id, ${SELECTOR_KEYS.join(", ")}`,
  ),
);

/** The keys a subject as callers write it may hold (the schema's own). */
export const SUBJECT_INPUT_KEYS: readonly string[] = Object.keys(
  SubjectInputObject.entries,
);

/** A subject as callers write it: `application_id` and exactly one selector. */
export interface ErasureSubjectInput {
  /** The tenant. */
  application_id: string;
  /** One user. */
  user_id?: string | undefined;
  /** `true`: the anonymous users (events with no `user_id`). */
  anonymous?: true | undefined;
  /** One conversation. */
  thread_id?: string | undefined;
  /** One memory store. */
  memory_id?: string | undefined;
  /** These events (1 to 10,000 ids). */
  event_ids?: string[] | undefined;
}

const SubjectInputShape = v.pipe(
  SubjectInputObject,
  v.check(
    (input) =>
      SELECTOR_KEYS.filter((key) => input[key] !== undefined).length === 1,
    `give exactly one of ${SELECTOR_KEYS.join(", ")}`,
  ),
);
/** Schema of a subject as callers write it. */
export const ErasureSubjectInputSchema: v.GenericSchema<ErasureSubjectInput> =
  SubjectInputShape;

// The interface restates what the schema accepts, for readers of the docs;
// this line stops compiling when the two drift apart.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;
type Holds<T extends true> = T;
type _SubjectInputMatches = Holds<
  Same<ErasureSubjectInput, v.InferInput<typeof SubjectInputShape>>
>;

/** Validates a subject written by a caller and puts it in canonical form; throws `ConfigError`. */
export function parseErasureSubject(input: unknown): ErasureSubject {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ConfigError(
      "Invalid erasure subject: must be a JSON object with application_id and one selector",
    );
  }
  const parsed = v.safeParse(ErasureSubjectInputSchema, input);
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid erasure subject: ${
        describeIssues(parsed.issues)
      }; give application_id and exactly one of ${SELECTOR_KEYS.join(", ")}`,
    );
  }
  const s = parsed.output;
  const app = s.application_id;
  if (s.user_id !== undefined) return subject(app, "user", [s.user_id]);
  if (s.thread_id !== undefined) return subject(app, "thread", [s.thread_id]);
  if (s.memory_id !== undefined) return subject(app, "memory", [s.memory_id]);
  if (s.event_ids !== undefined) {
    return subject(app, "events", [...new Set(s.event_ids)].sort());
  }
  return subject(app, "anonymous", []);
}

function subject(
  application_id: string,
  kind: SubjectKind,
  ids: string[],
): ErasureSubject {
  return { application_id, kind, ids };
}

/** Bytes of an erasure key. */
export const ERASURE_KEY_BYTES = 32;

/**
 * The keyed digest of a subject: `hmac-sha256:<hex>` over its canonical
 * form. Equal subjects (the same event ids in any order included) have equal
 * digests under one key.
 */
export function subjectDigest(
  subject: ErasureSubject,
  key: Uint8Array,
): string {
  requireKey(key);
  const text = canonicalJson({
    v: 1,
    application_id: subject.application_id,
    kind: subject.kind,
    ids: subject.ids,
  });
  return `hmac-sha256:${createHmac("sha256", key).update(text).digest("hex")}`;
}

/** Names a key without revealing it: `sha256:` and the first 16 hex digits of its hash. */
export function erasureKeyId(key: Uint8Array): string {
  requireKey(key);
  return `sha256:${
    createHash("sha256").update(key).digest("hex").slice(0, 16)
  }`;
}

function requireKey(key: Uint8Array): void {
  if (key.length < ERASURE_KEY_BYTES) {
    throw new ConfigError(
      `Invalid erasure key: it has ${key.length} bytes, at least ${ERASURE_KEY_BYTES} are needed; let Trace create one in the data directory`,
    );
  }
}

/** What a selector is, in words, without its ids (for messages and plans). */
export function describeSubjectKind(subject: ErasureSubject): string {
  switch (subject.kind) {
    case "user":
      return "one user";
    case "anonymous":
      return "the anonymous users";
    case "thread":
      return "one thread";
    case "memory":
      return "one memory";
    case "events":
      return `${subject.ids.length} event id(s)`;
  }
}
