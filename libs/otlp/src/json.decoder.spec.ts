import { SpanKind as OtelSpanKind, SpanStatusCode } from '@opentelemetry/api';
import traceExample from './fixtures/otlp-example-trace.json';
import { decodeJsonExport } from './json.decoder';
import { SpanKind, StatusCode } from './otlp.model';
import { decodeProtobufExport } from './protobuf.decoder';
import { event, link, nextId, readableSpan, toJson, toProtobuf, traceState } from './testing/otel-span.fixture';
import { Json, snakeCased, spansOf } from './testing/otlp-json.fixture';

/** A realistic export from the OTel JSON serializer: every field set, nested values, a link and an event. */
function sampleSpans() {
  const traceId = nextId(16);
  return [
    readableSpan({
      name: 'agent run',
      kind: OtelSpanKind.SERVER,
      context: { traceId, spanId: nextId(8), traceFlags: 1, traceState: traceState('k=v') },
      attributes: {
        'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }],
        'gen_ai.usage.input_tokens': 12,
        score: 0.5,
        ok: true,
      },
      events: [event({ name: 'gen_ai.choice', attributes: { index: 0 } })],
      links: [link({ attributes: { why: 'retry' } })],
      status: { code: SpanStatusCode.ERROR, message: 'tool failed' },
    }),
    readableSpan({
      kind: OtelSpanKind.CLIENT,
      context: { traceId, spanId: nextId(8), traceFlags: 0 },
      parentSpanContext: { traceId, spanId: nextId(8), traceFlags: 0 },
    }),
  ];
}

