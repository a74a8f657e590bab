import { hexOf } from './binary-text.codec';
import { DecodeContext, setAttribute } from './decode.context';
import { AttributeValue, Attributes, OtlpResource, OtlpScope } from './otlp.model';
import { ANY_VALUE, ARRAY_VALUE, KEY_VALUE, KEY_VALUE_LIST, RESOURCE, SCOPE } from './protobuf.schema';
import { WireReader } from './wire.reader';

/*
 * Common messages (common.proto, resource.proto) read straight into our shapes. Every reader takes
 * `end`, the end of the enclosing message, and leaves the reader exactly there.
 */

/** A bytes id (the LEN prefix is next) as lowercase hex; validation judges its length later. */
export function readId(reader: WireReader, where: string, enclosingEnd: number): string {
  const end = reader.lengthEnd(where, enclosingEnd);
  const hex = hexOf(reader.bytes, reader.pos, end);
  reader.pos = end;
  return hex;
}

/**
 * One repeated KeyValue (the LEN prefix is next) into `attributes` when the cap allows `kept`
 * more; returns whether it was kept. A dropped one is skipped unread.
 */
export function readAttribute(
  reader: WireReader,
  where: string,
  enclosingEnd: number,
  attributes: Attributes,
  kept: number,
  context: DecodeContext,
): boolean {
  const end = reader.lengthEnd(where, enclosingEnd);
  if (!context.attributeFits(kept)) {
    reader.pos = end;
    return false;
  }
  readKeyValue(reader, end, attributes, context, 1);
  return true;
}

function readKeyValue(
  reader: WireReader,
  end: number,
  target: { [key: string]: AttributeValue },
  context: DecodeContext,
  depth: number,
): void {
  let key = '';
  let value: AttributeValue = null;
  while (reader.pos < end) {
    const tag = reader.uint32('KeyValue');
    if (tag === 0x0a) {
      key = reader.string('KeyValue.key', end); // key = 1, LEN
    } else if (tag === 0x12) {
      value = readAnyValue(reader, reader.lengthEnd('KeyValue.value', end), context, depth); // value = 2, LEN
    } else {
      reader.skipField(tag, KEY_VALUE, end); // key_strindex = 3 is for profiles only (common.proto): ignored
    }
  }
  reader.expectEnd(end, 'KeyValue');
  setAttribute(target, key, value);
}

/** AnyValue's oneof; the last member present wins, as in proto3. An empty AnyValue is null. */
export function readAnyValue(reader: WireReader, end: number, context: DecodeContext, depth: number): AttributeValue {
  context.checkDepth(depth, 'protobuf body');
  let value: AttributeValue = null;
  while (reader.pos < end) {
    const tag = reader.uint32('AnyValue');
    switch (tag) {
      case 0x0a: // string_value = 1, LEN
        value = context.value(reader.string('AnyValue.string_value', end));
        break;
      case 0x10: // bool_value = 2, VARINT
        value = reader.uint32('AnyValue.bool_value') !== 0;
        break;
      case 0x18: // int_value = 3, VARINT
        value = reader.int64('AnyValue.int_value');
        break;
      case 0x21: // double_value = 4, I64
        value = reader.double('AnyValue.double_value');
        break;
      case 0x2a: // array_value = 5, LEN
        value = readArrayValue(reader, reader.lengthEnd('AnyValue.array_value', end), context, depth + 1);
        break;
      case 0x32: // kvlist_value = 6, LEN
        value = readKeyValueList(reader, reader.lengthEnd('AnyValue.kvlist_value', end), context, depth + 1);
        break;
      case 0x3a: {
        // bytes_value = 7, LEN
        const bytesEnd = reader.lengthEnd('AnyValue.bytes_value', end);
        value = context.base64(reader.bytes, reader.pos, bytesEnd);
        reader.pos = bytesEnd;
        break;
      }
      default:
        reader.skipField(tag, ANY_VALUE, end); // string_value_strindex = 8 is profiles-only: ignored
    }
  }
  reader.expectEnd(end, 'AnyValue');
  return value;
}

function readArrayValue(reader: WireReader, end: number, context: DecodeContext, depth: number): AttributeValue[] {
  const values: AttributeValue[] = [];
  while (reader.pos < end) {
    const tag = reader.uint32('ArrayValue');
    if (tag === 0x0a)
      values.push(readAnyValue(reader, reader.lengthEnd('ArrayValue.values', end), context, depth)); // values = 1, LEN
    else reader.skipField(tag, ARRAY_VALUE, end);
  }
  reader.expectEnd(end, 'ArrayValue');
  return values;
}

function readKeyValueList(reader: WireReader, end: number, context: DecodeContext, depth: number): { [key: string]: AttributeValue } {
  const values: { [key: string]: AttributeValue } = {};
  while (reader.pos < end) {
    const tag = reader.uint32('KeyValueList');
    if (tag === 0x0a)
      readKeyValue(reader, reader.lengthEnd('KeyValueList.values', end), values, context, depth); // values = 1, LEN
    else reader.skipField(tag, KEY_VALUE_LIST, end);
  }
  reader.expectEnd(end, 'KeyValueList');
  return values;
}

/** Reads a Resource into `resource` (already shared with spans read so far; fields may come in any order). */
export function readResource(reader: WireReader, end: number, resource: OtlpResource, context: DecodeContext): void {
  let kept = Object.keys(resource.attributes).length;
  let capDropped = 0;
  let sentDropped = 0;
  while (reader.pos < end) {
    const tag = reader.uint32('Resource');
    if (tag === 0x0a) {
      // attributes = 1, LEN
      if (readAttribute(reader, 'Resource.attributes', end, resource.attributes, kept, context)) kept++;
      else capDropped++;
    } else if (tag === 0x10) {
      sentDropped = reader.uint32('Resource.dropped_attributes_count'); // 2, VARINT
    } else {
      reader.skipField(tag, RESOURCE, end); // entity_refs = 3: not used yet
    }
  }
  reader.expectEnd(end, 'Resource');
  resource.droppedAttributesCount = sentDropped + capDropped;
}

export function readScope(reader: WireReader, end: number, scope: OtlpScope, context: DecodeContext): void {
  let kept = Object.keys(scope.attributes).length;
  let capDropped = 0;
  let sentDropped = 0;
  while (reader.pos < end) {
    const tag = reader.uint32('InstrumentationScope');
    switch (tag) {
      case 0x0a: // name = 1, LEN
        scope.name = reader.string('InstrumentationScope.name', end);
        break;
      case 0x12: // version = 2, LEN
        scope.version = reader.string('InstrumentationScope.version', end);
        break;
      case 0x1a: // attributes = 3, LEN
        if (readAttribute(reader, 'InstrumentationScope.attributes', end, scope.attributes, kept, context)) kept++;
        else capDropped++;
        break;
      case 0x20: // dropped_attributes_count = 4, VARINT
        sentDropped = reader.uint32('InstrumentationScope.dropped_attributes_count');
        break;
      default:
        reader.skipField(tag, SCOPE, end);
    }
  }
  reader.expectEnd(end, 'InstrumentationScope');
  scope.droppedAttributesCount = sentDropped + capDropped;
}
