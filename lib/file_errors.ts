/**
 * File system errors in words a user can act on. Deno's own messages carry
 * the OS error number and the failed syscall, which say nothing about what to
 * do next; every command that reads or writes a file names the problem here.
 *
 * @module
 */

/** Whether the failed operation was reading or writing (it changes the advice). */
export type FileAccess = "read" | "write";

/** One short reason and what to do, for an error thrown by a `Deno` file call. */
export function fileProblem(
  error: unknown,
  access: FileAccess = "read",
): string {
  if (error instanceof Deno.errors.AlreadyExists) {
    return "the file already exists; choose a new path";
  }
  if (error instanceof Deno.errors.NotFound) {
    return access === "read"
      ? "no such file; check the path"
      : "its directory does not exist; create it or choose another path";
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return `permission denied; choose a file you can ${access}`;
  }
  if (error instanceof Deno.errors.IsADirectory) {
    return "it is a directory; name a file";
  }
  if (error instanceof Deno.errors.NotADirectory) {
    return "a part of the path is not a directory; check the path";
  }
  if (error instanceof Deno.errors.InvalidData) {
    return "it is not UTF-8 text; check that it is the right file";
  }
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.split("\n")[0]!.replace(/\s*\(os error \d+\).*$/, "")
    .replace(/:\s*(open|read|write|stat|mkdir)\b.*$/, "");
  return `${reason.charAt(0).toLowerCase()}${reason.slice(1)}; check the path`;
}
