import { DecodeContext } from './decode.context';
import { DecodedSpan, OtlpResource, OtlpScope, SpanEvent, SpanKind, SpanLink, StatusCode } from './otlp.model';
import { readAttribute, readId } from './protobuf-value.decoder';
import { EVENT, LINK, SPAN, STATUS } from './protobuf.schema';
import { spanKindOf, statusCodeOf } from './span-enum.codec';
import { isValidLink } from './span.validation';
import { WireReader } from './wire.reader';

/**
 * Reads one Span (trace.proto) whose payload ends at `end`. Caps of the context apply as the
 * fields stream by: attributes, events and links past their cap are skipped unread and counted in
 * the matching dropped count. Sent dropped counts are kept (last occurrence wins, as in proto3)
 * and our own drops are added to them.
 */
export function readSpan(reader: WireReader, end: number, resource: OtlpResource, scope: OtlpScope, context: DecodeContext): DecodedSpan {
  context.truncated = false;
  const span: DecodedSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    traceState: '',
    flags: 0,
    name: '',
    kind: SpanKind.UNSPECIFIED,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {},
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    statusCode: StatusCode.UNSET,
    statusMessage: '',
    resource,
    scope,
    truncated: false,
  };
  let attributesKept = 0;
  let attributesCut = 0;
  let eventsCut = 0;
  let linksCut = 0;
  while (reader.pos < end) {
    const tag = reader.uint32('Span');
    switch (tag) {
      case 0x0a: // trace_id = 1, LEN
        span.traceId = readId(reader, 'Span.trace_id', end);
        break;
      case 0x12: // span_id = 2, LEN
        span.spanId = readId(reader, 'Span.span_id', end);
        break;
      case 0x1a: // trace_state = 3, LEN
        span.traceState = reader.string('Span.trace_state', end);
        break;
      case 0x22: // parent_span_id = 4, LEN
        span.parentSpanId = readId(reader, 'Span.parent_span_id', end);
        break;
      case 0x2a: // name = 5, LEN
        span.name = context.name(reader.string('Span.name', end));
        break;
      case 0x30: // kind = 6, VARINT
        span.kind = spanKindOf(reader.uint32('Span.kind'));
        break;
      case 0x39: // start_time_unix_nano = 7, I64
        span.startTimeUnixNano = reader.fixed64('Span.start_time_unix_nano');
        break;
      case 0x41: // end_time_unix_nano = 8, I64
        span.endTimeUnixNano = reader.fixed64('Span.end_time_unix_nano');
        break;
      case 0x4a: // attributes = 9, LEN
        if (readAttribute(reader, 'Span.attributes', end, span.attributes, attributesKept, context)) attributesKept++;
        else attributesCut++;
        break;
      case 0x50: // dropped_attributes_count = 10, VARINT
        span.droppedAttributesCount = reader.uint32('Span.dropped_attributes_count');
        break;
      case 0x5a: {
        // events = 11, LEN
        const eventEnd = reader.lengthEnd('Span.events', end);
        if (context.eventFits(span.events.length)) span.events.push(readEvent(reader, eventEnd, context));
        else {
          reader.pos = eventEnd;
          eventsCut++;
        }
        break;
      }
      case 0x60: // dropped_events_count = 12, VARINT
        span.droppedEventsCount = reader.uint32('Span.dropped_events_count');
        break;
      case 0x6a: {
        // links = 13, LEN
        const linkEnd = reader.lengthEnd('Span.links', end);
        if (!context.linkFits(span.links.length)) {
          reader.pos = linkEnd;
          linksCut++;
          break;
        }
        const link = readLink(reader, linkEnd, context);
        if (isValidLink(link)) span.links.push(link);
        else linksCut++;
        break;
      }
      case 0x70: // dropped_links_count = 14, VARINT
        span.droppedLinksCount = reader.uint32('Span.dropped_links_count');
        break;
      case 0x7a: // status = 15, LEN
        readStatus(reader, reader.lengthEnd('Span.status', end), span, context);
        break;
      case 0x85: // flags = 16, I32 (the tag is two varint bytes, 0x85 0x01)
        span.flags = reader.fixed32('Span.flags');
        break;
      default:
        reader.skipField(tag, SPAN, end);
    }
  }
  reader.expectEnd(end, 'Span');
  span.droppedAttributesCount += attributesCut;
  span.droppedEventsCount += eventsCut;
  span.droppedLinksCount += linksCut;
  span.truncated = context.truncated;
  return span;
}

function readEvent(reader: WireReader, end: number, context: DecodeContext): SpanEvent {
  const event: SpanEvent = { timeUnixNano: 0n, name: '', attributes: {}, droppedAttributesCount: 0 };
  let kept = 0;
  let cut = 0;
  let sentDropped = 0;
  while (reader.pos < end) {
    const tag = reader.uint32('Span.Event');
    switch (tag) {
      case 0x09: // time_unix_nano = 1, I64
        event.timeUnixNano = reader.fixed64('Span.Event.time_unix_nano');
        break;
      case 0x12: // name = 2, LEN
        event.name = context.name(reader.string('Span.Event.name', end));
        break;
      case 0x1a: // attributes = 3, LEN
        if (readAttribute(reader, 'Span.Event.attributes', end, event.attributes, kept, context)) kept++;
        else cut++;
        break;
      case 0x20: // dropped_attributes_count = 4, VARINT
        sentDropped = reader.uint32('Span.Event.dropped_attributes_count');
        break;
      default:
        reader.skipField(tag, EVENT, end);
    }
  }
  reader.expectEnd(end, 'Span.Event');
  event.droppedAttributesCount = sentDropped + cut;
  return event;
}

function readLink(reader: WireReader, end: number, context: DecodeContext): SpanLink {
  const link: SpanLink = { traceId: '', spanId: '', traceState: '', attributes: {}, droppedAttributesCount: 0, flags: 0 };
  let kept = 0;
  let cut = 0;
  let sentDropped = 0;
  while (reader.pos < end) {
    const tag = reader.uint32('Span.Link');
    switch (tag) {
      case 0x0a: // trace_id = 1, LEN
        link.traceId = readId(reader, 'Span.Link.trace_id', end);
        break;
      case 0x12: // span_id = 2, LEN
        link.spanId = readId(reader, 'Span.Link.span_id', end);
        break;
      case 0x1a: // trace_state = 3, LEN
        link.traceState = reader.string('Span.Link.trace_state', end);
        break;
      case 0x22: // attributes = 4, LEN
        if (readAttribute(reader, 'Span.Link.attributes', end, link.attributes, kept, context)) kept++;
        else cut++;
        break;
      case 0x28: // dropped_attributes_count = 5, VARINT
        sentDropped = reader.uint32('Span.Link.dropped_attributes_count');
        break;
      case 0x35: // flags = 6, I32
        link.flags = reader.fixed32('Span.Link.flags');
        break;
      default:
        reader.skipField(tag, LINK, end);
    }
  }
  reader.expectEnd(end, 'Span.Link');
  link.droppedAttributesCount = sentDropped + cut;
  return link;
}

function readStatus(reader: WireReader, end: number, span: DecodedSpan, context: DecodeContext): void {
  while (reader.pos < end) {
    const tag = reader.uint32('Status');
    if (tag === 0x12)
      span.statusMessage = context.value(reader.string('Status.message', end)); // message = 2, LEN
    else if (tag === 0x18)
      span.statusCode = statusCodeOf(reader.uint32('Status.code')); // code = 3, VARINT
    else reader.skipField(tag, STATUS, end);
  }
  reader.expectEnd(end, 'Status');
}
