/**
 * What an external run is aimed at: a registered target id, or a config
 * that is registered under its deterministic `cfg-…` id first. A config's
 * token is read before anything is registered, so a config that cannot run
 * changes nothing.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import type { TraceDb } from "../db.ts";
import { NotFoundError, RefusedError, UsageError } from "../errors.ts";
import { closestName } from "../suggest.ts";
import { targetTransport } from "./target_transport.ts";
import { hasLedger, requireLedger } from "../ledger/schema.ts";
import {
  listRetirements,
  readRetirement,
  refuseRetired,
  type RetiredTarget,
  retiredWords,
  retireTarget,
} from "../ledger/retirements.ts";
import {
  listTargetSummaries,
  listUnregisteredTargets,
  type TargetListOptions,
  type TargetSummary,
  type UnregisteredTarget,
} from "../ledger/target_summaries.ts";
import {
  CONFIG_TARGET_PREFIX,
  listTargets,
  readTarget,
  registerTarget,
  type Registration,
  type TargetRecord,
  targetRef,
  validateTargetId,
} from "../ledger/targets.ts";
import type { TargetRef } from "../runner/report.ts";
import { checkAdapterReachable } from "./reachability.ts";
import {
  configTargetId,
  type ExternalRunOptions,
  type ExternalRunOutcome,
  runExternal,
} from "./external_run.ts";

/** A registered target id, or a config to file under its `cfg-…` id. */
export type RunSelection = { targetId: string } | { config: StagingConfig };

/** A run's config and the target its report names. */
export interface RunTarget {
  config: StagingConfig;
  target: TargetRef;
}

/** The report target of a config run: its deterministic `cfg-…` id. */
export function configTargetRef(config: StagingConfig): TargetRef {
  return {
    id: configTargetId(config),
    base_url: config.base_url,
    source: "config",
  };
}

/** Binds `targetId` to `config` once and for all (`external-register`); a retired id stays retired. */
export async function registerNamedTarget(
  db: TraceDb,
  targetId: string,
  config: StagingConfig,
): Promise<Registration> {
  validateTargetId(targetId);
  if (targetId.startsWith(CONFIG_TARGET_PREFIX)) {
    // Such ids name the configs run without a registration; taking one
    // would capture whichever config hashes to it.
    throw new UsageError(
      `Cannot register target "${targetId}": ids starting with ${CONFIG_TARGET_PREFIX} are kept for configs run with --config alone; choose another id`,
    );
  }
  // Before the config is compared: a retired id is refused for what it is,
  // whatever config it is given.
  if (await hasLedger(db)) await refuseRetiredId(db, targetId);
  const registration = await registerTarget(db, {
    targetId,
    config,
    source: "registered",
  });
  // Retired between the check and the registration.
  if (!registration.created) {
    await refuseRetired(db, targetId, `register target "${targetId}" again`);
  }
  return registration;
}

/** Refuses to register a retired id again: retired ids are not reused, so their runs keep one meaning. */
async function refuseRetiredId(db: TraceDb, targetId: string): Promise<void> {
  const retirement = await readRetirement(db, targetId);
  if (!retirement) return;
  throw new RefusedError(
    `Cannot register target "${targetId}": it ${
      retiredWords(retirement)
    } and retired ids are not reused; register the config under a new id, such as "${await freeTargetId(
      db,
      targetId,
    )}"`,
  );
}

/** The first of `<id>-2`, `<id>-3`, … that is a valid id neither registered nor retired. */
async function freeTargetId(db: TraceDb, targetId: string): Promise<string> {
  for (let n = 2;; n++) {
    const suffix = `-${n}`;
    const id = targetId.slice(0, 64 - suffix.length) + suffix;
    if (
      !await readTarget(db, id) && !await readRetirement(db, id)
    ) return id;
  }
}

/** Every registered target; none in a database never written to. */
export async function registeredTargets(
  db: TraceDb,
): Promise<TargetRecord[]> {
  return await hasLedger(db) ? await listTargets(db) : [];
}

/** Ids of retired targets, which listings hide as `external-targets` does; none without a ledger. */
export async function retiredTargetIds(db: TraceDb): Promise<Set<string>> {
  return await hasLedger(db)
    ? new Set((await listRetirements(db)).keys())
    : new Set();
}

/** Registered targets with their use (run count, first and last run); retired ones only with `all`. */
export async function targetSummaries(
  db: TraceDb,
  options: TargetListOptions = {},
): Promise<TargetSummary[]> {
  return await hasLedger(db) ? await listTargetSummaries(db, options) : [];
}

/** Targets known only from their runs (config runs never registered, such as quickstart's); none without a ledger. */
export async function unregisteredTargets(
  db: TraceDb,
): Promise<UnregisteredTarget[]> {
  return await hasLedger(db) ? await listUnregisteredTargets(db) : [];
}

/**
 * The target listing every reader gives (`external-targets --json`,
 * `trace.external_targets`): the registered targets with their use and
 * retirement as the ledger records it, and the targets known only from runs.
 */
export interface TargetListing {
  targets: TargetSummary[];
  unregistered: UnregisteredTarget[];
}

/** {@link targetSummaries} and {@link unregisteredTargets} in one answer, built once for every reader. */
export async function targetListing(
  db: TraceDb,
  options: TargetListOptions = {},
): Promise<TargetListing> {
  return {
    targets: await targetSummaries(db, options),
    unregistered: await unregisteredTargets(db),
  };
}

