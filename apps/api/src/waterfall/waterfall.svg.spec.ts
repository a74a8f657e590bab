import { formatDuration } from './waterfall.format';
import { ERROR_RED, TYPE_COLOUR } from './waterfall.palette';
import { SPAN_TYPES, WaterfallInput, WaterfallSpan, WaterfallSpanType, renderWaterfall } from './waterfall.svg';

/** A strict little XML reader: throws on anything not well-formed (unbalanced tags, bare & or <, duplicate attributes). */
interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const START_TAG = /<([A-Za-z][\w:.-]*)((?:\s+[A-Za-z_:][\w:.-]*="[^"]*")*)\s*(\/?)>/y;

function decode(raw: string): string {
  if (raw.includes('<')) throw new Error(`raw "<" in ${raw}`);
  if (/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[\da-fA-F]+);)/.test(raw)) throw new Error(`bare "&" in ${raw}`);
  return raw.replace(/&(#x[\da-fA-F]+|#\d+|\w+);/g, (_, e: string) =>
    e.startsWith('#x')
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : ENTITIES[e],
  );
}

function parseXml(src: string): XmlElement {
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(src);
  if (!decl) throw new Error('missing XML declaration');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = decl[0].length;
  while (i < src.length) {
    const lt = src.indexOf('<', i);
    const text = src.slice(i, lt < 0 ? src.length : lt);
    if (stack.length > 0) stack[stack.length - 1].text += decode(text);
    else if (text.trim() !== '') throw new Error(`text outside the root element: ${text}`);
    if (lt < 0) break;
    if (src.startsWith('</', lt)) {
      const gt = src.indexOf('>', lt);
      const name = src.slice(lt + 2, gt);
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
      i = gt + 1;
      continue;
    }
    START_TAG.lastIndex = lt;
    const m = START_TAG.exec(src);
    if (!m) throw new Error(`malformed tag: ${src.slice(lt, lt + 80)}`);
    const el: XmlElement = { name: m[1], attrs: {}, children: [], text: '' };
    for (const [, key, value] of m[2].matchAll(/([\w:.-]+)="([^"]*)"/g)) {
      if (key in el.attrs) throw new Error(`duplicate attribute ${key}`);
      el.attrs[key] = decode(value);
    }
    if (stack.length > 0) stack[stack.length - 1].children.push(el);
    else if (root) throw new Error('second root element');
    else root = el;
    if (m[3] !== '/') stack.push(el);
    i = START_TAG.lastIndex;
  }
  if (!root || stack.length > 0) throw new Error('unclosed elements');
  return root;
}

function all(el: XmlElement, cls: string, out: XmlElement[] = []): XmlElement[] {
  if (el.attrs.class === cls) out.push(el);
  el.children.forEach((c) => all(c, cls, out));
  return out;
}
const child = (el: XmlElement, cls: string): XmlElement | undefined => el.children.find((c) => c.attrs.class === cls);
const titleOf = (el: XmlElement): string => el.children.find((c) => c.name === 'title')?.text ?? '';
const num = (el: XmlElement | undefined, attr: string): number => Number(el?.attrs[attr]);

const T0 = 1_700_000_000_000;
function span(
  spanId: string,
  parentSpanId: string | null,
  start: number,
  end: number,
  type: WaterfallSpanType,
  extra: Partial<WaterfallSpan> = {},
): WaterfallSpan {
  return { spanId, parentSpanId, name: `op ${spanId}`, type, startMs: T0 + start, endMs: T0 + end, status: 'OK', ...extra };
}

/** A small agent run: an LLM call, three parallel tools (one failing), a second LLM call, an orphan and an instant span. */
function agentTrace(): WaterfallInput {
  const spans = [
    span('root', null, 0, 2000, 'RUN'),
    span('agent', 'root', 10, 1990, 'AGENT'),
    span('llm1', 'agent', 20, 500, 'LLM'),
    span('t1', 'agent', 510, 900, 'TOOL', { status: 'ERROR' }),
    span('t2', 'agent', 505, 1400, 'TOOL'),
    span('http', 't2', 520, 1380, 'HTTP'),
    span('t3', 'agent', 520, 700, 'RETRIEVAL'),
    span('llm2', 'agent', 1410, 1900.4, 'LLM'),
    span('instant', 'agent', 1950, 1950, 'GUARDRAIL'),
    span('orphan', 'missing', 300, 1200, 'OTHER'),
  ];
  return {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spans,
    criticalPath: ['root', 'agent', 'llm1', 't2', 'http', 'llm2', 'not-in-trace'],
  };
}

/** Span rows keyed by span id (row titles start with the span's name, which is `op <id>` here). */
function rowsById(svg: XmlElement, input: WaterfallInput): Map<string, XmlElement> {
  const rows = all(svg, 'span');
  return new Map(input.spans.map((s) => [s.spanId, rows.find((r) => titleOf(r).startsWith(`${s.name} — `)) as XmlElement]));
}

