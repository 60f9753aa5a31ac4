/**
 * Opens the one connection a request uses: TCP first, then TLS on top, so a
 * failure is classified by the phase it happened in (`connect` or `tls`).
 * Certificates are always verified against the system roots, or against
 * `caCerts` when given; there is no switch to skip verification.
 *
 * @module
 */

import { errorMessage } from "../errors.ts";
import { ProtocolError } from "../contract/protocol.ts";
import { isLoopbackAddress } from "../loopback.ts";
import type { Deadline } from "./_deadline.ts";

/** Where and how to connect. */
export interface ConnectOptions {
  /** Target URL; only protocol, hostname and port are used. */
  url: URL;
  /** Extra trusted roots in PEM (tests use a self-signed certificate). */
  caCerts?: string[] | undefined;
  /** Refuse unless the connected peer address is loopback (plain HTTP). */
  requireLoopbackPeer?: boolean;
}

/** Connects (and completes the TLS handshake for https) within the deadline. */
export async function openConnection(
  options: ConnectOptions,
  deadline: Deadline,
): Promise<Deno.Conn> {
  const { url } = options;
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const secure = url.protocol === "https:";
  const port = Number(url.port || (secure ? 443 : 80));
  const connecting = Deno.connect({ hostname, port, transport: "tcp" });
  let tcp: Deno.TcpConn;
  try {
    tcp = await deadline.race(
      connecting,
      () => void connecting.then(closeQuietly, () => {}),
    );
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(
      "connect",
      `cannot connect to ${url.host}: ${errorMessage(error)}`,
      { cause: error },
    );
  }
  if (
    options.requireLoopbackPeer && !isLoopbackAddress(tcp.remoteAddr.hostname)
  ) {
    closeQuietly(tcp);
    throw new ProtocolError(
      "refused",
      `${url.host} resolved to a non-loopback address; plain HTTP is loopback-only`,
    );
  }
  if (!secure) return tcp;
  return await handshake(tcp, hostname, options.caCerts, deadline);
}

async function handshake(
  tcp: Deno.TcpConn,
  hostname: string,
  caCerts: string[] | undefined,
  deadline: Deadline,
): Promise<Deno.TlsConn> {
  let tls: Deno.TlsConn | undefined;
  try {
    tls = await Deno.startTls(
      tcp,
      caCerts ? { hostname, caCerts } : { hostname },
    );
    const conn = tls;
    await deadline.race(conn.handshake(), () => closeQuietly(conn));
    return conn;
  } catch (error) {
    closeQuietly(tls ?? tcp);
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(
      "tls",
      `TLS handshake with ${hostname} failed: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}

/** Closes a connection that may already be closed. */
export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed (for instance by an expired deadline): nothing to release.
  }
}
