import { readFileSync } from 'node:fs';

/**
 * The benchmark's load generator, in its own process so the server under test does not pay for
 * the client's work: posts length-prefixed OTLP bodies from a file, `concurrency` at a time,
 * retrying 429/503, and prints the seconds until every export was answered 200.
 */
async function main(): Promise<void> {
  const [file, endpoint, apiKey, concurrency] = process.argv.slice(2) as [string, string, string, string];
  const data = readFileSync(file);
  const bodies: Buffer[] = [];
  for (let at = 0; at < data.length;) {
    const length = data.readUInt32BE(at);
    bodies.push(data.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  const started = performance.now();
  let next = 0;
  const send = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      for (;;) {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${apiKey}` },
          body,
        });
        await response.arrayBuffer();
        if (response.status === 200) break;
        if (response.status !== 429 && response.status !== 503) throw new Error(`gateway answered ${response.status}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  await Promise.all(Array.from({ length: Number(concurrency) }, send));
  process.stdout.write(`${((performance.now() - started) / 1000).toFixed(3)}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`load client failed: ${error.message}\n`);
  process.exit(1);
});
