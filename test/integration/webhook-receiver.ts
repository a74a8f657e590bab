import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver on loopback that records deliveries; it can answer 500 to the first N. */
export async function startWebhookReceiver(): Promise<{
  url: string;
  deliveries: ReceivedDelivery[];
  failNext: (n: number) => void;
  close: () => Promise<void>;
}> {
  const deliveries: ReceivedDelivery[] = [];
  let failures = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (failures > 0) {
        failures--;
        response.writeHead(500).end('try later');
        return;
      }
      deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/cost`,
    deliveries,
    failNext: (n) => {
      failures = n;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
