import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { decodeJsonExport } from './json.decoder';
import { DEFAULT_DECODE_LIMITS, DecodeLimits, DecodeResult, RejectReason } from './otlp.model';
import { decodeProtobufExport } from './protobuf.decoder';
import { TIME_DOMAIN } from './store-domain';
import { event, link, nextId, readableSpan, toJson, toProtobuf } from './testing/otel-span.fixture';

type Decode = (spans: ReadableSpan[], limits?: DecodeLimits) => DecodeResult;

const DECODERS: [string, Decode][] = [
  ['protobuf', (spans, limits) => decodeProtobufExport(toProtobuf(spans), limits)],
  ['json', (spans, limits) => decodeJsonExport(toJson(spans), limits)],
];

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

function withIds(traceId: string, spanId: string, parentSpanId?: string): Partial<Parameters<typeof readableSpan>[0]> {
  return {
    context: { traceId, spanId, traceFlags: 1 },
    parentSpanContext: parentSpanId === undefined ? undefined : { traceId, spanId: parentSpanId, traceFlags: 1 },
  };
}

describe.each(DECODERS)('span validation (%s)', (_format, decode) => {
  it('drops invalid spans and counts each reject reason', () => {
    const cases: [RejectReason | 'valid', ReadableSpan][] = [
      ['valid', readableSpan()],
      ['invalid_trace_id', readableSpan(withIds(ZERO_TRACE_ID, nextId(8)))],
      ['invalid_trace_id', readableSpan(withIds(nextId(16).slice(0, 30), nextId(8)))],
      ['invalid_span_id', readableSpan(withIds(nextId(16), ZERO_SPAN_ID))],
      ['invalid_span_id', readableSpan(withIds(nextId(16), nextId(8).slice(0, 12)))],
      ['invalid_parent_span_id', readableSpan(withIds(nextId(16), nextId(8), nextId(8).slice(0, 8)))],
      ['missing_timestamps', readableSpan({ startTime: [0, 0] })],
      ['missing_timestamps', readableSpan({ endTime: [0, 0] })],
      ['end_before_start', readableSpan({ startTime: [1_700_000_010, 0], endTime: [1_700_000_009, 999_999_999] })],
      ['valid', readableSpan({ startTime: [1_700_000_010, 0], endTime: [1_700_000_010, 0] })],
      ['end_before_start', readableSpan({ startTime: [1_700_000_010, 0], endTime: [1_700_000_009, 0] })],
      // The store's time range: from the epoch (1 ns after it is a time) to the last day a ClickHouse Date holds.
      ['valid', readableSpan({ startTime: [0, 1], endTime: [1, 0] })],
      [
        'valid',
        readableSpan({
          startTime: [Number(TIME_DOMAIN.maxNanos / 1_000_000_000n), 0],
          endTime: [Number(TIME_DOMAIN.maxNanos / 1_000_000_000n), 999_999_999],
        }),
      ],
      [
        'timestamp_out_of_range',
        readableSpan({ startTime: [1_700_000_000, 0], endTime: [Number(TIME_DOMAIN.maxNanos / 1_000_000_000n) + 1, 0] }),
      ],
      ['timestamp_out_of_range', readableSpan({ startTime: [9_214_646_400, 0], endTime: [9_214_646_401, 0] })],
    ];
    const selfParented = nextId(8);
    cases.push(['invalid_parent_span_id', readableSpan(withIds(nextId(16), selfParented, selfParented))]);

    const result = decode(cases.map(([, span]) => span));

    const expectedReasons: Partial<Record<RejectReason, number>> = {};
    for (const [reason] of cases) if (reason !== 'valid') expectedReasons[reason] = (expectedReasons[reason] ?? 0) + 1;
    const valid = cases.filter(([reason]) => reason === 'valid').map(([, span]) => span.spanContext().spanId);
    expect(result.received).toBe(cases.length);
    expect(result.rejected).toBe(cases.length - valid.length);
    expect(result.rejectReasons).toStrictEqual(expectedReasons);
    expect(result.spans.map((span) => span.spanId)).toEqual(valid);
  });

  it("gives an event with an unset or unstorable time its span's start", () => {
    const start: [number, number] = [1_700_000_000, 5];
    const events = [
      event({ name: 'unset', time: [0, 0] }),
      event({ name: 'far', time: [9_999_999_999, 0] }),
      event({ name: 'kept', time: [1_700_000_000, 500] }),
    ];

    const [span] = decode([readableSpan({ startTime: start, endTime: [1_700_000_001, 0], events })]).spans;

    const startNanos = BigInt(start[0]) * 1_000_000_000n + BigInt(start[1]);
    expect(span.events.map((e) => [e.name, e.timeUnixNano])).toEqual([
      ['unset', startNanos],
      ['far', startNanos],
      ['kept', 1_700_000_000n * 1_000_000_000n + 500n],
    ]);
  });

  it('reads an all-zero parent span id as a root span', () => {
    const span = readableSpan(withIds(nextId(16), nextId(8), ZERO_SPAN_ID));

    const result = decode([span]);

    expect(result.rejected).toBe(0);
    expect(result.spans[0].parentSpanId).toBe('');
  });

  it('drops links without a valid target and counts them as dropped', () => {
    const good = link();
    const links = [
      link({ context: { traceId: ZERO_TRACE_ID, spanId: nextId(8), traceFlags: 0 } }),
      good,
      link({ context: { traceId: nextId(16), spanId: ZERO_SPAN_ID, traceFlags: 0 } }),
    ];

    const [span] = decode([readableSpan({ links, droppedLinksCount: 1 })]).spans;

    expect(span.links.map((kept) => kept.spanId)).toEqual([good.context.spanId]);
    expect(span.droppedLinksCount).toBe(1 + 2);
    expect(span.truncated).toBe(false);
  });

  it('keeps the first maxAttributesPerSpan attributes and counts the rest as dropped', () => {
    const attributes = Object.fromEntries(Array.from({ length: 7 }, (_, index) => [`attribute.${index}`, index]));
    const limits = { ...DEFAULT_DECODE_LIMITS, maxAttributesPerSpan: 3 };

    const [span] = decode([readableSpan({ attributes, droppedAttributesCount: 2 })], limits).spans;

    expect(span.attributes).toStrictEqual(Object.fromEntries(Object.entries(attributes).slice(0, 3)));
    expect(span.droppedAttributesCount).toBe(2 + 7 - 3);
    expect(span.truncated).toBe(true);
  });

  it('caps event and link attributes the same way', () => {
    const attributes = { a: 1, b: 2, c: 3 };
    const limits = { ...DEFAULT_DECODE_LIMITS, maxAttributesPerSpan: 2 };

    const [span] = decode(
      [readableSpan({ events: [event({ attributes })], links: [link({ attributes, droppedAttributesCount: 4 })] })],
      limits,
    ).spans;

    expect(span.events[0]).toMatchObject({ attributes: { a: 1, b: 2 }, droppedAttributesCount: 1 });
    expect(span.links[0]).toMatchObject({ attributes: { a: 1, b: 2 }, droppedAttributesCount: 4 + 1 });
    expect(span.truncated).toBe(true);
  });

  it('cuts long string values, in nested values too, and marks the span', () => {
    const limit = 16;
    const long = 'abcdefghijklmnopqrstuvwxyz';
    const bytes = Uint8Array.from({ length: 40 }, (_, index) => index);
    const attributes = { long, short: 'fits', nested: { list: [long, 'ok'] }, bytes };
    const limits = { ...DEFAULT_DECODE_LIMITS, maxAttributeValueLength: limit };

    const [span] = decode([readableSpan({ attributes, status: { code: 2, message: long } })], limits).spans;

    const wholeGroups = Math.floor(limit / 4) * 3; // base64 keeps whole 3-byte groups
    expect(span.attributes).toStrictEqual({
      long: long.slice(0, limit),
      short: 'fits',
      nested: { list: [long.slice(0, limit), 'ok'] },
      bytes: Buffer.from(bytes.subarray(0, wholeGroups)).toString('base64'),
    });
    expect(span.statusMessage).toBe(long.slice(0, limit));
    expect(span.truncated).toBe(true);
  });

  it('never cuts a surrogate pair in half', () => {
    const limits = { ...DEFAULT_DECODE_LIMITS, maxAttributeValueLength: 4 };
    const text = 'abc😀def'; // the emoji is UTF-16 units 3 and 4

    const [span] = decode([readableSpan({ attributes: { text } })], limits).spans;

    expect(span.attributes.text).toBe('abc');
  });

  it('cuts span and event names to maxNameLength', () => {
    const limits = { ...DEFAULT_DECODE_LIMITS, maxNameLength: 5 };

    const [span] = decode([readableSpan({ name: 'chat gpt-4o', events: [event({ name: 'gen_ai.choice' })] })], limits).spans;

    expect(span.name).toBe('chat ');
    expect(span.events[0].name).toBe('gen_a');
    expect(span.truncated).toBe(true);
  });

  it('keeps the first maxEventsPerSpan events and maxLinksPerSpan links', () => {
    const events = Array.from({ length: 5 }, (_, index) => event({ name: `event.${index}` }));
    const links = Array.from({ length: 4 }, () => link());
    const limits = { ...DEFAULT_DECODE_LIMITS, maxEventsPerSpan: 2, maxLinksPerSpan: 1 };

    const [span] = decode([readableSpan({ events, links, droppedEventsCount: 1 })], limits).spans;

    expect(span.events.map((kept) => kept.name)).toEqual(['event.0', 'event.1']);
    expect(span.droppedEventsCount).toBe(1 + 3);
    expect(span.links.map((kept) => kept.spanId)).toEqual([links[0].context.spanId]);
    expect(span.droppedLinksCount).toBe(3);
    expect(span.truncated).toBe(true);
  });

  it('applies the caps to resource and scope attributes and marks all their spans', () => {
    const resource = resourceFromAttributes({ 'service.name': 'svc', 'host.name': 'h', 'os.type': 'linux' });
    const other = resourceFromAttributes({ 'service.name': 'other' });
    const limits = { ...DEFAULT_DECODE_LIMITS, maxAttributesPerSpan: 2 };

    const scope = { name: 'lib', version: '1', attributes: { a: 1, b: 2, c: 3, d: 4 } };

    const spans = decode(
      [
        readableSpan({ resource }),
        readableSpan({ resource }),
        readableSpan({ resource: other }),
        readableSpan({ resource: other, instrumentationScope: scope }),
      ],
      limits,
    ).spans;

    expect(spans[0].resource).toStrictEqual({
      attributes: { 'service.name': 'svc', 'host.name': 'h' },
      droppedAttributesCount: 1,
      schemaUrl: '',
    });
    expect(spans[3].scope).toMatchObject({ attributes: { a: 1, b: 2 }, droppedAttributesCount: 2 });
    expect(spans.map((span) => span.truncated)).toEqual([true, true, false, true]);
  });

  it('leaves spans within every cap untouched', () => {
    const [span] = decode([readableSpan({ name: 'ok', attributes: { a: 'b' }, events: [event()], links: [link()] })]).spans;

    expect(span.truncated).toBe(false);
    expect(span.droppedAttributesCount).toBe(0);
  });
});
