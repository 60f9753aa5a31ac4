/**
 * One client cannot hold every connection slot of `trace serve`: past its
 * share, its further connections are refused with a one-line answer while
 * other clients are still served. Loopback clients share the total only.
 * The guard runs on a thread of its own and reports a failure to listen.
 */

import assert from "node:assert/strict";
import { clientKey, listenError, listenGuarded } from "../routes/listen.ts";

const decoder = new TextDecoder();

/** Everything the server answers on a connection that sends nothing. */
async function answerTo(conn: Deno.Conn): Promise<string> {
  const buffer = new Uint8Array(4096);
  let answer = "";
  try {
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      answer += decoder.decode(buffer.subarray(0, n));
    }
  } catch {
    // Reset by the server.
  }
  conn.close();
  return answer;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

Deno.test("a client past its share of connections is refused while another client is served", async () => {
  // Every test connection comes from loopback: tell them apart by port parity.
  let next = 0;
  const clients = new Map<number, string>();
  const server = await listenGuarded(() => new Response("served"), {
    hostname: "127.0.0.1",
    port: 0,
    limits: { maxConnectionsPerClient: 2, maxConnections: 10 },
    clientKey: (addr) => {
      const port = (addr as Deno.NetAddr).port;
      if (!clients.has(port)) {
        clients.set(port, next++ < 3 ? "greedy" : "other");
      }
      return clients.get(port)!;
    },
  });
  const port = server.addr.port;
  const held: Deno.Conn[] = [];
  try {
    held.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    held.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    await settle();
    const third = await Deno.connect({ hostname: "127.0.0.1", port });
    const refused = await answerTo(third);
    assert.match(refused, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(refused, /Retry-After: 1/);
    assert.match(
      refused,
      /Too many open connections from your address \(at most 2\); close some and retry/,
    );
    // Another client still gets in.
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await response.text(), "served");
  } finally {
    for (const conn of held) conn.close();
    await server.shutdown();
  }
});

Deno.test("a client's share frees as its connections close", async () => {
  const server = await listenGuarded(() => new Response("served"), {
    hostname: "127.0.0.1",
    port: 0,
    limits: { maxConnectionsPerClient: 1 },
    clientKey: () => "one",
  });
  const port = server.addr.port;
  try {
    const first = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await first.text(), "served");
    await settle();
    const second = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await second.text(), "served");
  } finally {
    await server.shutdown();
  }
});

Deno.test("clients are told apart by address, an IPv6 client by its /64; loopback shares the total", () => {
  const tcp = (hostname: string): Deno.NetAddr => ({
    transport: "tcp",
    hostname,
    port: 40_000,
  });
  assert.equal(clientKey(tcp("203.0.113.7")), "203.0.113.7");
  assert.equal(clientKey(tcp("::ffff:203.0.113.7")), "203.0.113.7");
  assert.equal(
    clientKey(tcp("2001:db8:1:2:aaaa::1")),
    clientKey(tcp("2001:db8:1:2:bbbb:cccc:dddd:eeee")),
  );
  assert.equal(clientKey(tcp("2001:db8:1:2::1")), "2001:db8:1:2::/64");
  assert.notEqual(
    clientKey(tcp("2001:db8:1:2::1")),
    clientKey(tcp("2001:db8:1:3::1")),
  );
  assert.equal(clientKey(tcp("127.0.0.1")), null);
  assert.equal(clientKey(tcp("127.8.9.10")), null);
  assert.equal(clientKey(tcp("::1")), null);
  assert.equal(clientKey(tcp("::ffff:127.0.0.1")), null);
  assert.equal(
    clientKey({ transport: "unix", path: "/tmp/x.sock" } as Deno.UnixAddr),
    null,
  );
});

Deno.test("without a client key the default cap applies to non-loopback clients only", async () => {
  // Loopback test clients are not counted per address: the total applies.
  const server = await listenGuarded(() => new Response("served"), {
    hostname: "127.0.0.1",
    port: 0,
    limits: { maxConnectionsPerClient: 1, maxConnections: 10 },
  });
  const port = server.addr.port;
  const held = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await settle();
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await response.text(), "served");
  } finally {
    held.close();
    await server.shutdown();
  }
});

Deno.test("a port in use is reported as such from the guard's thread", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const error = await listenGuarded(() => new Response("served"), {
      hostname: "127.0.0.1",
      port,
    }).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof Deno.errors.AddrInUse, String(error));
    assert.match(
      String(listenError(error, "127.0.0.1", port)),
      /the port is in use; choose another --port/,
    );
  } finally {
    taken.close();
  }
});
