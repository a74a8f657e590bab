import { bytesOfBase64 } from './binary-text.codec';
import { DecodeContext, setAttribute } from './decode.context';
import { AttributeValue, Attributes, OtlpDecodeError, OtlpResource, OtlpScope } from './otlp.model';
import { int64Value } from './wire.reader';

/*
 * OTLP/JSON values: proto3 JSON with hex ids, read leniently. Field names are looked
 * up as lowerCamelCase, then as the proto's snake_case; null reads as absent; unknown fields are
 * ignored. Values that do not parse read as their type's default, so validation decides.
 */

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function field(object: JsonObject, camel: string, snake = camel): unknown {
  const value = object[camel];
  if (value !== undefined && value !== null) return value;
  const other = object[snake];
  return other === null ? undefined : other;
}

export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A repeated message field: absent reads as [], anything but an array fails the request with its path. */
export function arrayField(object: JsonObject, camel: string, snake: string, path: string): unknown[] {
  const value = field(object, camel, snake);
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new OtlpDecodeError(`${path}.${camel} must be an array, got ${describeJson(value)}`);
  return value;
}

export function objectField(object: JsonObject, camel: string, snake: string, path: string): JsonObject | undefined {
  const value = field(object, camel, snake);
  if (value === undefined || isJsonObject(value)) return value;
  throw new OtlpDecodeError(`${path}.${camel} must be an object, got ${describeJson(value)}`);
}

