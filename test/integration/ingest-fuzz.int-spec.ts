import { randomUUID } from 'node:crypto';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'protobufjs';
import { projectRoot } from '@spanforge/config';
import { createClickHouseClient, migrateClickHouse, type ClickHouseClient } from '@spanforge/clickhouse';
import { DeadLetterRepository, SpanRepository, SpanWriter, exportRows, type RowChunk } from '@spanforge/ingest';
import { MAX_TOKEN_COUNT, OtlpDecodeError, TIME_DOMAIN, decodeJsonExport, decodeProtobufExport, type DecodeResult } from '@spanforge/otlp';
import type { ExportJob } from '@spanforge/queue';
import { normalizeSpan } from '@spanforge/semconv';
import { workerDataDir } from '../support';
import { exportJob } from './export-job';
import { innocentTrace, jsonExport } from './otlp-json';

/*
 * Property: whatever well-formed OTLP an SDK (or a fuzzer) sends — extreme times, ids, numbers,
 * strings, nesting, unicode, duplicates — every span the gateway accepts is stored by the real
 * decoder, normaliser, row builder and writer on chDB, or was rejected with a reason; nothing the
 * store refuses reaches it (no dead letter, no conversion by the last guard); and a canary export
 * of another project written in the same batch is always stored whole.
 *
 * Seeded and bounded for `npm test` (under a minute). The nightly mode runs longer with a random
 * seed: FUZZ_RUNS=5000 FUZZ_SEED=$RANDOM npm run test:fuzz (the seed is printed on failure).
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
/**
 * Each run writes two exports and reads them back with FINAL: ~1 s on a quiet engine, up to ~3 s
 * on CI's shared one while earlier suites' merges run (a run of 25 once took 66 s there).
 */
const TIMEOUT_MS = 30_000 + RUNS * 6_000;

/** The OTLP trace messages, for protobuf bodies (field numbers from opentelemetry-proto). */
const OTLP = parse(`
  syntax = "proto3";
  message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
  message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
  message Resource { repeated KeyValue attributes = 1; }
  message ScopeSpans { Scope scope = 1; repeated Span spans = 2; }
  message Scope { string name = 1; string version = 2; }
  message Span {
    bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
    fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
    repeated Event events = 11; Status status = 15;
  }
  message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
  message Status { string message = 2; int32 code = 3; }
  message KeyValue { string key = 1; AnyValue value = 2; }
  message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
  message ArrayValue { repeated AnyValue values = 1; }
  message KeyValueList { repeated KeyValue values = 1; }
`).root.lookupType('ExportTraceServiceRequest');

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: KeyValue[] } };
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface FuzzSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attributes: KeyValue[];
  events: Array<{ time: bigint; name: string }>;
  status: { code: number; message: string };
}

const NOW = BigInt(Date.now()) * 1_000_000n;
const U64_MAX = 2n ** 64n - 1n;

const time = fc.oneof(
  fc.constantFrom(
    0n,
    1n,
    1_000_000_000n,
    99_999_999_999_999_999n,
    TIME_DOMAIN.maxNanos,
    TIME_DOMAIN.maxNanos + 1n,
    2n ** 63n - 1n,
    U64_MAX,
    NOW,
  ),
  fc.bigInt({ min: 0n, max: U64_MAX }),
  fc.bigInt({ min: NOW - 10n ** 16n, max: NOW + 10n ** 16n }),
);
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', '\ud800', 'a\udc00b', '🙂', '\u0000', 'é', '\\ud800', '{"a":1}', '[1,2]', 'x'.repeat(2_000)),
);
const hexId = (bytes: number) =>
  fc
    .oneof(
      { weight: 8, arbitrary: fc.uint8Array({ minLength: bytes, maxLength: bytes }) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 20 }) },
    )
    .map((b) => Buffer.from(b).toString('hex'));
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(12.25, -1, 2 ** 53, 2 ** 63, MAX_TOKEN_COUNT, MAX_TOKEN_COUNT + 1, 1e308, Number.NaN, Number.POSITIVE_INFINITY, -0),
);
const int64 = fc
  .oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(2n ** 63n - 1n, -1n, 0n, 4_294_967_296n))
  .map((n) => n.toString());
const numeric = fc.oneof(
  number.map((doubleValue): AnyValue => ({ doubleValue })),
  int64.map((intValue): AnyValue => ({ intValue })),
  number.map((n): AnyValue => ({ stringValue: String(n) })),
);

