/**
 * Propagation: when an application that opted in reports that it deleted a
 * memory (or all of a user's memory), Trace erases the content it holds of
 * that subject, so the index does not keep what the application forgot.
 *
 * Which events are deletions, and of what:
 *
 * - kind `memory_delete` (what the OTLP GenAI operation `delete_memory`
 *   maps to) or `memory_store_delete` (what `delete_memory_store` maps to;
 *   the operation name itself is accepted as a kind too); a failed one
 *   (status `error` or `success: false`) deletes nothing;
 * - a deletion of single records (a `gen_ai.memory.record.id` attribute, or
 *   resource refs with role `deleted` other than the store's own) is only
 *   indexed: Trace cannot tell which previews quote one record;
 * - otherwise it names the memory (`memory_id`, or for a store deletion the
 *   one `memory_store` ref it deletes), else, for `memory_delete` only, the
 *   user (`user_id`); a deletion naming neither is only indexed, and so is a
 *   store deletion that names no store.
 *
 * What propagates is a `content` erasure (previews) of the subject's events
 * written up to the deletion itself; metadata stays, the deletion's own
 * event included, and the receipt records it. The opt-in is per application
 * (stored in the index, see `erasure_settings.ts`) with
 * `TRACE_OBS_ERASURE_PROPAGATION=true` as the default for every application.
 *
 * @module
 */

import { readEnvSwitch } from "../../env_switch.ts";
import type { ResourceRef } from "../model.ts";
import type { ErasureSubject } from "./erasure_subject.ts";

/** Event kinds that report a memory deletion. */
export const MEMORY_DELETION_KINDS = [
  "memory_delete",
  "memory_store_delete",
  "delete_memory_store",
] as const;

/** The kinds among {@link MEMORY_DELETION_KINDS} that delete a whole memory store. */
const STORE_DELETION_KINDS: readonly string[] = [
  "memory_store_delete",
  "delete_memory_store",
];

/** The environment variable that opts every application in. */
export const PROPAGATION_ENV = "TRACE_OBS_ERASURE_PROPAGATION";

/** What propagation reads of a stored event. */
export interface DeletionCandidate {
  seq: number;
  application_id: string;
  user_id: string | null;
  memory_id: string | null;
  kind: string;
  status: string;
  success: boolean | null;
  resources: readonly ResourceRef[];
  attributes: Readonly<Record<string, unknown>>;
}

/** A content erasure a deletion event calls for. */
export interface PropagatedErasure {
  subject: ErasureSubject;
  /** The deletion's own `seq`: events written after it are not touched. */
  upToSeq: number;
}

/** The erasure `event` calls for, or `null` when it is only indexed. */
export function propagatedErasure(
  event: DeletionCandidate,
): PropagatedErasure | null {
  if (!(MEMORY_DELETION_KINDS as readonly string[]).includes(event.kind)) {
    return null;
  }
  if (event.status === "error" || event.success === false) return null;
  const storeDeletion = STORE_DELETION_KINDS.includes(event.kind);
  if (namesRecords(event, storeDeletion)) return null;
  const app = event.application_id;
  let memory = event.memory_id;
  if (storeDeletion) {
    const store = deletedStore(event);
    // Two names for the store deleted: which one is meant is not known.
    if (memory !== null && store !== null && store !== memory) return null;
    memory ??= store;
  }
  const subject: ErasureSubject | null = memory !== null
    ? { application_id: app, kind: "memory", ids: [memory] }
    : event.user_id !== null && !storeDeletion
    ? { application_id: app, kind: "user", ids: [event.user_id] }
    : null;
  return subject ? { subject, upToSeq: event.seq } : null;
}

/**
 * A deletion of single records: it names a record, or deletes a resource
 * (a store deletion's own ref to the memory store it deletes has role
 * `deleted` too, and is not a record; in a memory deletion it is).
 */
function namesRecords(
  event: DeletionCandidate,
  storeDeletion: boolean,
): boolean {
  const record = event.attributes["gen_ai.memory.record.id"];
  if (typeof record === "string" && record !== "") return true;
  return event.resources.some((ref) =>
    ref.role === "deleted" && !(storeDeletion && ref.type === "memory_store")
  );
}

/** The one store a store deletion names only by its ref, else `null`. */
function deletedStore(event: DeletionCandidate): string | null {
  const stores = new Set(
    event.resources.filter((ref) =>
      ref.type === "memory_store" && ref.role === "deleted"
    ).map((ref) => ref.id),
  );
  return stores.size === 1 ? [...stores][0]! : null;
}

/**
 * Reads the environment default: `true` opts in, `false` or unset leaves it
 * off (either in any case, spaces around it ignored). Set but empty, or any
 * other value (`1`, `yes`, `on`), throws a `ConfigError`, as the other
 * switches do: a privacy opt-in must not silently stay off.
 */
export function propagationByDefault(value: string | undefined): boolean {
  const word = value?.trim().toLowerCase();
  return readEnvSwitch(
    PROPAGATION_ENV,
    word === "true" || word === "false" ? word : value,
    "have an ingested memory deletion erase what it deleted in every application without a setting",
  );
}
