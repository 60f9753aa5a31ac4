/**
 * Which hosts and addresses never leave this machine. Plain HTTP to a staging
 * adapter, an unauthenticated server and the Host guard all depend on the same
 * answer, so it lives in one place.
 *
 * @module
 */

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * True for a host name that resolves only to this machine: `localhost` and
 * its subdomains, 127.0.0.0/8 and `::1` (bracketed or not). Expects a
 * hostname as `URL` normalises it (`0x7f.1` arrives as `127.0.0.1`).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return LOOPBACK_NAMES.has(host) || /^127(\.\d{1,3}){3}$/.test(host) ||
    host.endsWith(".localhost");
}

/** True for a connected peer's IP address on the loopback interface (IPv4-mapped too). */
export function isLoopbackAddress(address: string): boolean {
  return address === "::1" ||
    /^(?:::ffff:)?127(?:\.\d{1,3}){3}$/i.test(address);
}