export function stringOfJson(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/** uint32 counts and fixed32 flags, as numbers or decimal strings. */
export function uint32OfJson(value: unknown): number {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 0 ? number % 0x100000000 : 0;
}

const MAX_FIXED64 = (1n << 64n) - 1n;

/** fixed64 nanoseconds from a decimal string, a number, or protobufjs's Long {low, high}; 0n (absent) if none. */
export function timeOfJson(value: unknown): bigint {
  let time = 0n;
  if (typeof value === 'string' && /^\d+$/.test(value)) time = BigInt(value);
  else if (typeof value === 'number' && Number.isFinite(value) && value > 0) time = BigInt(Math.trunc(value));
  else if (isLong(value)) time = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return time > MAX_FIXED64 ? 0n : time;
}

function isLong(value: unknown): value is { low: number; high: number } {
  return isJsonObject(value) && typeof value.low === 'number' && typeof value.high === 'number';
}

/** int64 as the protobuf decoder gives it: a safe integer as number, else its canonical decimal string. */
function int64OfJson(value: unknown, context: DecodeContext): AttributeValue {
  if (typeof value === 'number') return Number.isSafeInteger(value) || !Number.isInteger(value) ? value : BigInt(value).toString();
  if (typeof value === 'string') {
    if (!/^[-+]?\d+$/.test(value)) return context.value(value);
    const integer = BigInt(value);
    return integer >= BigInt(Number.MIN_SAFE_INTEGER) && integer <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(integer) : integer.toString();
  }
  return isLong(value) ? int64Value(value.low >>> 0, value.high | 0) : null;
}

/** proto3 JSON doubles: numbers, or strings including "NaN", "Infinity", "-Infinity". */
function doubleOfJson(value: unknown): number {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
}

/**
 * A span's, event's, link's, resource's or scope's attributes into `target`, keeping the first
 * maxAttributesPerSpan; returns how many the cap dropped. Takes the OTLP KeyValue list, or the
 * plain {key: value} object hand-rolled exporters send, normalised the same way.
 */
export function readJsonAttributes(raw: unknown, path: string, target: Attributes, context: DecodeContext): number {
  if (raw === undefined || raw === null) return 0;
  let kept = Object.keys(target).length;
  let dropped = 0;
  if (Array.isArray(raw)) {
    for (let index = 0; index < raw.length; index++) {
      const keyValue = raw[index];
      if (!isJsonObject(keyValue))
        throw new OtlpDecodeError(`${path}[${index}] must be a {"key": …, "value": …} object, got ${describeJson(keyValue)}`);
      if (!context.attributeFits(kept)) {
        dropped++;
        continue;
      }
      setAttribute(target, stringOfJson(field(keyValue, 'key')), anyValueOfJson(field(keyValue, 'value'), context, 1));
      kept++;
    }
  } else if (isJsonObject(raw)) {
    for (const key of Object.keys(raw)) {
      if (!context.attributeFits(kept)) {
        dropped++;
        continue;
      }
      setAttribute(target, key, plainValueOfJson(raw[key], context, 1));
      kept++;
    }
  } else {
    throw new OtlpDecodeError(`${path} must be a list of {"key": …, "value": …} or an object, got ${describeJson(raw)}`);
  }
  return dropped;
}

const ANY_VALUE_KEYS = new Set([
  'stringValue',
  'string_value',
  'boolValue',
  'bool_value',
  'intValue',
  'int_value',
  'doubleValue',
  'double_value',
  'arrayValue',
  'array_value',
  'kvlistValue',
  'kvlist_value',
  'bytesValue',
  'bytes_value',
]);

/** An AnyValue: the oneof member present decides; `{}` (or only the profiles-only stringValueStrindex) is null. */
export function anyValueOfJson(raw: unknown, context: DecodeContext, depth: number): AttributeValue {
  context.checkDepth(depth, 'JSON body');
  if (raw === undefined || raw === null) return null;
  // A bare value where an AnyValue belongs: hand-rolled exporters do this too.
  if (!isJsonObject(raw)) return plainValueOfJson(raw, context, depth);
  let value = field(raw, 'stringValue', 'string_value');
  if (value !== undefined) return context.value(stringOfJson(value));
  if ((value = field(raw, 'boolValue', 'bool_value')) !== undefined) return value === true || value === 'true';
  if ((value = field(raw, 'intValue', 'int_value')) !== undefined) return int64OfJson(value, context);
  if ((value = field(raw, 'doubleValue', 'double_value')) !== undefined) return doubleOfJson(value);
  if ((value = field(raw, 'arrayValue', 'array_value')) !== undefined) {
    const values = Array.isArray(value) ? value : isJsonObject(value) ? field(value, 'values') : undefined;
    return Array.isArray(values) ? values.map((item) => anyValueOfJson(item, context, depth + 1)) : [];
  }
  if ((value = field(raw, 'kvlistValue', 'kvlist_value')) !== undefined) {
    const list: { [key: string]: AttributeValue } = {};
    const values = isJsonObject(value) ? field(value, 'values') : value;
    if (!Array.isArray(values)) return list;
    for (const keyValue of values) {
      if (isJsonObject(keyValue))
        setAttribute(list, stringOfJson(field(keyValue, 'key')), anyValueOfJson(field(keyValue, 'value'), context, depth + 1));
    }
    return list;
  }
  if ((value = field(raw, 'bytesValue', 'bytes_value')) !== undefined) {
    const text = stringOfJson(value);
    const bytes = bytesOfBase64(text);
    return bytes ? context.base64(bytes, 0, bytes.length) : context.value(text);
  }
  return null;
}

/** A plain JSON value as an attribute value; an object that is exactly one AnyValue wrapper is unwrapped. */
function plainValueOfJson(raw: unknown, context: DecodeContext, depth: number): AttributeValue {
  context.checkDepth(depth, 'JSON body');
  if (typeof raw === 'string') return context.value(raw);
  if (typeof raw === 'number' || typeof raw === 'boolean') return raw;
  if (Array.isArray(raw)) return raw.map((item) => plainValueOfJson(item, context, depth + 1));
  if (!isJsonObject(raw)) return null;
  const keys = Object.keys(raw);
  if (keys.length === 1 && ANY_VALUE_KEYS.has(keys[0])) return anyValueOfJson(raw, context, depth);
  const object: { [key: string]: AttributeValue } = {};
  for (const key of keys) setAttribute(object, key, plainValueOfJson(raw[key], context, depth + 1));
  return object;
}

/** The Resource of a ResourceSpans/ResourceLogs object, with that object's schema_url; empty when absent. */
export function resourceOfJson(raw: JsonObject, path: string, context: DecodeContext): OtlpResource {
  const resource: OtlpResource = {
    attributes: {},
    droppedAttributesCount: 0,
    schemaUrl: stringOfJson(field(raw, 'schemaUrl', 'schema_url')),
  };
  const rawResource = objectField(raw, 'resource', 'resource', path);
  if (rawResource) {
    const cut = readJsonAttributes(field(rawResource, 'attributes'), `${path}.resource.attributes`, resource.attributes, context);
    resource.droppedAttributesCount = uint32OfJson(field(rawResource, 'droppedAttributesCount', 'dropped_attributes_count')) + cut;
  }
  return resource;
}

/**
 * The InstrumentationScope of a ScopeSpans/ScopeLogs object (or the pre-v0.19
 * instrumentationLibrary), with that object's schema_url; empty when absent.
 */
export function scopeOfJson(raw: JsonObject, path: string, context: DecodeContext): OtlpScope {
  const scope: OtlpScope = {
    name: '',
    version: '',
    attributes: {},
    droppedAttributesCount: 0,
    schemaUrl: stringOfJson(field(raw, 'schemaUrl', 'schema_url')),
  };
  const rawScope = objectField(raw, 'scope', 'scope', path) ?? objectField(raw, 'instrumentationLibrary', 'instrumentation_library', path);
  if (rawScope) {
    scope.name = stringOfJson(field(rawScope, 'name'));
    scope.version = stringOfJson(field(rawScope, 'version'));
    const cut = readJsonAttributes(field(rawScope, 'attributes'), `${path}.scope.attributes`, scope.attributes, context);
    scope.droppedAttributesCount = uint32OfJson(field(rawScope, 'droppedAttributesCount', 'dropped_attributes_count')) + cut;
  }
  return scope;
}
