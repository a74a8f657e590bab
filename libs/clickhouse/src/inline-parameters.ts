/**
 * A statement's bound parameters written into its text as typed literals, for the embedded engine.
 *
 * chDB 3.4 runs the statements with bound parameters of all its sessions one at a time in the
 * process (its node binding chains them: binding is not isolated per session in libchdb), so a
 * dashboard's short read in the express lane would wait inside chDB for another project's read or
 * the worker's upkeep in the shared lane. The same statement with its values written in as
 * literals is not chained, and runs beside them. docs/architecture.md, "The express lane".
 *
 * Every value is checked against its declared type and written so that it can only be that one
 * value: a string quoted with its backslashes, quotes, NUL bytes and line breaks escaped (a bare
 * literal, as ClickHouse binds a String); a number only when it is a finite number or an integer in
 * the type's range; a date only in ClickHouse's own text form; numbers, dates and arrays wrapped in
 * `CAST(… AS <type>)` so that they keep the type the placeholder declared. A type or value outside
 * what is handled here leaves the statement as it was (bound), so nothing is ever written in that
 * was not checked; so does a statement that would pass `MAX_INLINED_BYTES` (bound values do not
 * count towards ClickHouse's `max_query_size`, written ones do). Placeholders are looked for
 * outside quoted strings, quoted identifiers and comments, where ClickHouse's parser finds them; a
 * statement with a form the scan does not follow (`#` comments, heredocs, nested comments) stays
 * bound, as does one where any `{name:` text was left unreplaced.
 */

import { stringLiteral } from './project-tables';

type Scalar = 'String' | 'Date' | 'DateTime64' | 'Float64' | IntegerType;
type IntegerType = 'UInt8' | 'UInt32' | 'UInt64' | 'Int32' | 'Int64';

const INTEGER_RANGES: Record<IntegerType, readonly [bigint, bigint]> = {
  UInt8: [0n, 255n],
  UInt32: [0n, 4_294_967_295n],
  UInt64: [0n, 18_446_744_073_709_551_615n],
  Int32: [-2_147_483_648n, 2_147_483_647n],
  Int64: [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n],
};

