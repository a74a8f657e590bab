import { base64Of } from './binary-text.codec';
import { AttributeValue, Attributes, DecodeLimits, OtlpDecodeError } from './otlp.model';

/**
 * AnyValue nesting deeper than this fails the request: recursion would otherwise let a few MB of
 * nested kvlists overflow the stack. Same bound as protobuf-java's default recursion limit.
 */
export const MAX_VALUE_DEPTH = 100;

/**
 * The caps of DecodeLimits for one request, shared by both decoders so they cut identically.
 * `truncated` records that a cap cut something; decoders reset it per span and copy it to
 * `span.truncated` (resource and scope cuts are carried into each of their spans).
 */
export class DecodeContext {
  truncated = false;

  constructor(readonly limits: DecodeLimits) {}

  /** A string attribute value or status message, cut to maxAttributeValueLength UTF-16 units. */
  value(text: string): string {
    return text.length > this.limits.maxAttributeValueLength ? this.cut(text, this.limits.maxAttributeValueLength) : text;
  }

  /** A span or event name, cut to maxNameLength. */
  name(text: string): string {
    return text.length > this.limits.maxNameLength ? this.cut(text, this.limits.maxNameLength) : text;
  }

  /** bytes[start, end) as base64, keeping whole 3-byte groups so the text stays valid base64 within the value cap. */
  base64(bytes: Uint8Array, start: number, end: number): string {
    const maxBytes = Math.floor(this.limits.maxAttributeValueLength / 4) * 3;
    if (end - start > maxBytes) {
      this.truncated = true;
      end = start + maxBytes;
    }
    return base64Of(bytes, start, end);
  }

  /** Whether another attribute fits; when not, the caller counts it as dropped. */
  attributeFits(kept: number): boolean {
    if (kept < this.limits.maxAttributesPerSpan) return true;
    this.truncated = true;
    return false;
  }

  eventFits(kept: number): boolean {
    if (kept < this.limits.maxEventsPerSpan) return true;
    this.truncated = true;
    return false;
  }

  linkFits(kept: number): boolean {
    if (kept < this.limits.maxLinksPerSpan) return true;
    this.truncated = true;
    return false;
  }

  checkDepth(depth: number, where: string): void {
    if (depth > MAX_VALUE_DEPTH) throw new OtlpDecodeError(`${where} nests AnyValues deeper than ${MAX_VALUE_DEPTH} levels`);
  }

  private cut(text: string, length: number): string {
    this.truncated = true;
    // Never split a surrogate pair: that would leave a lone surrogate, which is not valid UTF-8 downstream.
    const last = text.charCodeAt(length - 1);
    return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
  }
}

/**
 * Sets an attribute without letting the key `__proto__` replace the object's prototype; the key
 * stays an ordinary own property, as JSON.parse would make it.
 */
export function setAttribute(attributes: Attributes | { [key: string]: AttributeValue }, key: string, value: AttributeValue): void {
  if (key === '__proto__') Object.defineProperty(attributes, key, { value, enumerable: true, writable: true, configurable: true });
  else attributes[key] = value;
}
