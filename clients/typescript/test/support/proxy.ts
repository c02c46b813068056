// A tiny TCP proxy in front of a test server that loses one answer: it forwards a matching
// request to the server whole, then closes the client's connection when the server's answer
// starts, instead of passing it on. The server has done the work; the client only sees a
// dropped connection — the case an idempotency key exists for.

import { type Socket, connect, createServer } from "node:net";

export interface DroppingProxy {
  url: string;
  /** Answers dropped so far. */
  readonly dropped: number;
  /** Every byte clients sent, per connection, in order (to find what was re-sent). */
  readonly sent: string[];
  close(): Promise<void>;
}

/** A request head: the first line of an HTTP/1.1 request, at the start of a chunk. */
const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.1\r\n/;

/**
 * Proxies to `target` (`http://127.0.0.1:PORT`) and drops the answer to the first `times`
 * requests whose request line (`POST /v1/…`) matches `pattern`.
 */
export async function startDroppingProxy(target: string, pattern: RegExp, times = 1): Promise<DroppingProxy> {
  const { hostname, port } = new URL(target);
  const state = { dropped: 0, sent: [] as string[] };
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    const index = state.sent.push("") - 1;
    const upstream = connect(Number(port), hostname);
    let armed = false; // the request in flight is one whose answer we drop
    client.on("data", (chunk: Buffer) => {
      state.sent[index] += chunk.toString("latin1");
      const line = REQUEST_LINE.exec(chunk.toString("latin1"));
      if (line) armed = state.dropped < times && pattern.test(`${line[1]} ${line[2]}`);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!armed) return void client.write(chunk);
      state.dropped += 1;
      armed = false;
      destroyBoth(client, upstream);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("error", () => destroyBoth(client, upstream));
    upstream.on("error", () => destroyBoth(client, upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("proxy has no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    get dropped() {
      return state.dropped;
    },
    sent: state.sent,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}

function destroyBoth(a: Socket, b: Socket): void {
  a.destroy();
  b.destroy();
}
