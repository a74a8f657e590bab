-- The spans of one project under the OTel Collector ClickHouse exporter's column names, so
-- Grafana's ClickHouse data source (trace view) can read them: a parameterized view, scoped by
-- tenant and project, e.g. SELECT * FROM otel_traces(tenant_id = '…', project_id = '…').
CREATE VIEW IF NOT EXISTS otel_traces AS
SELECT
  start_time AS Timestamp,
  trace_id AS TraceId,
  span_id AS SpanId,
  parent_span_id AS ParentSpanId,
  trace_state AS TraceState,
  name AS SpanName,
  concat('SPAN_KIND_', toString(kind)) AS SpanKind,
  service_name AS ServiceName,
  resource_attributes AS ResourceAttributes,
  scope_name AS ScopeName,
  scope_version AS ScopeVersion,
  mapUpdate(attributes, map('spanforge.span_type', toString(span_type), 'spanforge.cost_usd', toString(cost_usd))) AS SpanAttributes,
  duration_ns AS Duration,
  concat('STATUS_CODE_', toString(status_code)) AS StatusCode,
  status_message AS StatusMessage,
  events.time AS `Events.Timestamp`,
  events.name AS `Events.Name`,
  events.attributes AS `Events.Attributes`,
  links.trace_id AS `Links.TraceId`,
  links.span_id AS `Links.SpanId`,
  links.trace_state AS `Links.TraceState`,
  links.attributes AS `Links.Attributes`
FROM spans FINAL
WHERE tenant_id = {tenant_id:String} AND project_id = {project_id:String};
