/**
 * `deno task compile`: builds the single `trace` executable. `deno compile`
 * needs a `denort` base binary; where the Deno download host is unreachable,
 * point DENORT_BIN at a local copy (same Deno version) and this task uses it.
 *
 * @module
 */

const denort = Deno.env.get("DENORT_BIN");
if (!denort) {
  // deno-lint-ignore no-console
  console.error(
    "compile: set DENORT_BIN to a local denort binary for Deno " +
      Deno.version.deno +
      " (deno compile cannot download it here); everything else runs from source with deno run -A cli.ts",
  );
  Deno.exit(1);
}
try {
  await Deno.stat(denort);
} catch {
  // deno-lint-ignore no-console
  console.error(
    `compile: DENORT_BIN=${denort} does not exist; point it at a denort binary`,
  );
  Deno.exit(1);
}

const target = Deno.args[0] ?? "dist/trace";
const command = new Deno.Command(Deno.execPath(), {
  args: [
    "compile",
    "--allow-all",
    "--include",
    "fixtures",
    // Workers are not part of the module graph deno compile follows.
    "--include",
    "lib/obs/ingest/_checkpoint_worker.ts",
    "--include",
    "lib/obs/ingest/_write_worker.ts",
    "--include",
    "routes/_listen_worker.ts",
    "--include",
    "lib/runner/marker/_search_worker.ts",
    "--output",
    target,
    "cli.ts",
  ],
  env: { DENORT_BIN: denort },
  stdout: "inherit",
  stderr: "inherit",
});
const { code } = await command.output();
if (code === 0) {
  // deno-lint-ignore no-console
  console.error(`compile: wrote ${target}`);
}
Deno.exit(code);
