import { OtlpDecodeError } from './otlp.model';

/** Protobuf wire types (protobuf.dev/programming-guides/encoding). 3 and 4 are the deprecated groups. */
export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const SGROUP = 3;
export const EGROUP = 4;
export const I32 = 5;

const WIRE_TYPE_NAMES = ['VARINT', 'I64', 'LEN', 'SGROUP', 'EGROUP', 'I32', 'invalid 6', 'invalid 7'];

/** Field names and wire types of one message, for error messages: `{ 7: ['start_time_unix_nano', I64] }`. */
export interface MessageSchema {
  name: string;
  fields: Record<number, readonly [name: string, wireType: number]>;
}

/**
 * ASCII strings up to this many bytes are decoded by hand: below it TextDecoder's fixed ~70 ns per
 * call costs more than the loop (crossover measured at 10-12 bytes on Node 24).
 */
const SHORT_STRING_BYTES = 12;
const utf8 = new TextDecoder('utf-8');

/**
 * A cursor over protobuf bytes. Every read checks the bytes it needs are there and throws
 * OtlpDecodeError naming the field; `where` arguments are only used to build that message.
 * Callers loop `while (reader.pos < end)` per message and call `expectEnd` after it, so a field that
 * runs past its enclosing message is caught even though primitive reads only check the buffer end.
 */
export class WireReader {
  pos = 0;
  private readonly view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get length(): number {
    return this.bytes.length;
  }

  /** A varint keeping its low 32 bits, unsigned: tags, lengths, uint32 counts, enums and bools. */
  uint32(where: string): number {
    const bytes = this.bytes;
    let pos = this.pos;
    if (pos < bytes.length && bytes[pos] < 0x80) {
      this.pos = pos + 1;
      return bytes[pos];
    }
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (pos >= bytes.length) throw this.truncated(where, 'a varint');
      const byte = bytes[pos++];
      // Bits past 31 fall off the int32 shift: proto3 keeps the low 32 bits of an oversized uint32.
      if (shift < 32) value |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.pos = pos;
        return value >>> 0;
      }
    }
    throw this.malformed(`${where} has a varint longer than 10 bytes`);
  }

  /**
   * An int64 varint (two's complement, 10 bytes when negative) as a number when it is a safe
   * integer, else as its exact decimal string (otlp.model.ts AttributeValue contract).
   */
  int64(where: string): number | string {
    const bytes = this.bytes;
    let pos = this.pos;
    let low = 0;
    let high = 0;
    for (let index = 0; index < 10; index++) {
      if (pos >= bytes.length) throw this.truncated(where, 'a varint');
      const bits = bytes[pos++] & 0x7f;
      if (index < 4) low |= bits << (7 * index);
      else if (index === 4) {
        low |= bits << 28;
        high = bits >>> 4;
      } else high |= bits << (7 * index - 32);
      if (bytes[pos - 1] < 0x80) {
        this.pos = pos;
        return int64Value(low >>> 0, high | 0);
      }
    }
    throw this.malformed(`${where} has a varint longer than 10 bytes`);
  }

  fixed32(where: string): number {
    this.need(4, where);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  /** fixed64 nanoseconds as bigint: they exceed 2^53 (today is ~1.7e18 ns). */
  fixed64(where: string): bigint {
    this.need(8, where);
    const value = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return value;
  }

  double(where: string): number {
    this.need(8, where);
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  /** Reads a LEN prefix and returns where its payload ends; the payload must fit in the enclosing message. */
  lengthEnd(where: string, enclosingEnd: number): number {
    const length = this.uint32(where);
    const end = this.pos + length;
    if (end > enclosingEnd) {
      const left = enclosingEnd - this.pos;
      throw new OtlpDecodeError(
        `protobuf body is truncated: ${where} declares ${length} bytes but only ${left} remain (offset ${this.pos})`,
      );
    }
    return end;
  }

  /** A LEN-prefixed UTF-8 string; invalid UTF-8 becomes U+FFFD rather than failing the request. */
  string(where: string, enclosingEnd: number): string {
    const end = this.lengthEnd(where, enclosingEnd);
    const start = this.pos;
    this.pos = end;
    return this.utf8(start, end);
  }

  utf8(start: number, end: number): string {
    const bytes = this.bytes;
    if (end - start > SHORT_STRING_BYTES) return utf8.decode(bytes.subarray(start, end));
    let text = '';
    for (let pos = start; pos < end; pos++) {
      const byte = bytes[pos];
      if (byte >= 0x80) return utf8.decode(bytes.subarray(start, end));
      text += String.fromCharCode(byte);
    }
    return text;
  }

  /**
   * Skips a field the decoder does not read. A field of the schema with another wire type is an
   * error rather than an unknown field: no OTLP exporter does that, and it is how a logs or
   * metrics export sent to /v1/traces first shows (signal.sniffer.ts then names it).
   */
  skipField(tag: number, schema: MessageSchema, enclosingEnd: number): void {
    const fieldNumber = tag >>> 3;
    const wireType = tag & 7;
    const known = schema.fields[fieldNumber];
    if (known && known[1] !== wireType) {
      const [name, expected] = known;
      throw this.malformed(
        `${schema.name}.${name} (field ${fieldNumber}) has wire type ${wireName(wireType)}, expected ${wireName(expected)}`,
      );
    }
    if (fieldNumber === 0) throw this.malformed(`${schema.name} has a field number 0 (offset ${this.pos})`);
    const where = `${schema.name} field ${fieldNumber}`;
    switch (wireType) {
      case VARINT:
        this.int64(where);
        return;
      case I64:
        this.need(8, where);
        this.pos += 8;
        return;
      case LEN:
        this.pos = this.lengthEnd(where, enclosingEnd);
        return;
      case I32:
        this.need(4, where);
        this.pos += 4;
        return;
      case SGROUP:
      case EGROUP:
        throw this.malformed(`${where} uses the group wire type ${wireType}, which OTLP messages never contain`);
      default:
        throw this.malformed(`${where} has the invalid wire type ${wireType}`);
    }
  }

  /** After a message loop: a field that ran past the message end means a wrong length prefix. */
  expectEnd(end: number, what: string): void {
    if (this.pos !== end) throw this.malformed(`a field of ${what} runs ${this.pos - end} bytes past the end of the message`);
  }

  private need(count: number, where: string): void {
    if (this.pos + count > this.bytes.length) throw this.truncated(where, `${count} bytes`);
  }

  private truncated(where: string, what: string): OtlpDecodeError {
    return new OtlpDecodeError(
      `protobuf body is truncated: ${where} needs ${what} at offset ${this.pos} but the body has ${this.bytes.length} bytes`,
    );
  }

  private malformed(detail: string): OtlpDecodeError {
    return new OtlpDecodeError(`protobuf body is malformed: ${detail}`);
  }
}

export function wireName(wireType: number): string {
  return `${wireType} (${WIRE_TYPE_NAMES[wireType]})`;
}

/** int64 from its two 32-bit halves: exact number within ±(2^53-1), else the decimal string. */
export function int64Value(low: number, high: number): number | string {
  // |high| < 2^21 keeps high * 2^32 + low below 2^53 in magnitude.
  if (high >= -0x200000 && high < 0x200000) {
    const value = high * 0x100000000 + low;
    if (Number.isSafeInteger(value)) return value;
  }
  return BigInt.asIntN(64, (BigInt(high >>> 0) << 32n) | BigInt(low)).toString();
}