describe('renderWaterfall', () => {
  const input = agentTrace();
  const out = renderWaterfall(input);
  const svg = parseXml(out);
  const rows = rowsById(svg, input);

  it('is a standalone SVG 1.1 document sized by its viewBox', () => {
    expect(svg.name).toBe('svg');
    expect(svg.attrs).toMatchObject({ xmlns: 'http://www.w3.org/2000/svg', version: '1.1', width: '1200' });
    expect(svg.attrs.viewBox).toBe(`0 0 ${svg.attrs.width} ${svg.attrs.height}`);
    expect(svg.attrs['font-family']).toMatch(/^system-ui,.*sans-serif$/);
  });

  it('draws one labelled row with one bar per span, indented by depth', () => {
    expect(all(svg, 'span')).toHaveLength(input.spans.length);
    expect(all(svg, 'bar')).toHaveLength(input.spans.length);
    const depth = (s: WaterfallSpan): number =>
      s.parentSpanId === null || !rows.has(s.parentSpanId)
        ? 0
        : 1 + depth(input.spans.find((p) => p.spanId === s.parentSpanId) as WaterfallSpan);
    const x0 = num(child(rows.get('root') as XmlElement, 'label'), 'x');
    for (const s of input.spans) {
      const row = rows.get(s.spanId) as XmlElement;
      expect(child(row, 'label')?.text).toBe(s.name);
      expect(num(child(row, 'label'), 'x')).toBe(x0 + 12 * depth(s));
      expect(child(row, 'bar')?.attrs.fill).toBe(TYPE_COLOUR[s.type]);
      expect(child(row, 'dur')?.text).toBe(formatDuration(s.endMs - s.startMs));
    }
  });

  it('places bars on one linear time axis; a zero-length span still gets 1px', () => {
    const rootBar = child(rows.get('root') as XmlElement, 'bar');
    const x0 = num(rootBar, 'x');
    const pxPerMs = num(rootBar, 'width') / 2000; // the root spans the whole trace
    for (const s of input.spans) {
      const bar = child(rows.get(s.spanId) as XmlElement, 'bar');
      expect(num(bar, 'x')).toBeCloseTo(x0 + (s.startMs - T0) * pxPerMs, 1);
      expect(num(bar, 'width')).toBeCloseTo(Math.max(1, (s.endMs - s.startMs) * pxPerMs), 1);
    }
    expect(num(child(rows.get('instant') as XmlElement, 'bar'), 'width')).toBe(1);
    const ticks = all(svg, 'tick');
    expect(ticks[0].text).toBe('0 ms');
    expect(num(ticks[0], 'x')).toBe(x0);
    const ms = (label: string): number => Number(label.split(' ')[0]) * (label.endsWith(' s') ? 1000 : 1);
    for (const t of ticks) expect(num(t, 'x')).toBeCloseTo(x0 + ms(t.text) * pxPerMs, 1);
  });

  it('marks exactly the critical-path spans that are in the trace, and says so in the legend', () => {
    const present = input.criticalPath.filter((id) => input.spans.some((s) => s.spanId === id));
    expect(all(svg, 'cp-marker')).toHaveLength(present.length);
    const marked = [...rows].filter(([, row]) => child(row, 'cp-marker')).map(([id]) => id);
    expect(marked.sort()).toEqual([...present].sort());
    expect(all(svg, 'legend-label').map((t) => t.text)).toContain('critical path');
  });

  it('hatches and outlines error spans in red and labels them red', () => {
    const errors = input.spans.filter((s) => s.status === 'ERROR');
    expect(all(svg, 'err')).toHaveLength(errors.length);
    for (const s of errors) {
      const row = rows.get(s.spanId) as XmlElement;
      expect(child(row, 'bar')?.attrs.stroke).toBe(ERROR_RED);
      expect(child(row, 'label')?.attrs.fill).toBe(ERROR_RED);
      expect(titleOf(row)).toContain('ERROR');
    }
  });

  it('has a legend of the types present, in a fixed order, then critical path and error', () => {
    const types = SPAN_TYPES.filter((t) => input.spans.some((s) => s.type === t));
    expect(all(svg, 'legend-label').map((t) => t.text)).toEqual([...types, 'critical path', 'error']);
  });

  it('escapes every user-provided text', () => {
    const hostile = `<script>alert(1)</script> & "x" 'y'`;
    const trace: WaterfallInput = {
      traceId: `</svg>${hostile}`,
      spans: [span('root', null, 0, 10, 'RUN', { name: hostile })],
      criticalPath: ['root'],
    };
    const text = renderWaterfall(trace);
    expect(text).not.toContain('<script>');
    const doc = parseXml(text);
    const row = all(doc, 'span')[0];
    expect(child(row, 'label')?.text).toBe(hostile);
    expect(titleOf(row).startsWith(`${hostile} — `)).toBe(true);
    expect(titleOf(doc)).toBe(`Waterfall of trace ${trace.traceId}`);
  });

  it('truncates long names with an ellipsis and keeps the full name in the tooltip', () => {
    const name = `tool.call ${'lookup_customer_profile_'.repeat(6)}`;
    const doc = parseXml(renderWaterfall({ traceId: 't', spans: [span('s', null, 0, 5, 'TOOL', { name })], criticalPath: [] }));
    const label = child(all(doc, 'span')[0], 'label')?.text as string;
    expect(label.endsWith('…')).toBe(true);
    expect(name.startsWith(label.slice(0, -1))).toBe(true);
    expect(titleOf(all(doc, 'span')[0]).startsWith(name)).toBe(true);
  });

  it('grows 20px in height per row, at the width asked for', () => {
    const chain = (n: number): WaterfallInput => ({
      traceId: 't',
      spans: Array.from({ length: n }, (_, i) => span(`s${i}`, i ? `s${i - 1}` : null, i, 100, 'CHAIN')),
      criticalPath: [],
    });
    const small = parseXml(renderWaterfall(chain(5), { width: 800 }));
    const big = parseXml(renderWaterfall(chain(50), { width: 800 }));
    expect(small.attrs.viewBox).toBe(`0 0 800 ${small.attrs.height}`);
    expect(num(big, 'height') - num(small, 'height')).toBe(45 * 20);
  });

  it('says "no spans" for an empty trace, still as valid SVG', () => {
    const doc = parseXml(renderWaterfall({ traceId: 'empty', spans: [], criticalPath: [] }));
    expect(all(doc, 'empty')[0].text).toBe('no spans');
    expect(all(doc, 'bar')).toHaveLength(0);
  });

  it('draws a zero-length trace on a 1 ms axis', () => {
    const doc = parseXml(renderWaterfall({ traceId: 'z', spans: [span('only', null, 7, 7, 'LLM')], criticalPath: ['only'] }));
    expect(num(all(doc, 'bar')[0], 'width')).toBe(1);
    const ticks = all(doc, 'tick').map((t) => t.text);
    expect([ticks[0], ticks[ticks.length - 1]]).toEqual(['0 ms', '1 ms']);
  });

  it('collapses 3,000 spans into summary rows and keeps the critical path', () => {
    const spans = [span('root', null, 0, 30_000, 'RUN', { name: 'agent.run' })];
    for (let i = 0; i < 2999; i++) spans.push(span(`c${i}`, 'root', i * 10, i * 10 + 8, i % 8 === 0 ? 'LLM' : 'TOOL'));
    const criticalPath = ['root', 'c2500', 'c2998'];
    const doc = parseXml(renderWaterfall({ traceId: 'big', spans, criticalPath }));
    const spanRows = all(doc, 'span');
    const summaries = all(doc, 'summary').map((g) => titleOf(g));
    expect(spanRows.length + summaries.length).toBeLessThanOrEqual(2000);
    expect(all(doc, 'cp-marker')).toHaveLength(criticalPath.length);
    const drawn = new Set(spanRows.map((r) => titleOf(r).split(' — ')[0]));
    for (const id of criticalPath.slice(1)) expect(drawn.has(`op ${id}`)).toBe(true);
    const hidden = spans.filter((s) => !drawn.has(s.name));
    const count = (t: WaterfallSpanType): string => hidden.filter((s) => s.type === t).length.toLocaleString('en-US');
    expect(summaries).toEqual([
      `… ${hidden.length.toLocaleString('en-US')} more spans under agent.run (TOOL ×${count('TOOL')}, LLM ×${count('LLM')})`,
    ]);
  });

  it('is deterministic: the same trace, in any input order, renders the same string', () => {
    const shuffled = { ...input, spans: [...input.spans].reverse() };
    expect(renderWaterfall(input)).toBe(out);
    expect(renderWaterfall(shuffled)).toBe(out);
  });

  // How fast: bench:query's waterfall10kSpans case (a 10,000-span trace over HTTP); no timed test here.
  it('renders 2,000 spans, a bar each', () => {
    const spans = [span('root', null, 0, 20_000, 'RUN')];
    for (let i = 1; i < 2000; i++)
      spans.push(span(`s${i}`, i % 40 === 1 ? 'root' : `s${i - (i % 40) + 1}`, i * 10, i * 10 + 50, SPAN_TYPES[i % SPAN_TYPES.length]));
    const text = renderWaterfall({ traceId: 'perf', spans, criticalPath: ['root', 's1961', 's1999'] });
    expect(all(parseXml(text), 'bar')).toHaveLength(2000);
  });
});
