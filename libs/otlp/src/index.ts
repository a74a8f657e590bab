export * from './otlp.model';
export { decodeProtobufExport } from './protobuf.decoder';
export { decodeJsonExport } from './json.decoder';
export { EVENT_NAME_ATTRIBUTE, decodeJsonLogs, decodeProtobufLogs, describeDroppedLogs } from './logs.decoder';
export type { DecodedLogRecord, LogDropReason, LogsDecodeResult } from './logs.decoder';
export { countJsonMetricPoints, countProtobufMetricPoints, describeDroppedMetricPoints } from './metrics.counter';
export {
  MAX_RESPONSE_MESSAGE_LENGTH,
  RpcCode,
  describeRejections,
  encodeExportResponse,
  encodeRetryInfo,
  encodeStatus,
} from './response.encoder';
export type { OtlpSignal, ResponseFormat, StatusDetail } from './response.encoder';
export {
  INT32_MAX,
  MAX_SPAN_COST_USD,
  MAX_TOKEN_COUNT,
  TIME_DOMAIN,
  UINT32_MAX,
  isStorableTime,
  tokenCount,
  wellFormed,
} from './store-domain';
export { rejectReasonOf } from './span.validation';
export { setAttribute } from './decode.context';
