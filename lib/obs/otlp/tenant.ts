/**
 * Which application (tenant) each span of a request belongs to:
 *
 * 1. an explicit tenant attribute: the resource's `tenant.id` or
 *    `application.id`, else the span's, else a convention's own (the AI
 *    SDK's `ai.telemetry.metadata.tenantId` / `applicationId`). It always
 *    wins, except that a credential bound to an application refuses a span
 *    naming another (403, nothing written);
 * 2. else the application bound to the ingest credential;
 * 3. else the server's default (`trace serve --default-application NAME`);
 * 4. else the resource's `service.name`;
 * 5. else the span cannot be mapped (400, nothing written).
 *
 * Fallbacks taken are reported back in the OTLP answer's `partial_success`
 * message (see {@link tenantNotes}), so a producer learns where its spans
 * went.
 *
 * @module
 */

import { conventionText } from "./conventions/mod.ts";
import { type OtlpAttributes, type OtlpSpan, scalarText } from "./decode.ts";
import { SpanRefusal } from "./_refusals.ts";

/** Where a span's `application_id` came from. */
export const TENANT_SOURCES = [
  "attribute",
  "credential",
  "default_application",
  "service_name",
] as const;
/** One of {@link TENANT_SOURCES}. */
export type TenantSource = typeof TENANT_SOURCES[number];

/** What a request's tenant depends on besides its spans. */
export interface TenantRequest {
  /**
   * The tenant scope of the credential that sent the request (an operator
   * account's scope): an `application_id` binds every span to that
   * application. Absent, or without one: an unscoped credential.
   */
  credential?: { application_id?: string | undefined } | null | undefined;
  /** The server's default application (`trace serve --default-application`). */
  defaultApplicationId?: string | undefined;
}

/** How the spans of one request get their tenant; made by {@link tenantForRequest}. */
export interface TenantRule {
  /** The application the credential is bound to (explicit tenants must match), else null. */
  readonly bound: string | null;
  /** The application of spans that name none, and why; null: each resource's `service.name`. */
  readonly fallback: {
    readonly applicationId: string;
    readonly source: "credential" | "default_application";
  } | null;
}

/** A span's tenant and where it came from. */
export interface SpanTenant {
  applicationId: string;
  source: TenantSource;
}

/** Attributes that name a tenant outright, on the resource first, then on the span. */
export const TENANT_ATTRIBUTE_KEYS = ["tenant.id", "application.id"] as const;

/** The tenant rule of one request: feed it the credential's scope and the server's default. */
export function tenantForRequest(request: TenantRequest = {}): TenantRule {
  const bound = nonEmpty(request.credential?.application_id);
  if (bound !== null) {
    return { bound, fallback: { applicationId: bound, source: "credential" } };
  }
  const fallback = nonEmpty(request.defaultApplicationId);
  return {
    bound: null,
    fallback: fallback === null
      ? null
      : { applicationId: fallback, source: "default_application" },
  };
}

/** The tenant of `span` under `rule`; throws a `SpanRefusal` when it has none or names one the credential may not write. */
export function spanTenant(rule: TenantRule, span: OtlpSpan): SpanTenant {
  const explicit = first(span, "resource") ?? first(span, "attributes") ??
    conventionText(span, "tenant");
  if (explicit !== null) {
    if (rule.bound !== null && explicit !== rule.bound) {
      throw new SpanRefusal(
        span,
        `it names application "${explicit}" but the credential that sent it may write only to "${rule.bound}"`,
        "send it with that application's credential or drop the tenant attribute",
        true,
      );
    }
    return { applicationId: explicit, source: "attribute" };
  }
  if (rule.fallback) return { ...rule.fallback };
  const service = span.resource.get("service.name");
  if (typeof service === "string" && service !== "") {
    return { applicationId: service, source: "service_name" };
  }
  throw new SpanRefusal(
    span,
    "application_id: the span has no tenant.id or application.id attribute and its resource no service.name",
    "set one, or start the server with --default-application NAME, and resend the batch",
  );
}

function first(
  span: OtlpSpan,
  where: "resource" | "attributes",
): string | null {
  const attributes: OtlpAttributes = span[where];
  for (const key of TENANT_ATTRIBUTE_KEYS) {
    const value = attributes.get(key);
    // A NaN or infinite doubleValue names no tenant (it has no text).
    const text = scalarText(value);
    if (text) return text;
    // A list, a map, bytes or a flag is a tenant attribute gone wrong: taking
    // the next rule's tenant instead would file the span under another one.
    if (
      typeof value === "boolean" || value instanceof Uint8Array ||
      (typeof value === "object" && value !== null)
    ) {
      throw new SpanRefusal(
        span,
        `${
          where === "resource" ? "its resource's" : "its"
        } ${key} must be a string naming the application, not ${
          kindOfValue(value)
        }`,
        "fix it and resend the batch",
      );
    }
  }
  return null;
}

function kindOfValue(value: boolean | Uint8Array | object): string {
  if (typeof value === "boolean") return "a boolean";
  if (value instanceof Uint8Array) return "bytes";
  return Array.isArray(value) ? "a list" : "a map";
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === "" ? null : value;
}

const SHOWN_NAMES = 3;

/** The `partial_success` notes for spans whose tenant was a fallback (content-free: tenant names only). */
export function tenantNotes(tenants: readonly SpanTenant[]): string[] {
  const bySource = new Map<TenantSource, Set<string>>();
  const counts = new Map<TenantSource, number>();
  for (const { applicationId, source } of tenants) {
    if (source === "attribute") continue;
    counts.set(source, (counts.get(source) ?? 0) + 1);
    const names = bySource.get(source) ?? new Set<string>();
    names.add(applicationId);
    bySource.set(source, names);
  }
  const notes: string[] = [];
  for (const [source, names] of bySource) {
    const n = counts.get(source) ?? 0;
    notes.push(
      `${n} span${
        n === 1 ? "" : "s"
      } had no tenant.id or application.id; application_id ${
        quoted([...names])
      } was taken from ${FALLBACK_WORDS[source]}`,
    );
  }
  return notes;
}

const FALLBACK_WORDS: Readonly<Record<TenantSource, string>> = {
  attribute: "the span",
  credential: "the ingest credential",
  default_application: "--default-application",
  service_name: "the resource's service.name",
};

function quoted(names: string[]): string {
  const shown = names.slice(0, SHOWN_NAMES).map((name) => JSON.stringify(name))
    .join(", ");
  const rest = names.length - SHOWN_NAMES;
  return rest > 0 ? `${shown} and ${rest} more` : shown;
}
