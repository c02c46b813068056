// A webhook receiver for tests: records every delivery (raw body and headers), answers 204.

import { type IncomingHttpHeaders, createServer } from "node:http";

export interface Delivery {
  body: string;
  headers: IncomingHttpHeaders;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    deliveries.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("receiver has no address");
  return {
    url: `http://127.0.0.1:${address.port}/holdfast`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