/** A declared type this module writes values of: a scalar, or an array of one. */
interface ParsedType {
  scalar: Scalar;
  array: boolean;
  /** The type as written in the CAST (normalised spacing). */
  sql: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$/;
/** Seconds since the epoch with up to 9 decimals (span.row.ts writes times this way). */
const EPOCH_SECONDS = /^\d{1,11}(\.\d{1,9})?$/;
const INTEGER = /^-?\d{1,20}$/;
const FLOAT = /^-?\d{1,30}(\.\d{1,30})?([eE][-+]?\d{1,3})?$/;

function parseType(declared: string): ParsedType | undefined {
  const type = declared.replace(/\s+/g, ' ').trim();
  const array = /^Array\((.*)\)$/.exec(type);
  const inner = array ? array[1]!.trim() : type;
  let scalar: Scalar | undefined;
  if (inner === 'String' || inner === 'Date' || inner === 'Float64' || inner in INTEGER_RANGES) scalar = inner as Scalar;
  else if (/^DateTime64\(\s*[0-9]\s*(,\s*'UTC'\s*)?\)$/.test(inner)) scalar = 'DateTime64';
  if (!scalar) return undefined;
  return { scalar, array: Boolean(array), sql: array ? `Array(${inner})` : inner };
}

/** One value as a literal of `scalar` (without the CAST), or undefined when it is not one. */
function literal(scalar: Scalar, value: unknown): string | undefined {
  switch (scalar) {
    case 'String':
      return typeof value === 'string' ? stringLiteral(value) : undefined;
    case 'Date':
      return typeof value === 'string' && DATE.test(value) ? stringLiteral(value) : undefined;
    case 'DateTime64':
      return typeof value === 'string' && (DATE_TIME.test(value) || EPOCH_SECONDS.test(value)) ? stringLiteral(value) : undefined;
    case 'Float64': {
      const text =
        typeof value === 'number' ? (Number.isFinite(value) ? String(value) : undefined) : typeof value === 'string' ? value : undefined;
      return text !== undefined && FLOAT.test(text) ? text : undefined;
    }
    default: {
      const text =
        typeof value === 'bigint'
          ? value.toString()
          : typeof value === 'number' && Number.isSafeInteger(value)
            ? String(value)
            : typeof value === 'string'
              ? value
              : undefined;
      if (text === undefined || !INTEGER.test(text)) return undefined;
      const [min, max] = INTEGER_RANGES[scalar];
      const n = BigInt(text);
      return n >= min && n <= max ? n.toString() : undefined;
    }
  }
}

/**
 * The value as `CAST(<literal> AS <type>)` (a string as its bare literal), or undefined when it is
 * not a value of the type or an array's literal would pass MAX_INLINED_BYTES (given up as soon as
 * it does, not built whole: the upkeep's arrays can hold 100,000 ids).
 */
function typedLiteral(type: ParsedType, value: unknown): string | undefined {
  if (!type.array) {
    const one = literal(type.scalar, value);
    if (one === undefined || type.scalar === 'String') return one;
    return `CAST(${one} AS ${type.sql})`;
  }
  if (!Array.isArray(value)) return undefined;
  const items: string[] = [];
  let length = 0;
  for (const item of value) {
    const one = literal(type.scalar, item);
    if (one === undefined) return undefined;
    length += one.length + 1;
    if (length > MAX_INLINED_BYTES) return undefined;
    items.push(one);
  }
  return `CAST([${items.join(',')}] AS ${type.sql})`;
}

/** A `{name:Type}` placeholder as ClickHouse reads it (spaces allowed around name, colon and type), capturing name and type. */
export const PLACEHOLDER_PATTERN = String.raw`\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}`;
const PLACEHOLDER = new RegExp(PLACEHOLDER_PATTERN, 'y');
/** Text that may start a placeholder, anywhere in a statement: counted, so that one the scan skipped keeps the statement bound. */
const PLACEHOLDER_START = /\{\s*[A-Za-z_][A-Za-z0-9_]*\s*:/g;

/** A statement with its values written in stays under this (ClickHouse's max_query_size is 256 KiB by default). */
export const MAX_INLINED_BYTES = 200_000;

/**
 * `query` with every `{name:Type}` placeholder replaced by its value from `params` as a typed
 * literal; undefined when any placeholder's type or value is not one handled here (or has no
 * value), in which case the statement is to be run bound, as written.
 */
export function inlineParameters(query: string, params: Record<string, unknown>): string | undefined {
  let out = '';
  let copied = 0;
  let replaced = 0;
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    if (c === '#' || c === '$') return undefined;
    if (c === "'" || c === '"' || c === '`') {
      // A quoted string or identifier: up to its closing quote, a backslash escaping the next character.
      i++;
      while (i < n && query[i] !== c) i += query[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '-' && query[i + 1] === '-') {
      const end = query.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
    } else if (c === '/' && query[i + 1] === '*') {
      const end = query.indexOf('*/', i + 2);
      // ClickHouse nests block comments; the scan does not.
      if (end === -1 || query.slice(i + 2, end).includes('/*')) return undefined;
      i = end + 2;
    } else if (c === '{') {
      PLACEHOLDER.lastIndex = i;
      const match = PLACEHOLDER.exec(query);
      if (!match) {
        i++;
        continue;
      }
      const [whole, name, declared] = match;
      const type = parseType(declared!);
      if (!type || !Object.prototype.hasOwnProperty.call(params, name!)) return undefined;
      const value = typedLiteral(type, params[name!]);
      if (value === undefined) return undefined;
      out += query.slice(copied, i) + value;
      if (out.length > MAX_INLINED_BYTES) return undefined;
      replaced++;
      i += whole.length;
      copied = i;
    } else i++;
  }
  out += query.slice(copied);
  if ((query.match(PLACEHOLDER_START)?.length ?? 0) !== replaced) return undefined;
  return Buffer.byteLength(out) > MAX_INLINED_BYTES ? undefined : out;
}

/** A call's `query_params`, when it has at least one. */
export function boundParameters(params: unknown): Record<string, unknown> | undefined {
  const bound = (params as { query_params?: unknown } | undefined)?.query_params;
  return typeof bound === 'object' && bound !== null && Object.keys(bound).length > 0 ? (bound as Record<string, unknown>) : undefined;
}

/**
 * A call's parameters with its bound values written into its query (inlineParameters), or the
 * call unchanged when it binds none or any of them is not one written in.
 */
export function withInlinedParameters<P extends { query: string; query_params?: Record<string, unknown> }>(params: P): P {
  const bound = boundParameters(params);
  if (!bound) return params;
  const query = inlineParameters(params.query, bound);
  return query === undefined ? params : { ...params, query, query_params: undefined };
}
