export * from './data-policy.model';
export { validatePolicy } from './policy.validation';
export { compilePolicy, type CompiledPolicy, type PolicyLogEvent, type PolicySpan } from './compiled-policy';
export { sha256Of, truncateUtf8, truncationMarker } from './content-capture';
export { PATTERN_MARKER, markerOf } from './redaction';
