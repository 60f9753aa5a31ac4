/**
 * The requests of the two host lookups: an artifact's current state (a
 * typed resource ref, optionally narrowed to a tenant) and an account's
 * user id (a transient email, in a POST body only).
 *
 * @module
 */

import * as v from "valibot";
import { ConfigError } from "../errors.ts";
import { Email, OpaqueId, parseOperatorInput } from "./_input.ts";

const TypeToken = v.pipe(
  v.string("must be a string"),
  v.regex(
    /^[a-z][a-z0-9_.:-]{0,63}$/,
    "must be a lower-case resource type (a-z, 0-9, _ . : -)",
  ),
);

const ArtifactQuerySchema = v.strictObject({
  type: TypeToken,
  id: OpaqueId,
  version: v.optional(
    v.pipe(OpaqueId, v.maxLength(128, "must be at most 128 characters")),
  ),
  application_id: v.optional(OpaqueId),
  user_id: v.optional(OpaqueId),
  anonymous: v.optional(v.literal("true", "only takes true")),
});

/** Which artifact to look up, and the tenant it is asked in. */
export interface ArtifactQuery {
  ref: { type: string; id: string; version?: string };
  application_id?: string;
  /** `null`: anonymous evidence only. */
  user_id?: string | null;
}

/** Validates the query of `GET /traces/artifact.json`. */
export function parseArtifactQuery(input: unknown): ArtifactQuery {
  const parsed = parseOperatorInput(ArtifactQuerySchema, input, "artifact");
  if (parsed.anonymous !== undefined && parsed.user_id !== undefined) {
    throw new ConfigError(
      "Invalid artifact request: give user_id or anonymous, not both",
    );
  }
  const query: ArtifactQuery = {
    ref: parsed.version === undefined
      ? { type: parsed.type, id: parsed.id }
      : { type: parsed.type, id: parsed.id, version: parsed.version },
  };
  if (parsed.application_id !== undefined) {
    query.application_id = parsed.application_id;
  }
  if (parsed.anonymous !== undefined) query.user_id = null;
  else if (parsed.user_id !== undefined) query.user_id = parsed.user_id;
  return query;
}

const AccountRequestSchema = v.strictObject({ email: Email });

/** Validates the body of `POST /traces/account/resolve`; errors never repeat the email. */
export function parseAccountRequest(input: unknown): { email: string } {
  return parseOperatorInput(AccountRequestSchema, input, "account");
}
