import { DecodeContext } from './decode.context';
import { DEFAULT_DECODE_LIMITS, DecodeLimits, DecodeResult, OtlpDecodeError, OtlpResource, OtlpScope } from './otlp.model';
import { readSpan } from './protobuf-span.decoder';
import { readResource, readScope } from './protobuf-value.decoder';
import { EXPORT_REQUEST, RESOURCE_SPANS, SCOPE_SPANS } from './protobuf.schema';
import { otherSignalError, sniffOtherSignal } from './signal.sniffer';
import { admitSpan, emptyDecodeResult, markTruncated } from './span.validation';
import { WireReader } from './wire.reader';

/**
 * Decodes a binary OTLP ExportTraceServiceRequest straight into DecodedSpans: one pass,
 * no intermediate message objects. Invalid spans are dropped and counted (span.validation.ts).
 * Throws OtlpDecodeError when the body as a whole is unusable: truncated or malformed bytes, or a
 * logs/metrics export sent to the traces endpoint. An empty body is an empty request (0 spans).
 */
export function decodeProtobufExport(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodeResult {
  let result: DecodeResult;
  try {
    result = readExportRequest(new WireReader(bytes), new DecodeContext(limits));
  } catch (error) {
    if (error instanceof OtlpDecodeError) throwIfOtherSignal(bytes);
    throw error;
  }
  if (result.received > 0 && result.rejected === result.received) throwIfOtherSignal(bytes);
  return result;
}

function throwIfOtherSignal(bytes: Uint8Array): void {
  const signal = sniffOtherSignal(bytes);
  if (signal) throw otherSignalError(signal);
}

function readExportRequest(reader: WireReader, context: DecodeContext): DecodeResult {
  const result = emptyDecodeResult();
  const end = reader.length;
  while (reader.pos < end) {
    const tag = reader.uint32('ExportTraceServiceRequest');
    if (tag === 0x0a)
      readResourceSpans(reader, reader.lengthEnd('ExportTraceServiceRequest.resource_spans', end), context, result); // resource_spans = 1, LEN
    else reader.skipField(tag, EXPORT_REQUEST, end);
  }
  reader.expectEnd(end, 'ExportTraceServiceRequest');
  return result;
}

/** One ResourceSpans; its resource object is created first and shared by every span, whatever the field order. */
function readResourceSpans(reader: WireReader, end: number, context: DecodeContext, result: DecodeResult): void {
  const resource: OtlpResource = { attributes: {}, droppedAttributesCount: 0, schemaUrl: '' };
  const firstSpan = result.spans.length;
  let resourceCut = false;
  while (reader.pos < end) {
    const tag = reader.uint32('ResourceSpans');
    switch (tag) {
      case 0x0a: // resource = 1, LEN
        context.truncated = false;
        readResource(reader, reader.lengthEnd('ResourceSpans.resource', end), resource, context);
        resourceCut ||= context.truncated;
        break;
      case 0x12: // scope_spans = 2, LEN
        readScopeSpans(reader, reader.lengthEnd('ResourceSpans.scope_spans', end), resource, context, result);
        break;
      case 0x1a: // schema_url = 3, LEN
        resource.schemaUrl = reader.string('ResourceSpans.schema_url', end);
        break;
      case 0x1f42: // instrumentation_library_spans = 1000, LEN: pre-v0.19 exporters, same layout as ScopeSpans
        readScopeSpans(reader, reader.lengthEnd('ResourceSpans.instrumentation_library_spans', end), resource, context, result);
        break;
      default:
        reader.skipField(tag, RESOURCE_SPANS, end);
    }
  }
  reader.expectEnd(end, 'ResourceSpans');
  if (resourceCut) markTruncated(result.spans, firstSpan);
}

function readScopeSpans(reader: WireReader, end: number, resource: OtlpResource, context: DecodeContext, result: DecodeResult): void {
  const scope: OtlpScope = { name: '', version: '', attributes: {}, droppedAttributesCount: 0, schemaUrl: '' };
  const firstSpan = result.spans.length;
  let scopeCut = false;
  while (reader.pos < end) {
    const tag = reader.uint32('ScopeSpans');
    switch (tag) {
      case 0x0a: // scope = 1, LEN
        context.truncated = false;
        readScope(reader, reader.lengthEnd('ScopeSpans.scope', end), scope, context);
        scopeCut ||= context.truncated;
        break;
      case 0x12: // spans = 2, LEN
        admitSpan(result, readSpan(reader, reader.lengthEnd('ScopeSpans.spans', end), resource, scope, context));
        break;
      case 0x1a: // schema_url = 3, LEN
        scope.schemaUrl = reader.string('ScopeSpans.schema_url', end);
        break;
      default:
        reader.skipField(tag, SCOPE_SPANS, end);
    }
  }
  reader.expectEnd(end, 'ScopeSpans');
  if (scopeCut) markTruncated(result.spans, firstSpan);
}
