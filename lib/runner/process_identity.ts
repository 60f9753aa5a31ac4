/**
 * Identity of a process that survives PID reuse: the boot id plus the
 * process start time from `/proc`. Where `/proc` is absent (macOS, Windows)
 * there is no identity and liveness falls back to "unknown".
 *
 * @module
 */

/** `<boot id>:<start ticks>` of `pid`, or null when it cannot be read. */
export function processIdentity(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Field 2 (comm) may contain spaces and parentheses: split after its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const startTicks = fields[19];
    if (!startTicks) return null;
    return `${bootId()}:${startTicks}`;
  } catch {
    return null;
  }
}

function bootId(): string {
  try {
    return Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();
  } catch {
    return "unknown-boot";
  }
}