describe('decodeJsonExport', () => {
  it('decodes the OTLP specification example (examples/trace.json)', () => {
    const resourceSpans = traceExample.resourceSpans[0];
    const scopeSpans = resourceSpans.scopeSpans[0];
    const example = scopeSpans.spans[0];

    const result = decodeJsonExport(JSON.stringify(traceExample));

    expect(result).toMatchObject({ received: 1, rejected: 0 });
    expect(result.spans[0]).toStrictEqual({
      traceId: example.traceId.toLowerCase(),
      spanId: example.spanId.toLowerCase(),
      parentSpanId: example.parentSpanId.toLowerCase(),
      traceState: '',
      flags: 0,
      name: example.name,
      kind: example.kind,
      startTimeUnixNano: BigInt(example.startTimeUnixNano),
      endTimeUnixNano: BigInt(example.endTimeUnixNano),
      attributes: Object.fromEntries(example.attributes.map(({ key, value }) => [key, value.stringValue])),
      droppedAttributesCount: 0,
      events: [],
      droppedEventsCount: 0,
      links: [],
      droppedLinksCount: 0,
      statusCode: StatusCode.UNSET,
      statusMessage: '',
      resource: {
        attributes: Object.fromEntries(resourceSpans.resource.attributes.map(({ key, value }) => [key, value.stringValue])),
        droppedAttributesCount: 0,
        schemaUrl: '',
      },
      scope: {
        name: scopeSpans.scope.name,
        version: scopeSpans.scope.version,
        attributes: Object.fromEntries(scopeSpans.scope.attributes.map(({ key, value }) => [key, value.stringValue])),
        droppedAttributesCount: 0,
        schemaUrl: '',
      },
      truncated: false,
    });
    expect(result.spans[0].kind).toBe(SpanKind.SERVER);
  });

  it('reads the body as text (with or without a byte order mark), UTF-8 bytes or an already parsed value alike', () => {
    const text = toJson(sampleSpans());
    const fromText = decodeJsonExport(text);

    expect(fromText.spans).toHaveLength(2);
    expect(decodeJsonExport(new TextEncoder().encode(text))).toStrictEqual(fromText);
    expect(decodeJsonExport(JSON.parse(text))).toStrictEqual(fromText);
    expect(decodeJsonExport(`\ufeff${text}`)).toStrictEqual(fromText);
  });

  it('reads snake_case field names like lowerCamelCase ones', () => {
    const text = toJson(sampleSpans());

    expect(decodeJsonExport(snakeCased(JSON.parse(text)))).toStrictEqual(decodeJsonExport(text));
  });

  it('reads ids as hex in any case and as base64, padded or not, standard or URL-safe', () => {
    const spans = sampleSpans();
    const expected = decodeProtobufExport(toProtobuf(spans));
    const idFields = ['traceId', 'spanId', 'parentSpanId'];
    const encodings: [string, (hex: string) => string][] = [
      ['upper-case hex', (hex) => hex.toUpperCase()],
      ['base64', (hex) => Buffer.from(hex, 'hex').toString('base64')],
      ['unpadded base64url', (hex) => Buffer.from(hex, 'hex').toString('base64url')],
    ];
    for (const [, encode] of encodings) {
      const request = JSON.parse(toJson(spans));
      for (const span of spansOf(request)) {
        for (const item of [span, ...(span.links as Json[])])
          for (const key of idFields) if (typeof item[key] === 'string') item[key] = encode(item[key] as string);
      }
      expect(decodeJsonExport(request)).toStrictEqual(expected);
    }
  });

  it('reads int64 and fixed64 fields as strings or numbers, exactly past 2^53', () => {
    const spans = sampleSpans();
    const text = toJson(spans);
    const timesAsNumbers = text.replace(/"(startTimeUnixNano|endTimeUnixNano|timeUnixNano)":"(\d+)"/g, '"$1":$2');
    const intsAsStrings = text.replace(/"intValue":(-?\d+)/g, '"intValue":"$1"');
    expect(timesAsNumbers).not.toBe(text);
    expect(intsAsStrings).not.toBe(text);

    expect(decodeJsonExport(timesAsNumbers)).toStrictEqual(decodeJsonExport(text));
    expect(decodeJsonExport(intsAsStrings)).toStrictEqual(decodeJsonExport(text));
    const [span] = decodeJsonExport(timesAsNumbers).spans;
    expect(span.startTimeUnixNano).toBe(BigInt(/"startTimeUnixNano":"(\d+)"/.exec(text)?.[1] ?? ''));
  });

  it('reads int values beyond the safe range as exact decimal strings, from strings and from number literals', () => {
    const big = ['9223372036854775807', '-9223372036854775808', '9007199254740993'];
    const span = spansOf(JSON.parse(toJson([readableSpan()])))[0];
    // Number literals with all their digits, as a Go or Java exporter writes them; JSON.parse alone would round them.
    const attributes = big.map(
      (value, index) => `{"key":"string.${index}","value":{"intValue":"${value}"}},{"key":"number.${index}","value":{"intValue":${value}}}`,
    );
    const text = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, attributes: [] }] }] }] }).replace(
      '"attributes":[]',
      `"attributes":[${attributes.join(',')}]`,
    );

    const [decoded] = decodeJsonExport(text).spans;

    expect(decoded.attributes).toStrictEqual(
      Object.fromEntries(
        big.flatMap((value, index) => [
          [`string.${index}`, value],
          [`number.${index}`, value],
        ]),
      ),
    );
  });

  it('reads enums as integers, numeric strings, full names and short names', () => {
    const kinds: [unknown, SpanKind][] = [
      [2, SpanKind.SERVER],
      ['3', SpanKind.CLIENT],
      ['SPAN_KIND_PRODUCER', SpanKind.PRODUCER],
      ['consumer', SpanKind.CONSUMER],
      ['Internal', SpanKind.INTERNAL],
      ['SPAN_KIND_NONSENSE', SpanKind.UNSPECIFIED],
      [42, SpanKind.UNSPECIFIED],
    ];
    const codes: [unknown, StatusCode][] = [
      [2, StatusCode.ERROR],
      ['STATUS_CODE_OK', StatusCode.OK],
      ['error', StatusCode.ERROR],
      ['STATUS_CODE_UNSET', StatusCode.UNSET],
      ['1', StatusCode.OK],
      [{}, StatusCode.UNSET],
      [7, StatusCode.UNSET],
    ];
    const request = JSON.parse(toJson(kinds.map(() => readableSpan())));
    spansOf(request).forEach((span, index) => {
      span.kind = kinds[index][0];
      span.status = { code: codes[index][0] };
    });

    const decoded = decodeJsonExport(request).spans;

    expect(decoded.map((span) => [span.kind, span.statusCode])).toEqual(kinds.map(([, kind], index) => [kind, codes[index][1]]));
  });

  it('ignores unknown fields at every level', () => {
    const text = toJson(sampleSpans());
    const request = JSON.parse(text);
    const noise = { futureField: { nested: [1, 2] }, 'x-vendor': 'y' };
    Object.assign(request, noise);
    for (const resourceSpans of request.resourceSpans) {
      Object.assign(resourceSpans, noise);
      Object.assign(resourceSpans.resource, noise);
      for (const scopeSpans of resourceSpans.scopeSpans) Object.assign(scopeSpans, noise, { scope: { ...scopeSpans.scope, ...noise } });
    }
    for (const span of spansOf(request)) {
      Object.assign(span, noise);
      Object.assign(span.status as Json, noise);
      for (const item of [...(span.events as Json[]), ...(span.links as Json[])]) Object.assign(item, noise);
    }

    expect(decodeJsonExport(request)).toStrictEqual(decodeJsonExport(text));
  });

  it('keeps kvlistValue and arrayValue structured and reads bytes, doubles and their NaN/Infinity strings', () => {
    const request = JSON.parse(toJson([readableSpan()]));
    const bytes = Uint8Array.of(0, 255, 16, 32);
    spansOf(request)[0].attributes = [
      {
        key: 'kvlist',
        value: {
          kvlistValue: {
            values: [
              { key: 'role', value: { stringValue: 'user' } },
              { key: 'tags', value: { arrayValue: { values: [{ intValue: '1' }, { boolValue: true }, {}] } } },
            ],
          },
        },
      },
      { key: 'bytes', value: { bytesValue: Buffer.from(bytes).toString('base64url') } },
      { key: 'double', value: { doubleValue: 2.5 } },
      { key: 'double.string', value: { doubleValue: '2.5' } },
      { key: 'nan', value: { doubleValue: 'NaN' } },
      { key: 'infinity', value: { doubleValue: 'Infinity' } },
      { key: 'negative.infinity', value: { doubleValue: '-Infinity' } },
      { key: 'empty', value: {} },
      { key: 'missing' },
      { key: 'strindex.only', value: { stringValueStrindex: 4 } },
      { key: 'bare', value: 'not wrapped' },
    ];

    const [span] = decodeJsonExport(request).spans;

    expect(span.attributes).toStrictEqual({
      kvlist: { role: 'user', tags: [1, true, null] },
      bytes: Buffer.from(bytes).toString('base64'),
      double: 2.5,
      'double.string': 2.5,
      nan: Number.NaN,
      infinity: Number.POSITIVE_INFINITY,
      'negative.infinity': Number.NEGATIVE_INFINITY,
      empty: null,
      missing: null,
      'strindex.only': null,
      bare: 'not wrapped',
    });
  });

  it('accepts attributes sent as a plain {key: value} object and normalises them', () => {
    const request = JSON.parse(toJson([readableSpan()]));
    const plain = {
      'llm.model': 'claude',
      tokens: 42,
      ratio: 0.5,
      ok: false,
      nothing: null,
      list: [1, 'two', { three: 3 }],
      nested: { deep: { deeper: ['x'] } },
      wrapped: { intValue: '7' },
    };
    spansOf(request)[0].attributes = plain;

    const [span] = decodeJsonExport(request).spans;

    const { wrapped: _wrapped, ...unwrapped } = plain;
    expect(span.attributes).toStrictEqual({ ...unwrapped, wrapped: 7 });
  });

  it('keeps an attribute named __proto__ as a plain property', () => {
    const text = JSON.stringify({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  ...spansOf(JSON.parse(toJson([readableSpan()])))[0],
                  attributes: [{ key: '__proto__', value: { kvlistValue: { values: [{ key: 'polluted', value: { boolValue: true } }] } } }],
                },
              ],
            },
          ],
        },
      ],
    });

    const [span] = decodeJsonExport(text).spans;

    expect(Object.keys(span.attributes)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(span.attributes)).toBe(Object.prototype);
    expect(({} as Json).polluted).toBeUndefined();
  });

  it('reads the pre-1.0 instrumentationLibrarySpans and instrumentationLibrary names', () => {
    const text = toJson([readableSpan()]);
    const request = JSON.parse(text);
    const resourceSpans = request.resourceSpans[0];
    const { scope, ...scopeSpans } = resourceSpans.scopeSpans[0];
    resourceSpans.instrumentationLibrarySpans = [{ ...scopeSpans, instrumentationLibrary: scope }];
    delete resourceSpans.scopeSpans;

    expect(decodeJsonExport(request)).toStrictEqual(decodeJsonExport(text));
    expect(decodeJsonExport(request).spans).toHaveLength(1);
  });

  it('accepts an empty request', () => {
    const empty = { spans: [], received: 0, rejected: 0, rejectReasons: {} };
    expect(decodeJsonExport('{}')).toStrictEqual(empty);
    expect(decodeJsonExport('')).toStrictEqual(empty);
    expect(decodeJsonExport(new Uint8Array(0))).toStrictEqual(empty);
    expect(decodeJsonExport('{"resourceSpans":[]}')).toStrictEqual(empty);
    expect(decodeJsonExport({ resourceSpans: [{ scopeSpans: [{ spans: [] }] }] })).toStrictEqual(empty);
  });
});
