import { packExportBody, type ExportJob } from '@spanforge/queue';
import { letterHoldsErased } from './dead-letter-traces';

const ERASED = '0af7651916cd43dd8448eb211c80319c';
const KEPT = '5b8efff798038103d269b633813fc60c';
const traces = new Set([ERASED]);

function exportLetter(body: Buffer, format: ExportJob['format'], packed = true): { kind: 'export_job'; payload: string } {
  const job: Partial<ExportJob> = { v: 1, format, ...(packed ? packExportBody(body) : { body: body.toString('base64') }) };
  return { kind: 'export_job', payload: JSON.stringify({ name: 'export', data: job }) };
}

const jsonExport = (traceId: string) =>
  Buffer.from(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [] },
          scopeSpans: [{ spans: [{ traceId, spanId: '00f067aa0ba902b7', name: 'chat', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }],
        },
      ],
    }),
  );

describe('letterHoldsErased', () => {
  it('matches a span row by its trace or its session', () => {
    const row = (trace_id: string, session_id: string) => ({
      kind: 'span_row' as const,
      payload: JSON.stringify({ trace_id, session_id }),
    });
    expect(letterHoldsErased(row(ERASED, 's1'), traces)).toBe(true);
    expect(letterHoldsErased(row(KEPT, 's1'), traces)).toBe(false);
    expect(letterHoldsErased(row(KEPT, 's1'), traces, new Set(['s1']))).toBe(true);
  });

  it('decodes an export and matches its spans, whichever form the sender wrote the id in', () => {
    expect(letterHoldsErased(exportLetter(jsonExport(ERASED), 'json'), traces)).toBe(true);
    expect(letterHoldsErased(exportLetter(jsonExport(ERASED.toUpperCase()), 'json', false), traces)).toBe(true);
    expect(letterHoldsErased(exportLetter(jsonExport(Buffer.from(ERASED, 'hex').toString('base64')), 'json'), traces)).toBe(true);
    expect(letterHoldsErased(exportLetter(jsonExport(KEPT), 'json'), traces)).toBe(false);
  });

  it('searches an export it cannot decode for the id as bytes, hex or base64', () => {
    const garbage = (middle: Buffer) => Buffer.concat([Buffer.from([0xff, 0xff, 0x0a]), middle, Buffer.from([0x12])]);
    expect(letterHoldsErased(exportLetter(garbage(Buffer.from(ERASED, 'hex')), 'protobuf'), traces)).toBe(true);
    expect(letterHoldsErased(exportLetter(garbage(Buffer.from(KEPT, 'hex')), 'protobuf'), traces)).toBe(false);
    const cutShort = (id: string) => jsonExport(id).subarray(0, -10);
    expect(letterHoldsErased(exportLetter(cutShort(ERASED.toUpperCase()), 'json'), traces)).toBe(true);
    expect(letterHoldsErased(exportLetter(cutShort(Buffer.from(ERASED, 'hex').toString('base64url')), 'json'), traces)).toBe(true);
    expect(letterHoldsErased(exportLetter(cutShort(KEPT), 'json'), traces)).toBe(false);
  });

  it('finds nothing in accounting jobs, and searches a span row that is not JSON as text', () => {
    expect(letterHoldsErased({ kind: 'accounting_job', payload: JSON.stringify({ data: { traceId: ERASED } }) }, traces)).toBe(false);
    expect(letterHoldsErased({ kind: 'span_row', payload: `{"trace_id":"${ERASED}"` }, traces)).toBe(true);
    expect(letterHoldsErased({ kind: 'span_row', payload: `{"trace_id":"${KEPT}"` }, traces)).toBe(false);
  });
});
