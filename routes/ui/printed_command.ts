/**
 * Commands the pages print for a reader to run: they name this server's
 * data, so a copied command reaches what the page shows.
 *
 * @module
 */

/**
 * `command` with this server's data flags (`--data-dir` / `--db`, as
 * `PageView.dataFlags` gives them) after each `trace` line that reads
 * or writes the data, so a printed command reaches the data this page shows
 * (`trace demo` has no data of its own and takes no such flags).
 */
export function withDataFlags(command: string, dataFlags: string): string {
  if (dataFlags === "") return command;
  return command.split("\n").map((line) =>
    line.startsWith("trace ") && !line.startsWith("trace demo ")
      ? `${line}${dataFlags}`
      : line
  ).join("\n");
}
