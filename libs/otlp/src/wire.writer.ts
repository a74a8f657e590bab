import { LEN, VARINT } from './wire.reader';

const utf8 = new TextEncoder();

/**
 * A small protobuf writer for our responses (a few dozen bytes each), so it favours plainness:
 * nested messages are written by a child writer and copied in with their length.
 */
export class WireWriter {
  private readonly chunks: number[] = [];

  /** int32/int64/uint32 as a varint; negative values take 10 bytes (two's complement), as proto3 requires. */
  varint(field: number, value: number | bigint): this {
    this.tag(field, VARINT);
    this.rawVarint(BigInt.asUintN(64, BigInt(value)));
    return this;
  }

  string(field: number, text: string): this {
    return this.bytes(field, utf8.encode(text));
  }

  bytes(field: number, bytes: Uint8Array): this {
    this.tag(field, LEN);
    this.rawVarint(BigInt(bytes.length));
    for (const byte of bytes) this.chunks.push(byte);
    return this;
  }

  message(field: number, message: WireWriter): this {
    return this.bytes(field, message.finish());
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }

  private tag(field: number, wireType: number): void {
    this.rawVarint(BigInt((field << 3) | wireType));
  }

  private rawVarint(value: bigint): void {
    while (value >= 0x80n) {
      this.chunks.push(Number(value & 0x7fn) | 0x80);
      value >>= 7n;
    }
    this.chunks.push(Number(value));
  }
}
