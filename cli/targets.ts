/** `trace external-register` and `trace external-targets`. */

import { UsageError } from "../lib/errors.ts";
import { type TargetRecord, validateTargetId } from "../lib/ledger/targets.ts";
import { registeredTargets, registerNamedTarget } from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";
import { renderTable } from "./_table.ts";
import { requireConfig } from "./_config_input.ts";

const REGISTER_FLAGS = {
  ...DATA_FLAGS,
  target: { type: "string" },
  config: { type: "string" },
} as const;

const REGISTER_HELP =
  `Usage: trace external-register --target ID --config FILE|- [--json] [--data-dir DIR] [--db URL]

Binds a target id to a staging config, once and for all. Registering the same
id with an identical config again changes nothing; with a different config it
is refused (exit 2) naming the fields that differ. Register a new id for a new
endpoint or configuration. Ids: 1-64 of a-z 0-9 . _ -, starting with a-z or 0-9.
`;

/** `trace external-register`: immutable target registration. */
export const externalRegister: Command = async (args, io) => {
  const { values } = parseFlags("external-register", args, REGISTER_FLAGS);
  if (values.help) return showHelp(io, REGISTER_HELP);
  if (values.target === undefined) {
    throw new UsageError(
      "--target ID is required; see trace external-register --help",
    );
  }
  const targetId = validateTargetId(values.target);
  const config = await requireConfig(values.config, "external-register", io);
  return await withDataContext(values, io, { write: true }, async ({ db }) => {
    const result = await registerNamedTarget(db, targetId, config);
    if (values.json) printJson(io, result);
    else {
      io.out(
        result.created
          ? `registered target ${targetId}  ${config.base_url}\n`
          : `target ${targetId} is already registered with this config; nothing changed\n`,
      );
    }
    return 0;
  });
};

const TARGETS_HELP =
  `Usage: trace external-targets [--json] [--data-dir DIR] [--db URL]

Lists registered targets (explicit registrations and config-derived cfg-… ids).
`;

/** `trace external-targets`: the registered targets. */
export const externalTargets: Command = async (args, io) => {
  const { values } = parseFlags("external-targets", args, DATA_FLAGS);
  if (values.help) return showHelp(io, TARGETS_HELP);
  return await withDataContext(values, io, { write: false }, async ({ db }) => {
    const targets = await registeredTargets(db);
    if (values.json) printJson(io, { targets });
    else io.out(renderTargets(targets));
    return 0;
  });
};

function renderTargets(targets: TargetRecord[]): string {
  if (targets.length === 0) {
    return "No targets registered; use trace external-register --target ID --config FILE\n";
  }
  return renderTable(
    ["ID", "SOURCE", "BASE URL", "DOCS", "WINDOW", "REGISTERED"],
    targets.map((t) => [
      t.target_id,
      t.source,
      t.base_url,
      String(t.config.document_count),
      `${t.config.deletion_window_seconds} s`,
      t.created_at,
    ]),
  );
}