const { anyValue } = fc.letrec<{ anyValue: AnyValue; keyValue: KeyValue }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text.map((stringValue): AnyValue => ({ stringValue })),
    fc.boolean().map((boolValue): AnyValue => ({ boolValue })),
    numeric,
    fc.array(tie('anyValue'), { maxLength: 3 }).map((values): AnyValue => ({ arrayValue: { values } })),
    fc.array(tie('keyValue'), { maxLength: 3 }).map((values): AnyValue => ({ kvlistValue: { values: values as KeyValue[] } })),
  ) as fc.Arbitrary<AnyValue>,
  keyValue: fc.record({ key: text, value: tie('anyValue') as fc.Arbitrary<AnyValue> }),
}));

/** Keys the normaliser reads as numbers, ids or JSON: where a bad value could reach a typed column. */
const typedAttribute = fc.oneof(
  fc.record({
    key: fc.constantFrom(
      'gen_ai.usage.input_tokens',
      'gen_ai.usage.output_tokens',
      'gen_ai.usage.cache_read.input_tokens',
      'gen_ai.usage.reasoning.output_tokens',
      'llm.token_count.prompt',
      'llm.token_count.completion',
      'ai.usage.inputTokens',
      'ai.usage.outputTokens',
      'agent.iterations',
      'gen_ai.agent.iterations',
      'llm.cost.total',
      'gen_ai.usage.cost',
      'gen_ai.server.time_to_first_token',
      'gen_ai.response.time_to_first_chunk',
    ),
    value: numeric,
  }),
  fc.record({
    key: fc.constantFrom(
      'session.id',
      'user.id',
      'gen_ai.request.model',
      'gen_ai.response.model',
      'gen_ai.provider.name',
      'gen_ai.tool.name',
      'gen_ai.agent.name',
      'service.name',
      'gen_ai.input.messages',
      'input.value',
      'output.value',
    ),
    value: anyValue,
  }),
  fc.record({
    key: fc.constant('gen_ai.operation.name'),
    value: fc.constantFrom('chat', 'invoke_agent', 'execute_tool', 'embeddings', '').map((stringValue): AnyValue => ({ stringValue })),
  }),
  fc.record({
    key: fc.constantFrom('langfuse.observation.usage_details', 'langfuse.observation.cost_details'),
    value: fc
      .dictionary(fc.constantFrom('input', 'output', 'total', 'prompt_tokens', 'cache_read_input_tokens'), number, { maxKeys: 4 })
      .map((details): AnyValue => ({ stringValue: JSON.stringify(details) })),
  }),
);

const span = fc.record({
  traceId: hexId(16),
  spanId: hexId(8),
  parentSpanId: fc.oneof(fc.constant(''), hexId(8)),
  name: text,
  kind: fc.integer({ min: 0, max: 7 }),
  start: time,
  end: time,
  attributes: fc.array(fc.oneof(typedAttribute, fc.record({ key: text, value: anyValue })), { maxLength: 8 }),
  events: fc.array(fc.record({ time, name: text }), { maxLength: 3 }),
  status: fc.record({ code: fc.integer({ min: 0, max: 3 }), message: text }),
});

/** Spans of one export; sometimes a span twice (a retried export's duplicate), sometimes a shared trace. */
const exportOf = fc
  .tuple(fc.array(span, { minLength: 1, maxLength: 12 }), fc.boolean(), fc.boolean())
  .map(([spans, duplicate, oneTrace]) => {
    const all = oneTrace ? spans.map((s) => ({ ...s, traceId: spans[0]!.traceId })) : spans;
    return duplicate ? [...all, all[0]!] : all;
  });

function jsonBody(spans: FuzzSpan[]): Buffer {
  return jsonExport(
    spans.map((s) => ({
      traceId: s.traceId,
      spanId: s.spanId,
      parentSpanId: s.parentSpanId,
      name: s.name,
      kind: s.kind,
      startTimeUnixNano: s.start.toString(),
      endTimeUnixNano: s.end.toString(),
      attributes: s.attributes,
      events: s.events.map((e) => ({ timeUnixNano: e.time.toString(), name: e.name })),
      status: s.status,
    })),
  );
}

