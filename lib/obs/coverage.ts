/**
 * Coverage profiles: which stages a task scope (one root trace) must show
 * before its instrumentation counts as complete. A task declares its profile
 * on an event (`coverage_profile`, usually its intent); every event proves the
 * stage it names (`stage`, defaulting to its kind). Without any declared
 * profile coverage is `unknown`, never assumed complete.
 *
 * Profiles belong to one application; a profile registered without an
 * application applies to every application that has none of that name, so
 * no tenant can replace what another tenant registered.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import * as v from "valibot";
import type { TraceDb } from "../db.ts";
import { ConfigError, ConflictError } from "../errors.ts";
import { describeIssues } from "../issues.ts";
import { canonicalJson, sha256Hex } from "../canonical_json.ts";
import { OpaqueIdSchema, TokenSchema } from "./model.ts";
import { requireObs } from "./schema.ts";

/** Coverage states, from weakest to strongest claim. */
export const COVERAGE_STATES = ["unknown", "partial", "complete"] as const;
/** One of {@link COVERAGE_STATES}. */
export type CoverageState = typeof COVERAGE_STATES[number];

/** Most stages a profile may list on each side. */
export const MAX_PROFILE_STAGES = 32;

const Stages = v.pipe(
  v.array(TokenSchema, "must be an array of stage tokens"),
  v.maxLength(
    MAX_PROFILE_STAGES,
    `must list at most ${MAX_PROFILE_STAGES} stages`,
  ),
  v.check(
    (list) => new Set(list).size === list.length,
    "must not repeat a stage",
  ),
);

const ProfileSchema = v.pipe(
  v.strictObject({
    name: TokenSchema,
    application_id: v.optional(OpaqueIdSchema),
    required: v.pipe(Stages, v.minLength(1, "must list at least one stage")),
    optional: v.optional(Stages, []),
    replace: v.optional(v.boolean(), false),
  }),
  v.check(
    (p) => !p.optional.some((stage) => p.required.includes(stage)),
    "required and optional stages must be disjoint",
  ),
);

/** Stages of a coverage profile, and whose it is. */
export interface CoverageProfileSpec {
  /** The application the profile belongs to; absent: every application without its own. */
  application_id?: string;
  /** Stages a task scope must show to count as completely instrumented. */
  required: readonly string[];
  /** Stages that may appear without being required. */
  optional?: readonly string[];
  /** Must be true to change an already registered profile. */
  replace?: boolean;
}

/** A registered profile. */
export interface CoverageProfile {
  /** `null`: applies to every application without its own profile of this name. */
  application_id: string | null;
  /** The profile's name, as events declare it in `coverage_profile`. */
  name: string;
  /** Stages a task scope must show, sorted. */
  required: string[];
  /** Stages that may appear, sorted. */
  optional: string[];
  /** When it was registered or last replaced, ISO 8601. */
  registered_at: string;
}

/** What registration did. */
export type RegistrationStatus = "registered" | "unchanged" | "replaced";

/** Stored `application_id` of profiles that apply to every application. */
const ALL_APPLICATIONS = "";

/** Registers (or, with `replace: true`, changes) a coverage profile of one application, or of all. */
export async function registerCoverageProfile(
  db: TraceDb,
  name: string,
  spec: CoverageProfileSpec,
): Promise<RegistrationStatus> {
  const parsed = v.safeParse(ProfileSchema, { ...spec, name });
  if (!parsed.success) {
    throw new ConfigError(
      `Cannot register coverage profile "${name}": ${
        describeIssues(parsed.issues)
      }`,
    );
  }
  await requireObs(db);
  const required = [...parsed.output.required].sort();
  const optional = [...parsed.output.optional].sort();
  const digest = sha256Hex(canonicalJson({ required, optional }));
  const owner = parsed.output.application_id ?? ALL_APPLICATIONS;
  const existing = await db.client.execute({
    sql:
      "SELECT digest FROM obs_coverage_profiles WHERE application_id = ? AND name = ?",
    args: [owner, name],
  });
  const prior = existing.rows[0]?.digest;
  if (prior === digest) return "unchanged";
  if (prior !== undefined && !parsed.output.replace) {
    throw new ConflictError(
      `Cannot register coverage profile "${name}"${
        owner === ALL_APPLICATIONS ? "" : ` of application "${owner}"`
      }: a different definition is already registered; pass replace: true to change it`,
    );
  }
  await db.client.execute({
    sql: `INSERT INTO obs_coverage_profiles
            (application_id, name, required, optional, digest, registered_at)
          VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (application_id, name) DO UPDATE SET required = excluded.required,
            optional = excluded.optional, digest = excluded.digest,
            registered_at = excluded.registered_at`,
    args: [
      owner,
      name,
      JSON.stringify(required),
      JSON.stringify(optional),
      digest,
      Date.now(),
    ],
  });
  return prior === undefined ? "registered" : "replaced";
}

