import { SpanKind as OtelSpanKind, SpanStatusCode } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { decodeJsonExport } from './json.decoder';
import { SpanKind, StatusCode } from './otlp.model';
import { decodeProtobufExport } from './protobuf.decoder';
import {
  ALL_VALUE_KINDS,
  DEFAULT_RESOURCE,
  DEFAULT_SCOPE,
  event,
  expectedAttributes,
  expectedFlags,
  link,
  nanosOf,
  nextId,
  readableSpan,
  toJson,
  toProtobuf,
  traceState,
} from './testing/otel-span.fixture';
import { concatBytes, encodeMessage, requestOfSpans, unknownFields, validSpanFields } from './testing/otlp-proto.fixture';

describe('decodeProtobufExport', () => {
  it('reads every span field the OpenTelemetry serializer writes', () => {
    const traceId = nextId(16);
    const linkContext = { traceId: nextId(16), spanId: nextId(8), traceFlags: 1, isRemote: true, traceState: traceState('linked=1') };
    const scope = {
      name: 'openinference.instrumentation.openai',
      version: '0.1.2',
      schemaUrl: 'https://opentelemetry.io/schemas/1.30.0',
      attributes: { 'scope.attr': 'yes' },
    };
    const resource = resourceFromAttributes(
      { 'service.name': 'agent', 'service.instance.id': 7 },
      { schemaUrl: 'https://opentelemetry.io/schemas/1.29.0' },
    );
    const input = readableSpan({
      name: 'chat gpt-4o-mini',
      kind: OtelSpanKind.CLIENT,
      context: { traceId, spanId: nextId(8), traceFlags: 1, traceState: traceState('vendor=abc,other=1') },
      parentSpanContext: { traceId, spanId: nextId(8), traceFlags: 1, isRemote: true },
      startTime: [1_718_000_000, 123_456_789],
      endTime: [1_718_000_002, 5],
      status: { code: SpanStatusCode.ERROR, message: 'rate limited' },
      attributes: { 'gen_ai.usage.input_tokens': 1200, 'gen_ai.system': 'openai' },
      events: [
        event({
          name: 'exception',
          time: [1_718_000_001, 999],
          attributes: { 'exception.type': 'RateLimitError' },
          droppedAttributesCount: 2,
        }),
      ],
      links: [link({ context: linkContext, attributes: { 'link.kind': 'follows' }, droppedAttributesCount: 1 })],
      droppedAttributesCount: 3,
      droppedEventsCount: 4,
      droppedLinksCount: 5,
      resource,
      instrumentationScope: scope,
    });
    const context = input.spanContext();

    const result = decodeProtobufExport(toProtobuf([input]));

    expect(result).toMatchObject({ received: 1, rejected: 0, rejectReasons: {} });
    expect(result.spans).toStrictEqual([
      {
        traceId: context.traceId,
        spanId: context.spanId,
        parentSpanId: input.parentSpanContext?.spanId,
        traceState: 'vendor=abc,other=1',
        flags: expectedFlags(context.traceFlags, true),
        name: input.name,
        kind: SpanKind.CLIENT,
        startTimeUnixNano: nanosOf(input.startTime),
        endTimeUnixNano: nanosOf(input.endTime),
        attributes: expectedAttributes(input.attributes),
        droppedAttributesCount: 3,
        events: [
          {
            timeUnixNano: nanosOf(input.events[0].time),
            name: 'exception',
            attributes: { 'exception.type': 'RateLimitError' },
            droppedAttributesCount: 2,
          },
        ],
        droppedEventsCount: 4,
        links: [
          {
            traceId: linkContext.traceId,
            spanId: linkContext.spanId,
            traceState: 'linked=1',
            attributes: { 'link.kind': 'follows' },
            droppedAttributesCount: 1,
            flags: expectedFlags(linkContext.traceFlags, true),
          },
        ],
        droppedLinksCount: 5,
        statusCode: StatusCode.ERROR,
        statusMessage: 'rate limited',
        resource: { attributes: expectedAttributes(resource.attributes), droppedAttributesCount: 0, schemaUrl: resource.schemaUrl },
        scope: {
          name: scope.name,
          version: scope.version,
          attributes: expectedAttributes(scope.attributes),
          droppedAttributesCount: 0,
          schemaUrl: scope.schemaUrl,
        },
        truncated: false,
      },
    ]);
  });

  it('maps every OpenTelemetry span kind and status code', () => {
    const kinds: [OtelSpanKind, SpanKind][] = [
      [OtelSpanKind.INTERNAL, SpanKind.INTERNAL],
      [OtelSpanKind.SERVER, SpanKind.SERVER],
      [OtelSpanKind.CLIENT, SpanKind.CLIENT],
      [OtelSpanKind.PRODUCER, SpanKind.PRODUCER],
      [OtelSpanKind.CONSUMER, SpanKind.CONSUMER],
    ];
    const statuses: [SpanStatusCode, StatusCode][] = [
      [SpanStatusCode.UNSET, StatusCode.UNSET],
      [SpanStatusCode.OK, StatusCode.OK],
      [SpanStatusCode.ERROR, StatusCode.ERROR],
    ];
    const spans = kinds.flatMap(([kind]) => statuses.map(([code]) => readableSpan({ kind, status: { code } })));

    const decoded = decodeProtobufExport(toProtobuf(spans)).spans;

    expect(decoded.map((span) => [span.kind, span.statusCode])).toEqual(
      kinds.flatMap(([, kind]) => statuses.map(([, code]) => [kind, code])),
    );
  });

  it('turns every AnyValue kind into plain values', () => {
    const input = readableSpan({ attributes: ALL_VALUE_KINDS });

    const [span] = decodeProtobufExport(toProtobuf([input])).spans;

    expect(span.attributes).toEqual(expectedAttributes(ALL_VALUE_KINDS));
    expect(span.attributes['int.beyond_safe']).toBe(BigInt(2 ** 60).toString());
    expect(span.attributes['bytes.value']).toBe(Buffer.from(ALL_VALUE_KINDS['bytes.value']).toString('base64'));
  });

  it('reads int64 values exactly, as numbers while safe and as decimal strings beyond', () => {
    const values = [
      '9223372036854775807',
      '-9223372036854775808',
      '9007199254740991',
      '-9007199254740991',
      '9007199254740992',
      '-9007199254740992',
      '-1',
      '0',
    ];
    const span = encodeMessage('otlp.Span', {
      ...validSpanFields(),
      attributes: values.map((value, index) => ({ key: `int.${index}`, value: { intValue: value } })),
    });

    const [decoded] = decodeProtobufExport(requestOfSpans(span)).spans;

    const expected = Object.fromEntries(
      values.map((value, index) => [`int.${index}`, Number.isSafeInteger(Number(value)) ? Number(value) : value]),
    );
    expect(decoded.attributes).toStrictEqual(expected);
  });

  it('shares one resource object per ResourceSpans and one scope object per ScopeSpans', () => {
    const otherResource = resourceFromAttributes({ 'service.name': 'billing' });
    const otherScope = { name: 'other-scope', version: '2.0.0' };
    const spans = [DEFAULT_RESOURCE, otherResource].flatMap((resource) =>
      [DEFAULT_SCOPE, otherScope].flatMap((instrumentationScope) => [
        readableSpan({ resource, instrumentationScope }),
        readableSpan({ resource, instrumentationScope }),
      ]),
    );

    const decoded = decodeProtobufExport(toProtobuf(spans)).spans;

    expect(decoded).toHaveLength(8);
    const resources = new Set(decoded.map((span) => span.resource));
    const scopes = new Set(decoded.map((span) => span.scope));
    expect(resources.size).toBe(2);
    expect(scopes.size).toBe(4);
    for (let index = 0; index < 8; index += 2) {
      expect(decoded[index].scope).toBe(decoded[index + 1].scope);
      expect(decoded[index].resource.attributes).toEqual(expectedAttributes(spans[index].resource.attributes));
      expect(decoded[index].scope.name).toBe(spans[index].instrumentationScope.name);
    }
  });

  it('gives exactly the spans the JSON decoder gives for the same export', () => {
    // The OTel JSON serializer writes numbers with JSON.stringify, which rounds 2^60 and turns
    // NaN/±Infinity into null, so those values cannot round-trip through its JSON.
    const {
      'int.beyond_safe': _rounded,
      'double.nan': _nan,
      'double.infinity': _infinity,
      'double.negative_infinity': _negativeInfinity,
      ...attributes
    } = ALL_VALUE_KINDS;
    const traceId = nextId(16);
    const spans = [
      readableSpan({
        kind: OtelSpanKind.SERVER,
        context: { traceId, spanId: nextId(8), traceFlags: 1, traceState: traceState('a=1') },
        attributes,
        events: [event({ attributes: { 'event.n': 1 } }), event({ name: 'second' })],
        links: [link({ attributes: attributes })],
        status: { code: SpanStatusCode.OK },
      }),
      readableSpan({
        context: { traceId, spanId: nextId(8), traceFlags: 0 },
        parentSpanContext: { traceId, spanId: nextId(8), traceFlags: 0, isRemote: false },
      }),
      readableSpan({
        resource: resourceFromAttributes({ 'service.name': 'other' }),
        instrumentationScope: { name: 'x', version: '1', schemaUrl: 'https://x' },
      }),
    ];

    const fromProtobuf = decodeProtobufExport(toProtobuf(spans));

    expect(fromProtobuf.spans).toHaveLength(3);
    expect(decodeJsonExport(toJson(spans))).toStrictEqual(fromProtobuf);
  });

  it('skips unknown fields of every wire type', () => {
    const fields = validSpanFields();
    const plain = requestOfSpans(encodeMessage('otlp.Span', fields));
    const spanWithUnknowns = concatBytes(unknownFields(), encodeMessage('otlp.Span', fields), unknownFields());
    const withUnknowns = concatBytes(unknownFields(), requestOfSpans(spanWithUnknowns), unknownFields());

    expect(decodeProtobufExport(withUnknowns)).toStrictEqual(decodeProtobufExport(plain));
    expect(decodeProtobufExport(withUnknowns).spans).toHaveLength(1);
  });

  it('ignores the profiles-only strindex fields without failing', () => {
    const span = encodeMessage('otlp.Span', {
      ...validSpanFields(),
      attributes: [
        { key: 'with.key.strindex', keyStrindex: 3, value: { stringValue: 'kept' } },
        { key: 'only.value.strindex', value: { stringValueStrindex: 5 } },
      ],
    });

    const [decoded] = decodeProtobufExport(requestOfSpans(span)).spans;

    expect(decoded.attributes).toStrictEqual({ 'with.key.strindex': 'kept', 'only.value.strindex': null });
  });

  it('reads the pre-1.0 instrumentation_library_spans field (1000), resource dropped counts and entity refs', () => {
    const fields = validSpanFields();
    const request = encodeMessage('otlp.ExportTraceServiceRequest', {
      resourceSpans: [
        {
          resource: {
            attributes: [{ key: 'service.name', value: { stringValue: 'legacy' } }],
            droppedAttributesCount: 6,
            entityRefs: [{ type: 'service', idKeys: ['service.name'] }],
          },
          instrumentationLibrarySpans: [{ scope: { name: 'old-lib', version: '0.9', droppedAttributesCount: 2 }, spans: [fields] }],
        },
      ],
    });

    const [span] = decodeProtobufExport(request).spans;

    expect(span.traceId).toBe(Buffer.from(fields.traceId).toString('hex'));
    expect(span.resource).toStrictEqual({ attributes: { 'service.name': 'legacy' }, droppedAttributesCount: 6, schemaUrl: '' });
    expect(span.scope).toStrictEqual({ name: 'old-lib', version: '0.9', attributes: {}, droppedAttributesCount: 2, schemaUrl: '' });
  });

  it('reads enum values it does not know as UNSPECIFIED and UNSET', () => {
    const spans = [9, -1].map((value) =>
      encodeMessage('otlp.Span', { ...validSpanFields(), kind: value, status: { code: value, message: 'm' } }),
    );

    const decoded = decodeProtobufExport(requestOfSpans(...spans)).spans;

    expect(decoded.map((span) => [span.kind, span.statusCode, span.statusMessage])).toEqual([
      [SpanKind.UNSPECIFIED, StatusCode.UNSET, 'm'],
      [SpanKind.UNSPECIFIED, StatusCode.UNSET, 'm'],
    ]);
  });

  it('accepts an empty request and empty envelopes as zero spans', () => {
    const empty = { spans: [], received: 0, rejected: 0, rejectReasons: {} };
    expect(decodeProtobufExport(new Uint8Array(0))).toStrictEqual(empty);
    const emptyEnvelopes = encodeMessage('otlp.ExportTraceServiceRequest', {
      resourceSpans: [{}, { scopeSpans: [{}, { scope: { name: 'x' } }] }],
    });
    expect(decodeProtobufExport(emptyEnvelopes)).toStrictEqual(empty);
  });
});
