import { buildCorpus } from './corpus';

/**
 * The soak's load generator, in its own process: sends fresh agent traces (a new corpus seed every
 * round, so nothing is a copy) at `spansPerSecond` for `minutes`, and prints one JSON line a round
 * with what it sent and what the gateway answered.
 */
const ROUND_SECONDS = 10;

async function main(): Promise<void> {
  const [endpoint, apiKey, rate, minutes] = process.argv.slice(2) as [string, string, string, string];
  const spansPerSecond = Number(rate);
  const until = Date.now() + Number(minutes) * 60_000;
  for (let round = 0; Date.now() < until; round++) {
    const started = Date.now();
    // About 10 spans a trace: enough traces for one round at the rate.
    const corpus = buildCorpus({
      traces: Math.max(1, Math.round((spansPerSecond * ROUND_SECONDS) / 10)),
      seed: 1_000 + round,
      startTime: started,
      spreadMs: ROUND_SECONDS * 1000,
    });
    const statuses: Record<string, number> = {};
    let spans = 0;
    const perRequest = corpus.spanCount / corpus.requests.length;
    for (const [i, body] of corpus.requests.entries()) {
      // Evenly over the round: request i leaves at its share of the round.
      const due = started + ((i * perRequest) / spansPerSecond) * 1000;
      // Read once: at nice 19 the client can be descheduled between two reads of the clock.
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${apiKey}` },
        body,
      });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      if (response.status === 200) spans += Math.round(perRequest);
      if (Date.now() >= until) break;
    }
    process.stdout.write(`${JSON.stringify({ at: Date.now(), acceptedSpans: spans, statuses })}\n`);
    const left = started + ROUND_SECONDS * 1000 - Date.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  }
}

main().catch((error: Error) => {
  process.stderr.write(`soak client failed: ${error.message}\n`);
  process.exit(1);
});