function protobufBody(spans: FuzzSpan[]): Buffer {
  const toProto = (value: AnyValue): Record<string, unknown> => {
    if ('arrayValue' in value) return { arrayValue: { values: value.arrayValue.values.map(toProto) } };
    if ('kvlistValue' in value)
      return { kvlistValue: { values: value.kvlistValue.values.map((kv) => ({ key: kv.key, value: toProto(kv.value) })) } };
    return value;
  };
  const message = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'fuzz' } }] },
        scopeSpans: [
          {
            scope: { name: 'fuzz' },
            spans: spans.map((s) => ({
              traceId: Buffer.from(s.traceId, 'hex'),
              spanId: Buffer.from(s.spanId, 'hex'),
              parentSpanId: Buffer.from(s.parentSpanId, 'hex'),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: s.start.toString(),
              endTimeUnixNano: s.end.toString(),
              attributes: s.attributes.map((kv) => ({ key: kv.key, value: toProto(kv.value) })),
              events: s.events.map((e) => ({ timeUnixNano: e.time.toString(), name: e.name })),
              status: s.status,
            })),
          },
        ],
      },
    ],
  };
  return Buffer.from(OTLP.encode(OTLP.fromObject(message)).finish());
}

describe('ingest under fuzzed exports', () => {
  let client: ClickHouseClient;
  let writer: SpanWriter;
  const deadLetters: string[] = [];

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await migrateClickHouse(client, path.join(projectRoot(), 'infra', 'clickhouse'));
    const repository = new DeadLetterRepository(client);
    writer = new SpanWriter(
      new SpanRepository(client),
      { maxItems: 10_000, maxDelayMs: 5 },
      {
        deadLetters: {
          add: async (letters) =>
            void (deadLetters.push(...letters.map((l) => `${l.error}: ${l.payload.slice(0, 300)}`)), await repository.add(letters)),
        },
        erasures: {
          rebuildSessionsWithoutErased: async () => {
            throw new Error('nothing is erased in this test');
          },
          runAgain: async () => {
            throw new Error('nothing is erased in this test');
          },
        },
        log: { warn: () => undefined, error: () => undefined },
      },
    );
  });
  afterAll(async () => {
    await writer?.close();
    await client?.close();
  });

  const storedKeys = async (projectId: string) =>
    (
      await (
        await client.query({
          query: 'SELECT DISTINCT trace_id, span_id FROM spans FINAL WHERE project_id = {p:String}',
          query_params: { p: projectId },
          format: 'JSONEachRow',
        })
      ).json<{ trace_id: string; span_id: string }>()
    )
      .map((r) => `${r.trace_id}/${r.span_id}`)
      .sort();

  it.each<[string, ExportJob['format'], (spans: FuzzSpan[]) => Buffer, (body: Buffer) => DecodeResult]>([
    ['OTLP/JSON', 'json', jsonBody, (body) => decodeJsonExport(body)],
    ['OTLP/protobuf', 'protobuf', protobufBody, (body) => decodeProtobufExport(body)],
  ])(
    '%s: every accepted span is stored, nothing reaches the store that it refuses, and the canary is always stored',
    async (_name, format, encode, decode) => {
      await fc.assert(
        fc.asyncProperty(exportOf, async (spans) => {
          const body = encode(spans);
          let result: DecodeResult;
          try {
            result = decode(body); // what the gateway does before its 200
          } catch (error) {
            // A body refused whole is a 400 with its reason: nothing is acknowledged.
            if (error instanceof OtlpDecodeError) return;
            throw error;
          }
          expect(result.received).toBe(spans.length);
          expect(result.spans.length + result.rejected).toBe(result.received);

          const [fuzzed, canary] = [`fuzz-${randomUUID()}`, `canary-${randomUUID()}`];
          const chunk = exportRows(exportJob('fuzz-tenant', fuzzed, format, body, result), []);
          const other = innocentTrace(5);
          const canaryBody = jsonExport(other.spans);
          const canaryChunk: RowChunk = exportRows(exportJob('fuzz-tenant', canary, 'json', canaryBody, decodeJsonExport(canaryBody)), []);
          // Both in one batch: the writer's 5 ms window takes them together.
          await Promise.all([writer.write(chunk), writer.write(canaryChunk)]);

          expect(Object.fromEntries(chunk.conversions)).toEqual({});
          expect(deadLetters).toEqual([]);
          const expected = [...new Set(result.spans.filter((s) => !normalizeSpan(s).drop).map((s) => `${s.traceId}/${s.spanId}`))].sort();
          expect(await storedKeys(fuzzed)).toEqual(expected);
          expect(await storedKeys(canary)).toHaveLength(other.spans.length);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );
});