/** Retires a registered target: hidden from listings, refused for new runs and replays; its history stays. */
export async function retireRunTarget(
  db: TraceDb,
  targetId: string,
  reason: string | null = null,
): Promise<RetiredTarget> {
  await requireLedger(db);
  return await retireTarget(db, targetId, reason);
}

/** Reads a registered target without writing anything; a clear error when it is not registered. */
export async function readRunTarget(
  db: TraceDb,
  targetId: string,
): Promise<RunTarget> {
  validateTargetId(targetId);
  await requireLedger(db);
  const record = await readTarget(db, targetId);
  if (!record) {
    const near = closestName(
      targetId,
      (await listTargets(db)).map((target) => target.target_id),
    );
    throw new NotFoundError(
      `Cannot find target "${targetId}"; ${
        near ? `did you mean "${near}"? Or ` : ""
      }${registerAdvice(targetId)}`,
    );
  }
  await refuseRetired(db, targetId, `run target "${targetId}"`);
  return { config: record.config, target: targetRef(record) };
}

/**
 * How to register an id that is not registered. A `cfg-…` id is only ever
 * given by a config run with `--config` alone, and `external-register`
 * refuses it, so naming it there would send the user into that refusal.
 */
function registerAdvice(targetId: string): string {
  if (!targetId.startsWith(CONFIG_TARGET_PREFIX)) {
    return `register it with trace external-register --target ${targetId} --config FILE`;
  }
  return `ids starting with ${CONFIG_TARGET_PREFIX} name configs run with --config alone, and none is registered under this one here; register the config under an id of your own with trace external-register --target NAME --config FILE`;
}

/** Options for {@link resolveRunTarget}. */
export interface ResolveOptions {
  /** Environment lookup for `token_env`. */
  env?: (name: string) => string | undefined;
  /** A transport to use instead of the strict HTTP client. */
  transport?: StagingTransport;
  /** A Ctrl-C: it calls the adapter probe off, and the run does not start. */
  signal?: AbortSignal;
}

/** A resolved selection: config, target, the transport to reach it, and whether it was just registered. */
export interface ResolvedTarget extends RunTarget {
  transport: StagingTransport;
  /** True when a config was registered under its `cfg-…` id by this call. */
  registered: boolean;
}

/** Resolves a selection for a run; registers a config target (after its token was read). */
export async function resolveRunTarget(
  db: TraceDb,
  selection: RunSelection,
  options: ResolveOptions = {},
): Promise<ResolvedTarget> {
  const transportFor = (config: StagingConfig, target?: TargetRef) =>
    options.transport ?? targetTransport(config, target ?? null, options.env);
  if ("targetId" in selection) {
    const found = await readRunTarget(db, selection.targetId);
    return {
      ...found,
      transport: transportFor(found.config, found.target),
      registered: false,
    };
  }
  const { config } = selection;
  // Retirement first: whether the adapter answers is beside the point then.
  await refuseRetiredConfig(db, config, "run");
  const transport = transportFor(config);
  // An unreachable adapter must not leave a permanent cfg-… target behind.
  await checkAdapterReachable(
    config,
    transport,
    options.signal ? { signal: options.signal } : {},
  );
  const { target, created } = await registerTarget(db, {
    targetId: configTargetId(config),
    config,
    source: "config",
  });
  await refuseRetired(
    db,
    target.target_id,
    `run this config (target "${target.target_id}")`,
  );
  return { config, target: targetRef(target), transport, registered: created };
}

/**
 * Refuses a config whose config-derived target was retired, as a retired
 * `--target` is refused (`action`: "run", "plan"); a database without a
 * ledger has retired nothing.
 */
export async function refuseRetiredConfig(
  db: TraceDb,
  config: StagingConfig,
  action: string,
): Promise<void> {
  if (!await hasLedger(db)) return;
  const targetId = configTargetId(config);
  await refuseRetired(
    db,
    targetId,
    `${action} this config (target "${targetId}")`,
  );
}

/**
 * Refuses, sending nothing, a config whose bearer token a run could not
 * read: a `token_env` naming a variable that is unset or empty, or holding
 * spaces. The run's own transport reads it, so both say the same.
 */
export function checkConfigToken(
  config: StagingConfig,
  env?: (name: string) => string | undefined,
  target: TargetRef | null = null,
): void {
  // Building the transport reads the token and connects to nothing.
  targetTransport(config, target, env);
}

/** Options for {@link runExternalTarget}. */
export type TargetRunOptions =
  & Omit<ExternalRunOptions, "db" | "target" | "linked">
  & {
    /** Called when a config was registered as a new target, before the run starts. */
    onRegistered?: (target: TargetRef) => void;
  };

/** An external run of a selection, and whether its config target was registered on the way. */
export interface TargetRunOutcome extends ExternalRunOutcome {
  /** True when a config was registered as a new target by this run. */
  registered: boolean;
}

/** Resolves `selection` and runs the contract against it. */
export async function runExternalTarget(
  db: TraceDb,
  selection: RunSelection,
  options: TargetRunOptions,
): Promise<TargetRunOutcome> {
  const { onRegistered, ...runOptions } = options;
  const resolved = await resolveRunTarget(db, selection, {
    ...(options.env ? { env: options.env } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (resolved.registered) onRegistered?.(resolved.target);
  const outcome = await runExternal(resolved.config, {
    ...runOptions,
    db,
    target: resolved.target,
    transport: resolved.transport,
  });
  return { ...outcome, registered: resolved.registered };
}
