import { Reader } from 'protobufjs';
import { OtlpDecodeError } from './otlp.model';
import { decodeProtobufExport } from './protobuf.decoder';
import { ALL_VALUE_KINDS, event, link, readableSpan, toProtobuf } from './testing/otel-span.fixture';
import { concatBytes, encodeMessage, lengthDelimited, requestOfSpans, validSpanFields } from './testing/otlp-proto.fixture';

describe('decodeProtobufExport on bodies it cannot use', () => {
  const valid = () => toProtobuf([readableSpan({ attributes: ALL_VALUE_KINDS, events: [event()], links: [link()] }), readableSpan()]);

  it('names the field and the byte counts when a length runs past the end', () => {
    const body = valid();
    const cut = body.subarray(0, body.length - 10);
    const reader = Reader.create(body);
    reader.uint32(); // tag of resource_spans
    const declared = reader.uint32();

    expect(() => decodeProtobufExport(cut)).toThrow(OtlpDecodeError);
    expect(() => decodeProtobufExport(cut)).toThrow(
      `ExportTraceServiceRequest.resource_spans declares ${declared} bytes but only ${cut.length - reader.pos} remain`,
    );
  });

  it('throws OtlpDecodeError, never anything else, for every truncation of a valid body', () => {
    const body = valid();
    for (let length = 1; length < body.length; length++) {
      let outcome: unknown;
      try {
        outcome = decodeProtobufExport(body.subarray(0, length));
      } catch (error) {
        outcome = error;
      }
      // Cut exactly between two top-level fields the prefix is a valid, smaller request.
      if (!(outcome instanceof OtlpDecodeError)) expect(outcome).toMatchObject({ received: expect.any(Number) });
      else expect(outcome.message).toMatch(/^protobuf body is (truncated|malformed): /);
    }
  });

  it('throws OtlpDecodeError, never anything else, for random garbage and flipped bytes', () => {
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const body = valid();
    for (let round = 0; round < 3000; round++) {
      const input =
        round % 2 ? Uint8Array.from({ length: 1 + Math.floor(random() * 200) }, () => Math.floor(random() * 256)) : Uint8Array.from(body);
      if (round % 2 === 0) for (let flips = 0; flips < 3; flips++) input[Math.floor(random() * input.length)] = Math.floor(random() * 256);
      try {
        decodeProtobufExport(input);
      } catch (error) {
        expect(error).toBeInstanceOf(OtlpDecodeError);
      }
    }
  });

  it('refuses the group wire types and invalid wire types, naming the field', () => {
    const body = valid();
    expect(() => decodeProtobufExport(concatBytes(body, Uint8Array.of((5 << 3) | 3)))).toThrow(
      'protobuf body is malformed: ExportTraceServiceRequest field 5 uses the group wire type 3, which OTLP messages never contain',
    );
    expect(() => decodeProtobufExport(concatBytes(body, Uint8Array.of((5 << 3) | 4)))).toThrow('group wire type 4');
    expect(() => decodeProtobufExport(concatBytes(body, Uint8Array.of((5 << 3) | 7)))).toThrow(
      'ExportTraceServiceRequest field 5 has the invalid wire type 7',
    );
    expect(() => decodeProtobufExport(Uint8Array.of(0x00))).toThrow('ExportTraceServiceRequest has a field number 0');
  });

  it('refuses a known field sent with another wire type', () => {
    const nameAsVarint = concatBytes(encodeMessage('otlp.Span', validSpanFields()), Uint8Array.of((5 << 3) | 0, 1));

    expect(() => decodeProtobufExport(requestOfSpans(nameAsVarint))).toThrow(
      'protobuf body is malformed: Span.name (field 5) has wire type 0 (VARINT), expected 2 (LEN)',
    );
  });

  it('refuses a varint longer than 10 bytes and a field that overruns its message', () => {
    const longVarint = concatBytes(Uint8Array.of((10 << 3) | 0), new Uint8Array(10).fill(0xff), Uint8Array.of(1));
    expect(() => decodeProtobufExport(requestOfSpans(concatBytes(encodeMessage('otlp.Span', validSpanFields()), longVarint)))).toThrow(
      'Span.dropped_attributes_count has a varint longer than 10 bytes',
    );
    // A Span whose last field (a fixed64) is cut by its own length prefix: the read runs into the next span.
    const span = encodeMessage('otlp.Span', validSpanFields());
    const shortened = concatBytes(Uint8Array.of(0x12, span.length - 4), span);
    expect(() => decodeProtobufExport(lengthDelimited(1, lengthDelimited(2, concatBytes(shortened, Uint8Array.of(0, 0, 0, 0)))))).toThrow(
      'a field of Span runs 4 bytes past the end of the message',
    );
  });

  it('refuses AnyValues nested deeper than 100 levels instead of overflowing the stack', () => {
    // Built by hand: protobufjs itself refuses to encode this deep.
    let value = encodeMessage('otlp.AnyValue', { stringValue: 'bottom' });
    for (let depth = 0; depth < 150; depth++) value = lengthDelimited(5, lengthDelimited(1, value)); // array_value { values }
    const keyValue = concatBytes(encodeMessage('otlp.KeyValue', { key: 'deep' }), lengthDelimited(2, value));
    const span = concatBytes(encodeMessage('otlp.Span', validSpanFields()), lengthDelimited(9, keyValue));

    expect(() => decodeProtobufExport(requestOfSpans(span))).toThrow('protobuf body nests AnyValues deeper than 100 levels');
  });
});