/** Lists registered profiles by application (those for all applications first), then name. */
export async function listCoverageProfiles(
  db: TraceDb,
): Promise<CoverageProfile[]> {
  await requireObs(db);
  const result = await db.client.execute(
    `SELECT application_id, name, required, optional, registered_at
     FROM obs_coverage_profiles ORDER BY application_id, name`,
  );
  return result.rows.map((row) => ({
    application_id: row.application_id === ALL_APPLICATIONS
      ? null
      : String(row.application_id),
    name: String(row.name),
    required: JSON.parse(String(row.required)),
    optional: JSON.parse(String(row.optional)),
    registered_at: new Date(Number(row.registered_at)).toISOString(),
  }));
}

/** A task scope that keeps coverage from being complete. */
export interface CoverageGap {
  /** The tenant of the task scope. */
  application_id: string;
  /** The task scope. */
  root_trace_id: string;
  /** The profile it declared. */
  profile: string;
  /** Stages are missing, or the declared profile was never registered. */
  problem: "missing_stages" | "unregistered_profile";
  /** The required stages no event of the scope showed. */
  missing_stages: string[];
}

/** Coverage of a set of task scopes. */
export interface CoverageAssessment {
  /** `complete` when every root is covered, `partial` when some are, `unknown` when none declares a profile. */
  state: CoverageState;
  /** Task scopes (roots) assessed. */
  roots: number;
  /** Roots that declare at least one profile. */
  declared_roots: number;
  /** Roots whose declared profiles are all registered and fully observed. */
  covered_roots: number;
  /** Up to 20 examples of what is missing. */
  gaps: CoverageGap[];
}

/** SQL yielding distinct `(application_id, root_trace_id)` rows to assess. */
export interface RootSelection {
  sql: string;
  args: InValue[];
}

const MAX_GAPS = 20;

function assessmentSql(roots: RootSelection): { counts: string; gaps: string } {
  const ctes = `WITH roots AS MATERIALIZED (${roots.sql}),
declared AS MATERIALIZED (
  SELECT DISTINCT x.application_id, x.root_trace_id, x.coverage_profile AS profile
  FROM roots r CROSS JOIN obs_events x
    ON x.root_trace_id = r.root_trace_id AND x.application_id = r.application_id
  WHERE x.coverage_profile IS NOT NULL),
resolved AS MATERIALIZED (
  -- The application's own profile wins over one registered for all ('').
  SELECT d.application_id, d.root_trace_id, d.profile,
    (SELECT p.required FROM obs_coverage_profiles p
     WHERE p.name = d.profile AND p.application_id IN (d.application_id, '')
     ORDER BY p.application_id DESC LIMIT 1) AS required
  FROM declared d),
unregistered AS (
  SELECT application_id, root_trace_id, profile FROM resolved WHERE required IS NULL),
missing AS (
  SELECT d.application_id, d.root_trace_id, d.profile, j.value AS stage
  FROM resolved d, json_each(d.required) j
  WHERE d.required IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM obs_events x
    WHERE x.root_trace_id = d.root_trace_id AND x.application_id = d.application_id
      AND x.stage = j.value)),
bad AS (
  SELECT application_id, root_trace_id FROM unregistered
  UNION SELECT application_id, root_trace_id FROM missing)`;
  return {
    counts: `${ctes}
SELECT (SELECT COUNT(*) FROM roots) AS roots,
  (SELECT COUNT(*) FROM (SELECT DISTINCT application_id, root_trace_id FROM declared)) AS declared,
  (SELECT COUNT(*) FROM bad) AS bad`,
    gaps: `${ctes}
SELECT application_id, root_trace_id, profile, 'missing_stages' AS problem,
  json_group_array(stage) AS stages
FROM missing GROUP BY application_id, root_trace_id, profile
UNION ALL
SELECT application_id, root_trace_id, profile, 'unregistered_profile', '[]' FROM unregistered
LIMIT ${MAX_GAPS}`,
  };
}

/** Assesses instrumentation coverage of the roots `roots` selects. */
export async function assessCoverage(
  db: TraceDb,
  roots: RootSelection,
): Promise<CoverageAssessment> {
  const sql = assessmentSql(roots);
  const [counts, gaps] = await db.client.batch([
    { sql: sql.counts, args: roots.args },
    { sql: sql.gaps, args: roots.args },
  ], "read");
  const row = counts?.rows[0];
  const total = Number(row?.roots ?? 0);
  const declared = Number(row?.declared ?? 0);
  const bad = Number(row?.bad ?? 0);
  const covered = declared - bad;
  let state: CoverageState = "unknown";
  if (declared > 0) state = covered === total ? "complete" : "partial";
  return {
    state,
    roots: total,
    declared_roots: declared,
    covered_roots: covered,
    gaps: (gaps?.rows ?? []).map((gap) => ({
      application_id: String(gap.application_id),
      root_trace_id: String(gap.root_trace_id),
      profile: String(gap.profile),
      problem: gap.problem === "unregistered_profile"
        ? "unregistered_profile"
        : "missing_stages",
      missing_stages: JSON.parse(String(gap.stages)) as string[],
    })),
  };
}
