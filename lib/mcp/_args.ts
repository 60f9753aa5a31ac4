/**
 * Argument schemas the tools share. Target ids are the ledger's own schema
 * (the one `external-register` checks), preceded by a refusal of anything
 * that looks like a URL or a host: over MCP a target is named by its
 * registered id only, so an endpoint can never be smuggled in as an id.
 *
 * @module
 */

import * as v from "valibot";
import { objectIssueMessage } from "../issues.ts";
import { TargetIdSchema } from "../ledger/targets.ts";
import { isRunId } from "../ledger/runs.ts";

/** A scheme (`http:`, `localhost:8787`), a slash, credentials, a query, an IPv4 address or `localhost`. */
const URL_LIKE =
  /:\/\/|^[a-z][a-z0-9+.-]*:|[/\\@?#]|^localhost$|^\d{1,3}(\.\d{1,3}){3}$|^www\./i;

/** True when `value` looks like a URL or a host rather than a registered target id. */
export function looksLikeUrl(value: string): boolean {
  return URL_LIKE.test(value.trim());
}

/** A registered target id; URL-like values are refused with the way to register one. */
export const TargetIdArg = v.pipe(
  v.string("must be a string"),
  v.check(
    (value) => !looksLikeUrl(value),
    "must be a registered target id, not a URL or host; register the endpoint with trace external-register --target ID --config FILE, then pass that id",
  ),
  TargetIdSchema,
  v.description(
    "A registered target id (see trace.external_targets); never a URL",
  ),
);

/** A run id as the ledger and checkpoints name runs. */
export const RunIdArg = v.pipe(
  v.string("must be a string"),
  v.maxLength(128, "must be at most 128 characters"),
  v.check(isRunId, "must be a run id such as run-20261129T214455Z-3f9a1c"),
  v.description("A run id, as returned by a start, replay or run tool"),
);

/** A saved regression id. */
export const RegressionIdArg = v.pipe(
  v.string("must be a string"),
  v.maxLength(128, "must be at most 128 characters"),
  v.check(
    isRunId,
    "must be a regression id such as reg-20261129T214455Z-3f9a1c",
  ),
  v.description("A saved regression id, as returned by trace.external_save"),
);

/** Strict arguments: an unknown key is refused, naming it. */
export function strictArgs<
  const E extends v.ObjectEntries,
>(entries: E, hint = "") {
  return v.strictObject(entries, objectIssueMessage(hint));
}

/** The hint the external tools add to an unknown-argument refusal. */
export const EXTERNAL_HINT =
  "these tools take registered ids only: no URL, config or registration arguments";
