import 'reflect-metadata';
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { setPriority } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { WORKER_PARTICIPANT, decayInStats, decayInWords } from '@spanforge/clickhouse';
import { reportedEngineSettings, startBenchStack, temporaryDataDir } from './bench-stack';
import { cpuPercentBetween, ownThreadTicks, type CpuPercent } from './cpu';
import { argument, percentile, progress, writeResults } from './report';

/**
 * `npm run bench:soak [-- --minutes N] [--report-minutes M] [--spans-per-second R] [--dashboard-minutes D]
 * [--warmup-minutes W] [--client-nice P] [--keep-data DIR]`: a day of load, compressed. The all-in-one
 * takes continuous ingest at half the end-to-end rate bench:ingest last measured (or R), while a
 * dashboard loop queries, scores are posted and a cost report is run every minute. Every M minutes
 * (default 5) it reports accepted spans/s, the stored lag, the queue depth, the resident memory of
 * each process (PostgreSQL's as PSS; at the window's end, and the median and highest of samples
 * every 10 s), the all-in-one's memory by owner (its anonymous RSS, V8's heap, the engine's own
 * count of its memory and caches, the engine's allocator, threads, the merges in progress), its CPU
 * by thread (the engine's merges apart from its statements and from Node's JavaScript), and the
 * query p50/p99. At the end it checks the targets: RSS growth at most 10 % (the last window's
 * median against the first's), stored lag under 5 s, query p50 within 1.5x of the first window,
 * the all-in-one's RSS at most 2 GiB (every sample). Once the load has ended and the store has
 * caught up, it times the sessions and traces pages (read with FINAL) as the upkeep left their
 * tables, then again after merging them.
 *
 * The dashboard asks for the last D minutes (default 5), as a live dashboard does: once D minutes of
 * load are stored, every answer reads a range of the same size, so a slower answer means a slower
 * engine (parts, merges, the upkeep's statements), not more data. Until then the range is only
 * partly filled, so the first window's answers are the quickest of the run. `--warmup-minutes W`
 * (default 0) runs the same load for W minutes before the first window, left out of the report:
 * with W ≥ D the first window already reads full ranges, and the targets compare like with like.
 * `--dashboard-minutes 0` asks for everything stored, as the runs before session 15 did: those
 * answers grow with the project.
 *
 * The load client is a process of its own on the same machine, where clients of a real deployment
 * are elsewhere; it takes most of a core. `--client-nice P` (0 to 19, default 0) runs it at that
 * scheduling priority, so that where it and the server both want a core the server gets it.
 */

const DASHBOARD_FIELDS = [
  'sessions(first: 5%F) { nodes { sessionId costUsd } totalCount }',
  'costBreakdown(groupBy: [MODEL, DAY]%F) { keys costUsd }',
  'latencyByIterations%P { iterations p99Ms }',
  'traces(first: 20%F) { nodes { traceId durationMs costUsd } }',
];

/** The dashboard's documents: over a range given as $from and $to, or over everything stored. */
function dashboardDocuments(ranged: boolean): string[] {
  const filter = 'filter: { from: $from, to: $to }';
  return DASHBOARD_FIELDS.map((field) =>
    ranged
      ? `query($from: DateTime!, $to: DateTime!) { ${field.replace('%F', `, ${filter}`).replace('%P', `(${filter})`)} }`
      : `{ ${field.replace('%F', '').replace('%P', '')} }`,
  );
}

/** The root field a document asks for. */
const rootField = (document: string) => /\{\s*(\w+)/.exec(document)![1]!;

/**
 * The engine's own account of its memory (MiB): what its allocations hold (`tracked`, all of it,
 * and `merges`, the background merges' part), its caches, and the primary keys of the active parts.
 */
type EngineMemory = Record<keyof typeof ENGINE_METRICS, number | null>;

/**
 * Where each field of EngineMemory comes from: system.metrics, and the active parts' primary keys
 * (system.parts, read in the same statement under a name of its own).
 */
const ENGINE_METRICS = {
  tracked: 'MemoryTracking',
  merges: 'MergesMutationsMemoryTracking',
  markCache: 'MarkCacheBytes',
  primaryIndexCache: 'PrimaryIndexCacheBytes',
  queryConditionCache: 'QueryConditionCacheBytes',
  uncompressedCache: 'UncompressedCacheBytes',
  compiledExpressions: 'CompiledExpressionCacheBytes',
  primaryKeys: 'PartsPrimaryKeyBytes',
} as const;

/**
 * Resident memory of the bench's processes (MiB). `allInOneAnon` is the all-in-one's anonymous
 * part (heaps, stacks): its RSS less the pages of its files (libchdb's code is ~260–280 MiB of them).
 * `postgres` is a proportional figure (PSS): shared buffers counted once, not once per backend.
 */
type Rss = { allInOne: number; allInOneAnon: number; postgres: number; loadClient: number };

interface Window {
  minute: number;
  acceptedSpansPerSec: number;
  storedLagSeconds: number;
  queueDepth: number;
  /** Resident memory at the window's end (MiB). */
  rssMiB: Rss;
  /** Resident memory over the window, sampled every RSS_SAMPLE_MS: median and highest (MiB). */
  rssMiBMedian: Rss;
  rssMiBMax: Rss;
  /** What the embedded engine holds by its own count at the window's end (MiB): a leak grows `tracked`, caches fill their own. */
  engineMiB: EngineMemory;
  /**
   * The engine's memory allocator (jemalloc, compiled into libchdb) at the window's last read of it
   * (its sampler's, at most RSS_SAMPLE_MS before the end; MiB): EngineAllocator. Null in a window
   * where system.jemalloc_stats could not be read or has no summary line (an engine built without
   * jemalloc) at that read; the run goes on.
   */
  engineAllocatorMiB: EngineAllocator | null;
  /**
   * What Node itself holds at the window's end (MiB): V8's heap (heapUsed counts garbage not yet
   * collected), and memory outside it that V8 knows of (Buffers). The all-in-one's anonymous RSS
   * less V8's heap and the engine's tracked memory is what neither counts: the C allocator's free
   * but unreturned memory, thread stacks, allocations the engine does not track.
   */
  nodeMiB: { heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
  /**
   * The all-in-one's anonymous memory by the shape of the mapping that holds it (MiB), at the
   * window's last RSS sample (so not the same instant as `rssMiB`): which shape of mapping a growing
   * RSS grows in (ownAnonymousByMapping).
   */
  anonMiBByMapping: AnonymousByMapping;
  /**
   * The median of each of the all-in-one's memory figures (MemoryParts) over the window's samples,
   * where the figures at the window's end above land on one instant's swings. A figure's median
   * against the first window's says where a growing RSS grows. The figures overlap (MemoryParts):
   * they do not add up to the RSS, and neither do their growths.
   */
  memoryMiBMedian: MemoryParts;
  /** How many samples the window's medians are of: RSS (with V8's heap and the mappings), and the engine allocator's readable ones. */
  samples: { rss: number; engineAllocator: number };
  /** The all-in-one's threads at the window's end: the engine's pools (which keep the threads they start), V8's and libuv's. */
  threads: number;
  /** The process's pauses to hand V8's emptied heap pages back (HEAP_RELEASE_SECONDS) in the window: how many, and their mean (ms). */
  heapReleases: { count: number; meanMs: number };
  queryP50Ms: number;
  queryP99Ms: number;
  /** Each dashboard query's p50 (ms), by its root field. */
  queryP50MsByField: Record<string, number>;
  queries: number;
  /** The project's statements' wait for their turn at the engine, p50 and p95 (ms). */
  statementWaitMs: { p50: number; p95: number };
  /** The share of the window's time the engine spent on the worker's and on the project's statements. */
  engineShare: { worker: number; project: number };
  /** The statements that took the most engine time in the window: count, total and p50 (ms). */
  topStatements: Array<{ statement: string; count: number; totalMs: number; p50Ms: number }>;
  /** Active parts of the tables the dashboard reads, and merges in progress, at the window's end. */
  parts: Record<string, number>;
  merges: number;
  /**
   * The background merges in progress at each of the window's allocator reads (every RSS_SAMPLE_MS):
   * the median and highest of their memory together (MiB), and the largest merge of all the reads
   * (its table, whether it merges all columns at once or column by column, its parts, the rows it
   * had read, MiB). Null where no read of system.merges succeeded. A merge shorter than the
   * sampling interval is seen by chance.
   */
  mergesSampled: MergesSampled | null;
  /**
   * The all-in-one's CPU since the last window's report (percent of one core): in all, and by
   * thread name (ThreadTicks) for the names that took the most, plus `exited threads` for threads
   * that ended within it. Tells the engine's merges (`MergeMutate`) from its statements
   * (`ThreadPool`, `QueryPipelineEx`, and `libuv-worker`, Node's pool where chDB runs them) and
   * from Node's JavaScript (`MainThread`). A thread's ticks are booked under its name at the end.
   */
  cpuPercent: CpuPercent;
  scores: number;
  reports: number;
}

/** A merge in progress at a read of system.merges: its memory in bytes. */
type Merge = { table: string; algorithm: string; parts: number; rowsRead: number; bytes: number };

/** The largest merge, as reported (MiB). */
type LargestMerge = Omit<Merge, 'bytes'> & { memoryMiB: number };

type MergesSampled = { reads: number; memoryMiBMedian: number; memoryMiBMax: number; largest: LargestMerge | null };

/** A window's reads of system.merges (the merges in progress at each; null for a failed read) as Window['mergesSampled']. */
function mergesOver(reads: Array<Merge[] | null>): MergesSampled | null {
  const readable = reads.filter((read) => read !== null);
  if (readable.length === 0) return null;
  const memory = readable.map((merges) => mib(merges.reduce((sum, merge) => sum + merge.bytes, 0)));
  const top = readable.flat().reduce<Merge | null>((top, merge) => (top === null || merge.bytes > top.bytes ? merge : top), null);
  let largest: LargestMerge | null = null;
  if (top !== null) {
    const { bytes, ...merge } = top;
    largest = { ...merge, memoryMiB: mib(bytes) };
  }
  return { reads: readable.length, memoryMiBMedian: percentile(memory, 0.5), memoryMiBMax: Math.max(...memory), largest };
}

/** The last bench:ingest end-to-end rate, halved; 2,000 spans/s without one. */
function defaultRate(): number {
  const file = path.join(__dirname, '..', '..', 'bench', 'results', 'latest.json');
  if (!existsSync(file)) return 2_000;
  const measured = (JSON.parse(readFileSync(file, 'utf8')) as { ingest?: { e2eSpansPerSec?: number } }).ingest?.e2eSpansPerSec;
  return measured ? Math.round(measured / 2) : 2_000;
}

/**
 * How often resident memory is sampled. One sample at a window's end lands on whatever the engine
 * holds at that instant (a merge's buffers, a big insert's blocks), which moves by ±100–200 MiB
 * between windows; the median of a window's samples is what it holds steadily.
 */
const RSS_SAMPLE_MS = 10_000;

/** The least-squares slope of `values` against `at` (ms), per hour. */
function slopePerHour(samples: Array<{ at: number; value: number }>): number {
  const n = samples.length;
  if (n < 2) return 0;
  const meanAt = samples.reduce((s, p) => s + p.at, 0) / n;
  const meanValue = samples.reduce((s, p) => s + p.value, 0) / n;
  const covariance = samples.reduce((s, p) => s + (p.at - meanAt) * (p.value - meanValue), 0);
  const variance = samples.reduce((s, p) => s + (p.at - meanAt) ** 2, 0);
  return variance === 0 ? 0 : (covariance / variance) * 3_600_000;
}

const execFileText = promisify(execFile);

/**
 * A command's output, or undefined when it exits 1 (pgrep: no process matched). Run without
 * blocking: the bench samples from inside the process it measures.
 */
async function outputOf(command: string, args: string[]): Promise<string | undefined> {
  try {
    return (await execFileText(command, args, { encoding: 'utf8' })).stdout;
  } catch (error) {
    if ((error as { code?: unknown }).code === 1) return undefined;
    throw error;
  }
}

/** Keeps only the samples taken after `at`. */
function dropUntil<T extends { at: number }>(samples: T[], at: number): void {
  samples.splice(0, samples.length, ...samples.filter((sample) => sample.at > at));
}

/** Prints a message the first time its key is given, and nothing for that key afterwards. */
function onceEach(): (key: string, message: string) => void {
  const seen = new Set<string>();
  return (key, message) => {
    if (seen.has(key)) return;
    seen.add(key);
    progress(message);
  };
}

function mib(bytes: number): number {
  return Math.round(bytes / 1_048_576);
}

/**
 * A file of a process under /proc, or undefined once the process has ended (a backend whose
 * connection closed, the load client when it is done).
 */
async function procFile(pid: number | string, name: string): Promise<string | undefined> {
  const file = `/proc/${pid}/${name}`;
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return undefined;
    if (code === 'EACCES') throw new Error(`reading ${file} needs CAP_SYS_PTRACE: the process runs as another user`, { cause: error });
    throw error;
  }
}

type ProcessStatus = { rss: number; anon: number; threads: number };

/**
 * A process's resident memory, its anonymous part, and its threads, from one read of the kernel's
 * status of it (so that the two memory figures are of the same instant); undefined once it has exited.
 */
async function processStatus(pid: number | 'self'): Promise<ProcessStatus | undefined> {
  const status = await procFile(pid, 'status');
  // An exited process not yet reaped (a zombie) still has a status, without its memory lines.
  if (status === undefined || !/^VmRSS:/m.test(status)) return undefined;
  const field = (name: string) => procField(status, name, `/proc/${pid}/status`);
  return { rss: mib(field('VmRSS') * 1024), anon: mib(field('RssAnon') * 1024), threads: field('Threads') };
}

/** This process's status (processStatus): it is running, so it has one. */
async function ownStatus(): Promise<ProcessStatus> {
  return (await processStatus('self'))!;
}

/** The number on a `Name: N` line of a /proc file's text (`file` names it in the error when the line is missing). */
function procField(text: string, name: string, file: string): number {
  const value = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1];
  if (value === undefined) throw new Error(`${file} has no ${name} line`);
  return Number(value);
}

/**
 * Anonymous memory (MiB) by the shape of its mapping. Each allocator in the process maps memory its
 * own way: V8 puts its heap's regular pages in mappings of 256 KiB each (`v8Pages`); the engine's
 * jemalloc maps a few regions of 128 MiB and more (`engineRegions`); glibc's malloc has the
 * `[heap]` and 64-MiB-aligned arenas of at most 64 MiB (`glibc`). Everything else is `other`: V8's
 * large objects and code, glibc's large blocks (mapped one each), jemalloc's regions under 128 MiB,
 * thread stacks, and 256-KiB pages the kernel merged into one larger mapping. Told by shape, not by
 * owner: another allocator's mapping of the same shape would be counted with these.
 */
type AnonymousByMapping = { v8Pages: number; engineRegions: number; glibc: number; other: number };

const SMAPS_HEADER = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/;
const ARENA_ALIGNMENT = 64n * 1024n * 1024n;

/** This process's anonymous memory by mapping shape (AnonymousByMapping), from one read of /proc/self/smaps. */
async function ownAnonymousByMapping(): Promise<AnonymousByMapping> {
  const kib = { v8Pages: 0, engineRegions: 0, glibc: 0, other: 0 };
  let shape: keyof typeof kib = 'other';
  for (const line of (await procFile('self', 'smaps'))!.split('\n')) {
    const header = SMAPS_HEADER.exec(line);
    if (header) {
      const start = BigInt(`0x${header[1]}`);
      const size = BigInt(`0x${header[2]}`) - start;
      const name = header[3]!;
      // A 256-KiB mapping is V8's even where it happens to sit on a 64-MiB boundary.
      if (name === '' && size === 256n * 1024n) shape = 'v8Pages';
      else if (name === '[heap]' || (name === '' && start % ARENA_ALIGNMENT === 0n && size <= ARENA_ALIGNMENT)) shape = 'glibc';
      else if (name === '' && size >= 128n * 1024n * 1024n) shape = 'engineRegions';
      else shape = 'other';
    } else if (line.startsWith('Anonymous:')) {
      // `Anonymous:    1234 kB`: about 2,000 of these a read, so no pattern is built for each.
      kib[shape] += Number(line.slice('Anonymous:'.length).trim().split(' ')[0]);
    }
  }
  return {
    v8Pages: mib(kib.v8Pages * 1024),
    engineRegions: mib(kib.engineRegions * 1024),
    glibc: mib(kib.glibc * 1024),
    other: mib(kib.other * 1024),
  };
}

/**
 * What the all-in-one reads of its own memory at the instant of an RSS sample (MiB): V8's heap (what
 * it has committed, not all of it resident, and what of that its objects use, garbage included
 * until collected) and the anonymous memory by mapping shape.
 */
type OwnMemory = { v8HeapTotal: number; v8HeapUsed: number } & AnonymousByMapping;

/**
 * The all-in-one's memory figures (MiB): its own (OwnMemory), and the engine allocator's
 * (EngineAllocator, each as `engineAllocator<Part>`), which take a statement to read (null where
 * none could be read). They overlap, as two views of one memory: V8's heap lies in the 256-KiB
 * pages and `other` (its large objects), the allocator's resident pages in `engineRegions` and
 * `other`; and the allocator's figures nest (below).
 */
type MemoryParts = OwnMemory & { [Part in EngineAllocatorPart as `engineAllocator${Capitalize<Part>}`]: number | null };

/**
 * The engine allocator's figures (MiB), from its stats (jemalloc 5.3's meanings):
 * - `allocated`: what it has handed out, counted at the size of each block's size class;
 * - `tcache`: of that, the blocks its threads' caches hold for their next allocations (an idle
 *   thread keeps its cache);
 * - `active`: the pages in use; beyond `allocated`, the free blocks of partly used slabs and a page
 *   of padding per large block;
 * - `dirty`: freed pages not yet handed back (they decay: engineAllocatorDirtyDecayMs in the results;
 *   the page allocator's, not those of jemalloc's experimental huge-page allocator, off in chDB);
 * - `metadata`: its own books (its base allocations, and `internal`, which `active` already counts);
 * - `resident`: active + dirty + the base's pages: an upper bound, as pages never touched count;
 * - `mapped`: what it has mapped, not all of it resident;
 * - `retained`: addresses it unmapped and kept for later, not resident;
 * - `inBlocksTo1KiB` … `inBlocksOver64MiB`: `allocated` by the size of its blocks (from
 *   system.jemalloc_bins), so that a growing `allocated` tells many small objects (the engine's
 *   structures) from larger buffers. A separate snapshot, a statement after the stats': in a probe
 *   the bands summed to within 2–3 MiB of `allocated`. Their medians may rest on fewer reads than
 *   `samples.engineAllocator` (the stats' reads) counts.
 * A figure the stats do not have (another jemalloc version) is null.
 */
const ENGINE_ALLOCATOR_STATS = ['allocated', 'tcache', 'active', 'dirty', 'metadata', 'resident', 'mapped', 'retained'] as const;
/**
 * The blocks' size bands of `allocated`: each band's name and the largest block size (bytes) in it.
 * The first two hold the slabs' classes (up to 14 KiB), the others jemalloc's large ones (16 KiB on).
 */
const ENGINE_ALLOCATOR_SIZE_BANDS = [
  ['inBlocksTo1KiB', 1024],
  ['inBlocksUnder16KiB', 16 * 1024 - 1],
  ['inBlocksTo1MiB', 1024 * 1024],
  ['inBlocksTo64MiB', 64 * 1024 * 1024],
  ['inBlocksOver64MiB', Infinity],
] as const;
const ENGINE_ALLOCATOR_PARTS = [...ENGINE_ALLOCATOR_STATS, ...ENGINE_ALLOCATOR_SIZE_BANDS.map(([band]) => band)] as const;
type EngineAllocatorPart = (typeof ENGINE_ALLOCATOR_PARTS)[number];
type EngineAllocator = Record<EngineAllocatorPart, number | null>;
type EngineAllocatorSizeBands = Record<(typeof ENGINE_ALLOCATOR_SIZE_BANDS)[number][0], number | null>;

/** A row of system.jemalloc_bins (its 64-bit counts come as strings in JSON). */
type JemallocBin = Record<'large' | 'size' | 'allocations' | 'deallocations' | 'curregs', number | string>;

/**
 * `allocated` by the size of its blocks (MiB; EngineAllocator), from the rows of
 * system.jemalloc_bins: a slab's class holds `curregs` blocks, a large class as many as it
 * allocated less those it freed.
 */
function allocatedBySize(bins: JemallocBin[]): EngineAllocatorSizeBands {
  const bytes = ENGINE_ALLOCATOR_SIZE_BANDS.map(() => 0);
  for (const bin of bins) {
    const blocks = Number(bin.large) ? Number(bin.allocations) - Number(bin.deallocations) : Number(bin.curregs);
    const band = ENGINE_ALLOCATOR_SIZE_BANDS.findIndex(([, largest]) => Number(bin.size) <= largest);
    if (band < 0) throw new Error(`system.jemalloc_bins has a row without a size: ${JSON.stringify(bin)}`);
    bytes[band]! += blocks * Number(bin.size);
  }
  return Object.fromEntries(ENGINE_ALLOCATOR_SIZE_BANDS.map(([band], i) => [band, mib(bytes[i]!)])) as EngineAllocatorSizeBands;
}

/** The median of each of the engine allocator's figures over a window's reads that have it, as MemoryParts names them; null with none. */
function engineAllocatorMedians(reads: EngineAllocator[]): Pick<MemoryParts, `engineAllocator${Capitalize<EngineAllocatorPart>}`> {
  const medians = reads.length === 0 ? undefined : fieldwise(reads, (values) => percentile(values, 0.5));
  return Object.fromEntries(
    ENGINE_ALLOCATOR_PARTS.map((part) => [`engineAllocator${part[0]!.toUpperCase()}${part.slice(1)}`, medians?.[part] ?? null]),
  ) as Pick<MemoryParts, `engineAllocator${Capitalize<EngineAllocatorPart>}`>;
}

/**
 * The engine allocator's figures (EngineAllocator) from the text of system.jemalloc_stats, or
 * null without its summary line (an engine built without jemalloc). `missing` is told the name of
 * each figure the text lacks.
 */
function parseEngineAllocator(
  stats: string,
  missing: (figure: string) => void,
): Record<(typeof ENGINE_ALLOCATOR_STATS)[number], number | null> | null {
  const summary = /^Allocated: .*$/m.exec(stats)?.[0];
  if (summary === undefined) return null;
  const bytes = (text: string | undefined, pattern: RegExp, figure: string): number | null => {
    const value = text === undefined ? undefined : pattern.exec(text)?.[1];
    if (value === undefined) missing(figure);
    return value === undefined ? null : Number(value);
  };
  const inSummary = (name: string) => bytes(summary, new RegExp(`\\b${name}: (\\d+)`, 'i'), `${name} in the summary line`);
  // The arenas' figures summed: jemalloc prints them merged when more than one arena is in use,
  // before each arena's own section (the first, arenas[0], when only it is).
  const merged = /^Merged arenas stats:$/m.exec(stats) ?? /^arenas\[0\]:$/m.exec(stats);
  const section = merged === null ? undefined : stats.slice(merged.index + merged[0].length).split(/^arenas\[\d+\]:$/m)[0];
  const dirtyPages = bytes(section, /^[ \t]*dirty:[ \t]+\S+[ \t]+(\d+)/m, "the arenas' dirty pages");
  const pageSize = bytes(stats, /^Page size: (\d+)/m, 'the page size');
  const tcache = bytes(section, /^tcache_bytes:[ \t]+(\d+)/m, "the arenas' tcache_bytes");
  const inMiB = (value: number | null) => (value === null ? null : mib(value));
  return {
    allocated: inMiB(inSummary('allocated')),
    tcache: inMiB(tcache),
    active: inMiB(inSummary('active')),
    dirty: dirtyPages === null || pageSize === null ? null : mib(dirtyPages * pageSize),
    metadata: inMiB(inSummary('metadata')),
    resident: inMiB(inSummary('resident')),
    mapped: inMiB(inSummary('mapped')),
    retained: inMiB(inSummary('retained')),
  };
}

/**
 * Each field's `pick` over the records that have a number for it (a median, a highest), rounded, or
 * null where none has. The records, at least one, have the same fields.
 */
function fieldwise<T extends Record<string, number | null>>(records: T[], pick: (values: number[]) => number): T {
  const fields = Object.keys(records[0]!) as Array<keyof T>;
  return Object.fromEntries(
    fields.map((name) => {
      const values = records.map((record) => record[name]).filter((value): value is number & T[keyof T] => value !== null);
      return [name, values.length === 0 ? null : Math.round(pick(values))];
    }),
  ) as T;
}

/** The pid of the embedded PostgreSQL's postmaster for this data directory, or undefined when none runs. */
async function postmasterOf(dataDir: string): Promise<string | undefined> {
  const found = await outputOf('pgrep', ['-f', '--', `-D ${path.join(dataDir, 'postgres')}`]);
  return found?.split('\n')[0]!.trim() || undefined;
}

/**
 * Proportional resident memory (MiB) of the embedded PostgreSQL: its postmaster and the backends
 * it forked (found anew each time: connections come and go). Their RSS summed would count the
 * shared buffers once per backend that touched them; PSS splits each shared page between the
 * processes that map it, so the sum counts it once.
 */
async function postgresPssMiB(postmaster: string): Promise<number> {
  const backends =
    (await outputOf('pgrep', ['--parent', postmaster]))
      ?.split('\n')
      .map((pid) => pid.trim())
      .filter(Boolean) ?? [];
  let kib = 0;
  for (const pid of [postmaster, ...backends]) {
    // A backend that ended between pgrep and this read holds nothing now.
    const rollup = await procFile(pid, 'smaps_rollup');
    if (rollup !== undefined) kib += procField(rollup, 'Pss', `/proc/${pid}/smaps_rollup`);
  }
  return mib(kib * 1024);
}

async function main(): Promise<void> {
  const minutes = Number(argument('--minutes', '60'));
  const reportMinutes = Number(argument('--report-minutes', '5'));
  const rate = Number(argument('--spans-per-second', String(defaultRate())));
  // --keep-data DIR: the run's data stays in DIR (empty or absent) for a look afterwards.
  const kept = argument('--keep-data', '');
  const dashboardMinutes = Number(argument('--dashboard-minutes', '5'));
  const clientNice = Number(argument('--client-nice', '0'));
  const warmupMinutes = Number(argument('--warmup-minutes', '0'));
  if (!(reportMinutes * 60_000 >= 2 * RSS_SAMPLE_MS))
    throw new Error(`--report-minutes ${reportMinutes}: a window must hold at least two RSS samples (${(2 * RSS_SAMPLE_MS) / 1000} s)`);
  const dashboard = dashboardDocuments(dashboardMinutes > 0);
  const range = () =>
    dashboardMinutes > 0 ? { from: new Date(Date.now() - dashboardMinutes * 60_000).toISOString(), to: new Date().toISOString() } : {};
  const dataDir = kept ? path.resolve(kept) : temporaryDataDir('spanforge-soak-');
  if (kept) {
    mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    if (readdirSync(dataDir).length > 0) throw new Error(`--keep-data ${dataDir}: not empty`);
  }
  const stack = await startBenchStack(dataDir, { ALLOW_PRIVATE_WEBHOOKS: 'true', QUEUE_MAX_BACKLOG: '1000000' });
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const webhook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/reports`;
  try {
    await stack.startWorkers();
    const [httpLine] = await stack.startGateway();
    const otlp = /http:\/\/\S+/.exec(httpLine!)![0];
    const api = (await stack.startApi()).replace('localhost', '127.0.0.1');
    const { tenant, project } = await stack.tenancy.createTenant('soak');
    const { secret } = await stack.tenancy.createApiKey(project.id, 'soak');
    const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(`${api}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ query, variables }),
      });
      const answer = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
      if (answer.errors) throw new Error(`GraphQL: ${JSON.stringify(answer.errors)}`);
      return answer.data!;
    };
    const created = await graphql(
      `
        mutation ($input: CostReportScheduleInput!) {
          createCostReportSchedule(input: $input) {
            schedule {
              id
            }
          }
        }
      `,
      { input: { cron: '0 * * * *', timezone: 'UTC', window: 'PT1H', groupBy: ['MODEL'], webhookUrl: webhook, includeFeedback: true } },
    );
    const scheduleId = (created.createCostReportSchedule as { schedule: { id: string } }).schedule.id;
    progress(
      `soak: ${minutes} min at ${rate} spans/s into project ${project.id} of tenant ${tenant.id}, reports every ${reportMinutes} min, ` +
        `dashboard over ${dashboardMinutes > 0 ? `the last ${dashboardMinutes} min` : 'everything stored'}, load client at nice ${clientNice}` +
        (warmupMinutes > 0 ? `, after ${warmupMinutes} min of the same load left out of the report` : ''),
    );
    const settings = await reportedEngineSettings(stack.clickhouse);

    const client = spawn(
      process.execPath,
      [path.join(__dirname, 'soak-client.js'), otlp, secret, String(rate), String(minutes + warmupMinutes)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    if (clientNice !== 0) setPriority(client.pid!, clientNice);
    let clientLines = '';
    const accepted: Array<{ at: number; spans: number }> = [];
    client.stdout.on('data', (chunk: Buffer) => {
      clientLines += chunk.toString('utf8');
      for (let end = clientLines.indexOf('\n'); end !== -1; end = clientLines.indexOf('\n')) {
        const line = JSON.parse(clientLines.slice(0, end)) as { at: number; acceptedSpans: number };
        accepted.push({ at: line.at, spans: line.acceptedSpans });
        clientLines = clientLines.slice(end + 1);
      }
    });
    const clientDone = new Promise<void>((resolve, reject) =>
      client.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`soak client exited ${code}`)))),
    );

    // The report's first window starts after the warm-up; the load and the loops run from now.
    const started = Date.now() + warmupMinutes * 60_000;
    const until = started + minutes * 60_000;
    const latencies: Array<{ at: number; ms: number; field: string }> = [];
    const waits: Array<{ at: number; ms: number }> = [];
    const engineMs = { worker: 0, project: 0 };
    let statementMs = new Map<string, number[]>();
    stack.querySlots.observeWaits((participant, ms) => {
      if (participant === project.id) waits.push({ at: Date.now(), ms });
    });
    stack.querySlots.observeRuns((participant, ms, statement) => {
      if (participant === WORKER_PARTICIPANT) engineMs.worker += ms;
      else if (participant === project.id) engineMs.project += ms;
      const name = statement || '(unnamed)';
      const times = statementMs.get(name) ?? [];
      times.push(ms);
      statementMs.set(name, times);
    });
    const traceIds: string[] = [];
    let scores = 0;
    let reports = 0;
    const dashboardLoop = async () => {
      while (Date.now() < until) {
        for (const document of dashboard) {
          const begun = performance.now();
          const data = await graphql(document, range());
          latencies.push({ at: Date.now(), ms: performance.now() - begun, field: rootField(document) });
          const nodes = (data.traces as { nodes?: Array<{ traceId: string }> } | undefined)?.nodes;
          if (nodes) traceIds.splice(0, traceIds.length, ...nodes.map((n) => n.traceId));
        }
      }
    };
    const feedback = async () => {
      while (Date.now() < until) {
        await new Promise((r) => setTimeout(r, 1_000));
        const traceId = traceIds[Math.floor(Math.random() * traceIds.length)];
        if (!traceId) continue;
        const response = await fetch(`${api}/v1/feedback`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
          body: JSON.stringify({ traceId, name: 'helpfulness', value: Math.random() }),
        });
        await response.arrayBuffer();
        if (response.status === 202) scores++;
      }
    };
    const costReports = async () => {
      while (Date.now() < until) {
        await new Promise((r) => setTimeout(r, 60_000));
        if (Date.now() >= until) break;
        await graphql('mutation($id: ID!) { runCostReportNow(scheduleId: $id) { id } }', { id: scheduleId });
        reports++;
      }
    };

    // The RSS and the process's own memory, read together on fixed ticks (nothing in them waits for
    // the engine); the engine allocator's pages, which take a statement that waits its turn at the
    // engine, on ticks of their own, timed when the answer comes.
    const rssSamples: Array<{ at: number; rss: Rss; own: OwnMemory }> = [];
    const allocatorSamples: Array<{ at: number; allocator: Window['engineAllocatorMiB']; merges: Merge[] | null }> = [];
    // The sample being read, which a window's end waits for: one it started before its end is its.
    let sampling: Promise<void> = Promise.resolve();
    // The postmaster runs for the whole run: looked up once it is found, not at every sample.
    let postmaster: string | undefined;
    // `own`: a read of this process's status already made for the same instant.
    const rssNow = async (own?: ProcessStatus): Promise<Rss> => {
      own ??= await ownStatus();
      postmaster ??= await postmasterOf(dataDir);
      return {
        allInOne: own.rss,
        allInOneAnon: own.anon,
        postgres: postmaster === undefined ? 0 : await postgresPssMiB(postmaster),
        loadClient: client.pid === undefined ? 0 : ((await processStatus(client.pid))?.rss ?? 0),
      };
    };
    // A reading of every RSS_SAMPLE_MS on fixed ticks, whatever a reading takes (a late one is not made up for).
    const everyTick = async (read: () => Promise<void>) => {
      for (let tick = Date.now(); tick < until; tick = Math.max(tick + RSS_SAMPLE_MS, Date.now())) {
        await waitUntil(tick);
        await read();
      }
    };
    const rssSampler = () =>
      everyTick(async () => {
        const at = Date.now();
        sampling = (async () => void rssSamples.push({ at, rss: await rssNow(), own: await ownMemory() }))();
        await sampling;
      });
    const allocatorSampler = () =>
      everyTick(async () => {
        const allocator = await engineAllocator();
        // Timed when the allocator's answer came, as before the merges were read beside it.
        const at = Date.now();
        allocatorSamples.push({ at, allocator, merges: await mergesNow() });
      });

    const windows: Window[] = [];
    const gauge = async (name: string) => (await stack.metrics.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
    const acceptedByGateway = async () =>
      ((await stack.metrics.getSingleMetric('spanforge_gateway_spans_total')?.get())?.values ?? [])
        .filter((v) => v.labels.outcome === 'accepted')
        .reduce((n, v) => n + v.value, 0);
    // The heap releases' pauses so far (spanforge_heap_release_seconds): how many, and their sum (ms).
    const heapReleasesSoFar = async () => {
      const values = (await stack.metrics.getSingleMetric('spanforge_heap_release_seconds')?.get())?.values ?? [];
      const total = (suffix: string) =>
        values.find((v) => (v as { metricName?: string }).metricName === `spanforge_heap_release_seconds_${suffix}`)?.value ?? 0;
      return { count: total('count'), ms: total('sum') * 1000 };
    };
    let heapReleasesBefore = { count: 0, ms: 0 };
    // The pauses since the last call: a window's, once called at its end.
    const heapReleasesSince = async (): Promise<Window['heapReleases']> => {
      const now = await heapReleasesSoFar();
      const [count, ms] = [now.count - heapReleasesBefore.count, now.ms - heapReleasesBefore.ms];
      heapReleasesBefore = now;
      return { count, meanMs: count === 0 ? 0 : Number((ms / count).toFixed(1)) };
    };
    const storedSpans = async () => {
      const result = await stack.clickhouse.query({
        query: 'SELECT count() AS n FROM spans WHERE project_id = {p:String}',
        query_params: { p: project.id },
        format: 'JSONEachRow',
      });
      return Number((await result.json<{ n: string }>())[0]?.n ?? 0);
    };
    const activeParts = async () => {
      const result = await stack.clickhouse.query({
        query: `SELECT table, count() AS n FROM system.parts
                WHERE active AND database = currentDatabase() AND table IN ({tables:Array(String)}) GROUP BY table ORDER BY table`,
        query_params: {
          tables: [
            'spans',
            'traces',
            'trace_index',
            'trace_figures',
            'sessions',
            'session_figures',
            'session_minutes',
            'cost_daily',
            'trace_minutes',
            'cost_minute',
            'trace_metrics_minute',
            'trace_metrics_hour',
          ],
        },
        format: 'JSONEachRow',
      });
      return Object.fromEntries((await result.json<{ table: string; n: string }>()).map((r) => [r.table, Number(r.n)]));
    };
    const warnOnce = onceEach();
    const engineMemory = async (): Promise<EngineMemory> => {
      const result = await stack.clickhouse.query({
        query: `SELECT metric, toFloat64(value) AS value FROM system.metrics WHERE metric IN {names:Array(String)}
                UNION ALL SELECT {parts:String}, toFloat64(sum(primary_key_bytes_in_memory)) FROM system.parts WHERE active`,
        query_params: { names: Object.values(ENGINE_METRICS), parts: ENGINE_METRICS.primaryKeys },
        format: 'JSONEachRow',
      });
      const values = new Map((await result.json<{ metric: string; value: number }>()).map((row) => [row.metric, row.value]));
      const fields = Object.keys(ENGINE_METRICS) as Array<keyof typeof ENGINE_METRICS>;
      return Object.fromEntries(
        fields.map((field) => {
          const value = values.get(ENGINE_METRICS[field]);
          if (value !== undefined) return [field, mib(value)];
          // An engine of another version may not have it: the window says null, and the run goes on.
          warnOnce(field, `the engine reports no ${ENGINE_METRICS[field]} in system.metrics: engineMiB.${field} is null`);
          return [field, null];
        }),
      ) as EngineMemory;
    };
    // How soon the engine's allocator hands freed pages back (ms; -1: never), from the first read
    // of its stats that has it (as a rule a sample in the warm-up).
    let engineAllocatorDirtyDecayMs: number | undefined;
    const engineAllocator = async (): Promise<Window['engineAllocatorMiB']> => {
      let stats: string;
      try {
        stats = await (await stack.clickhouse.query({ query: 'SELECT * FROM system.jemalloc_stats', format: 'TabSeparatedRaw' })).text();
      } catch (error) {
        // Read every RSS_SAMPLE_MS: the first failure is printed, and each window counts the reads that succeeded.
        warnOnce(
          'unreadable',
          `system.jemalloc_stats unreadable (${(error as Error).message}): engineAllocatorMiB is null where a window's last read failed, ` +
            'the engineAllocator… medians and engineAllocatorDirtyDecayMs where none succeeded; later failures are not printed ' +
            '(samples.engineAllocator counts the reads that succeeded)',
        );
        return null;
      }
      const decay = decayInStats(stats);
      if (decay === null)
        warnOnce(
          'decay',
          `no "opt.dirty_decay_ms" line in system.jemalloc_stats: engineAllocatorDirtyDecayMs is null unless a later read has it`,
        );
      else if (engineAllocatorDirtyDecayMs === undefined) {
        engineAllocatorDirtyDecayMs = decay;
        progress(
          `the engine's allocator hands freed pages back ${decayInWords(decay)} (opt.dirty_decay_ms: ${decay}; JE_MALLOC_CONF sets it)`,
        );
      }
      const figures = parseEngineAllocator(stats, (figure) =>
        warnOnce(`allocator ${figure}`, `no ${figure} in system.jemalloc_stats: that figure is null where it is missing`),
      );
      if (figures === null) {
        warnOnce(
          'allocator',
          `no "Allocated: …" summary in system.jemalloc_stats (${stats.slice(0, 200)}): engineAllocatorMiB and the engineAllocator… medians are null`,
        );
        return null;
      }
      // After the stats, whose read refreshes jemalloc's counts (whether jemalloc_bins refreshes them itself depends on the engine's version).
      return { ...figures, ...(await engineAllocatorBySize()) };
    };
    const engineAllocatorBySize = async (): Promise<EngineAllocatorSizeBands> => {
      try {
        const bins = await (
          await stack.clickhouse.query({
            query: 'SELECT large, size, allocations, deallocations, curregs FROM system.jemalloc_bins',
            format: 'JSONEachRow',
          })
        ).json<JemallocBin>();
        return allocatedBySize(bins);
      } catch (error) {
        warnOnce(
          'bins',
          `system.jemalloc_bins unreadable (${(error as Error).message}): the inBlocks… figures are null where it failed; later failures are not printed`,
        );
        return Object.fromEntries(ENGINE_ALLOCATOR_SIZE_BANDS.map(([band]) => [band, null])) as EngineAllocatorSizeBands;
      }
    };
    const nodeMemory = (): Window['nodeMiB'] => {
      const usage = process.memoryUsage();
      return {
        heapUsed: mib(usage.heapUsed),
        heapTotal: mib(usage.heapTotal),
        external: mib(usage.external),
        arrayBuffers: mib(usage.arrayBuffers),
      };
    };
    // Its mappings are read from /proc/self/smaps, a text of 1–2 MB that becomes V8 garbage each sample.
    const ownMemory = async (): Promise<OwnMemory> => {
      const { heapTotal, heapUsed } = nodeMemory();
      return { v8HeapTotal: heapTotal, v8HeapUsed: heapUsed, ...(await ownAnonymousByMapping()) };
    };
    // The merges in progress, read beside the allocator's figures: which merges hold the engine's memory.
    const mergesNow = async (): Promise<Merge[] | null> => {
      try {
        const rows = await (
          await stack.clickhouse.query({
            query: `SELECT table, merge_algorithm AS algorithm, num_parts AS parts, rows_read, memory_usage AS bytes
                    FROM system.merges WHERE database = currentDatabase()`,
            format: 'JSONEachRow',
          })
        ).json<{ table: string; algorithm: string; parts: string; rows_read: string; bytes: string }>();
        return rows.map((row) => ({
          table: row.table,
          algorithm: row.algorithm,
          parts: Number(row.parts),
          rowsRead: Number(row.rows_read),
          bytes: Number(row.bytes),
        }));
      } catch (error) {
        warnOnce(
          'merges',
          `system.merges unreadable (${(error as Error).message}): mergesSampled counts the reads that succeeded; later failures are not printed`,
        );
        return null;
      }
    };
    const runningMerges = async () => {
      const result = await stack.clickhouse.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' });
      return Number((await result.json<{ n: string }>())[0]?.n ?? 0);
    };
    // Waits until a time (ms): read once, so a clock passing it between two reads asks no negative timeout.
    const waitUntil = async (at: number) => {
      const wait = at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    };
    const report = async () => {
      // The engine's time, the statements and the heap releases of the warm-up are not the first window's.
      await waitUntil(started);
      engineMs.worker = engineMs.project = 0;
      statementMs = new Map();
      await heapReleasesSince();
      let threadTicks = ownThreadTicks();
      for (let minute = reportMinutes; started + minute * 60_000 <= until + 1_000; minute += reportMinutes) {
        const due = started + minute * 60_000;
        await waitUntil(due);
        const from = due - reportMinutes * 60_000;
        // The RSS samples of the window, read once: with the one taken just before its end.
        await sampling;
        const memorySamples = rssSamples.filter((sample) => sample.at > from && sample.at <= due);
        if (memorySamples.length === 0)
          throw new Error(`no RSS sample between ${new Date(from).toISOString()} and ${new Date(due).toISOString()}`);
        const rssOver = (pick: (values: number[]) => number) =>
          fieldwise(
            memorySamples.map((sample) => sample.rss),
            pick,
          );
        const windowAllocatorSamples = allocatorSamples.filter((sample) => sample.at > from && sample.at <= due);
        const allocatorReads = windowAllocatorSamples.map((sample) => sample.allocator);
        const readableAllocatorReads = allocatorReads.filter((read) => read !== null);
        const windowLatencies = latencies.filter((l) => l.at > from && l.at <= due);
        const inWindow = windowLatencies.map((l) => l.ms);
        const byField: Record<string, number> = {};
        for (const field of new Set(windowLatencies.map((l) => l.field)))
          byField[field] = Number(
            percentile(
              windowLatencies.filter((l) => l.field === field).map((l) => l.ms),
              0.5,
            ).toFixed(1),
          );
        const windowWaits = waits.filter((w) => w.at > from && w.at <= due).map((w) => w.ms);
        const windowMs = reportMinutes * 60_000;
        const share = {
          worker: Number((engineMs.worker / windowMs).toFixed(3)),
          project: Number((engineMs.project / windowMs).toFixed(3)),
        };
        engineMs.worker = engineMs.project = 0;
        const topStatements = [...statementMs]
          .map(([statement, times]) => ({
            statement,
            count: times.length,
            totalMs: Math.round(times.reduce((a, b) => a + b, 0)),
            p50Ms: Number(percentile(times, 0.5).toFixed(1)),
          }))
          .sort((a, b) => b.totalMs - a.totalMs)
          .slice(0, 8);
        statementMs = new Map();
        const spans = accepted.filter((a) => a.at > from && a.at <= due).reduce((n, a) => n + a.spans, 0);
        // What the gateways accepted and the store does not hold yet, in seconds of the offered rate.
        const lag = Math.max(0, (await acceptedByGateway()) - (await storedSpans())) / rate;
        const endStatus = await ownStatus();
        const [ticksBefore, ticksAfter] = [threadTicks, ownThreadTicks()];
        threadTicks = ticksAfter;
        const window: Window = {
          minute,
          acceptedSpansPerSec: Math.round(spans / (reportMinutes * 60)),
          storedLagSeconds: Number(lag.toFixed(2)),
          queueDepth: await gauge('spanforge_ingest_queue_depth'),
          rssMiB: await rssNow(endStatus),
          rssMiBMedian: rssOver((values) => percentile(values, 0.5)),
          rssMiBMax: rssOver((values) => Math.max(...values)),
          queryP50Ms: Number(percentile(inWindow, 0.5).toFixed(1)),
          queryP99Ms: Number(percentile(inWindow, 0.99).toFixed(1)),
          queryP50MsByField: byField,
          queries: inWindow.length,
          statementWaitMs: { p50: Number(percentile(windowWaits, 0.5).toFixed(1)), p95: Number(percentile(windowWaits, 0.95).toFixed(1)) },
          engineShare: share,
          topStatements,
          parts: await activeParts(),
          merges: await runningMerges(),
          mergesSampled: mergesOver(windowAllocatorSamples.map((sample) => sample.merges)),
          cpuPercent: cpuPercentBetween(ticksBefore, ticksAfter),
          engineMiB: await engineMemory(),
          engineAllocatorMiB: allocatorReads.at(-1) ?? null,
          nodeMiB: nodeMemory(),
          anonMiBByMapping: (({ v8HeapTotal: _total, v8HeapUsed: _used, ...mappings }) => mappings)(memorySamples.at(-1)!.own),
          memoryMiBMedian: {
            ...fieldwise(
              memorySamples.map((sample) => sample.own),
              (values) => percentile(values, 0.5),
            ),
            ...engineAllocatorMedians(readableAllocatorReads),
          },
          samples: { rss: memorySamples.length, engineAllocator: readableAllocatorReads.length },
          threads: endStatus.threads,
          heapReleases: await heapReleasesSince(),
          scores,
          reports,
        };
        windows.push(window);
        progress(JSON.stringify(window));
        // The window's latency, wait and acceptance samples are reported: they do not pile up over the run.
        dropUntil(latencies, due);
        dropUntil(waits, due);
        dropUntil(accepted, due);
      }
    };
    await Promise.all([dashboardLoop(), feedback(), costReports(), report(), rssSampler(), allocatorSampler(), clientDone]);

    // After the load: the figure tables the pages read with FINAL, as an hour of upkeep left them
    // and after a merge of each into one part per partition (what FINAL then has nothing to do).
    const caughtUp = Date.now() + 10 * 60_000;
    while ((await acceptedByGateway()) > (await storedSpans()) && Date.now() < caughtUp) await new Promise((r) => setTimeout(r, 1_000));
    await new Promise((r) => setTimeout(r, 10_000));
    const pageP50 = async () => {
      const byField: Record<string, number> = {};
      // The pages over everything stored: what FINAL has to do grows with what the upkeep left unmerged.
      for (const document of dashboardDocuments(false).filter((d) => ['sessions', 'traces'].includes(rootField(d)))) {
        const times: number[] = [];
        for (let i = 0; i < 25; i++) {
          const begun = performance.now();
          await graphql(document);
          times.push(performance.now() - begun);
        }
        byField[rootField(document)] = Number(percentile(times, 0.5).toFixed(1));
      }
      return byField;
    };
    const partsOf = async () => {
      const parts = await activeParts();
      return { trace_figures: parts.trace_figures ?? 0, session_figures: parts.session_figures ?? 0 };
    };
    const afterUpkeep = { pageP50Ms: await pageP50(), parts: await partsOf() };
    for (const table of ['trace_figures', 'session_figures']) await stack.clickhouse.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    const afterMerge = { pageP50Ms: await pageP50(), parts: await partsOf() };
    const settledReads = {
      afterUpkeep,
      afterMerge,
      ratio: Object.fromEntries(
        Object.entries(afterUpkeep.pageP50Ms).map(([field, ms]) => [field, Number((ms / afterMerge.pageP50Ms[field]!).toFixed(2))]),
      ),
    };
    progress(`figure tables after the upkeep and after a merge: ${JSON.stringify(settledReads)}`);

    const first = windows[0]!;
    const last = windows[windows.length - 1]!;
    // RSS growth compares the windows' medians; the one sample at each end, and the hour's trend
    // (a leak climbs steadily, where a merge's buffers come and go), are reported beside it.
    const reported = rssSamples.filter((sample) => sample.at > started && sample.at <= until);
    const trend = slopePerHour(reported.map((sample) => ({ at: sample.at, value: sample.rss.allInOne })));
    const targets = {
      rssGrowth: Number((last.rssMiBMedian.allInOne / first.rssMiBMedian.allInOne - 1).toFixed(3)),
      rssGrowthMet: last.rssMiBMedian.allInOne <= first.rssMiBMedian.allInOne * 1.1,
      rssAnonGrowth: Number((last.rssMiBMedian.allInOneAnon / first.rssMiBMedian.allInOneAnon - 1).toFixed(3)),
      rssGrowthAtWindowEnds: Number((last.rssMiB.allInOne / first.rssMiB.allInOne - 1).toFixed(3)),
      rssTrendPerHour: Number((trend / first.rssMiBMedian.allInOne).toFixed(3)),
      maxStoredLagSeconds: Math.max(...windows.map((w) => w.storedLagSeconds)),
      storedLagMet: windows.every((w) => w.storedLagSeconds < 5),
      queryP50Growth: Number((last.queryP50Ms / first.queryP50Ms).toFixed(2)),
      queryP50Met: windows.every((w) => w.queryP50Ms <= first.queryP50Ms * 1.5),
      maxRssMiB: Math.max(...windows.map((w) => Math.max(w.rssMiB.allInOne, w.rssMiBMax.allInOne))),
      rssMet: windows.every((w) => Math.max(w.rssMiB.allInOne, w.rssMiBMax.allInOne) <= 2_048),
    };
    progress(`targets: ${JSON.stringify(targets)}`);
    // Where the memory grew: each figure's median in the last window less the first's (MiB; they
    // overlap, as MemoryParts says, so they do not add up to the RSS's growth).
    const memoryGrowthMiB = Object.fromEntries(
      (Object.keys(first.memoryMiBMedian) as Array<keyof MemoryParts>).map((part) => {
        const [from, to] = [first.memoryMiBMedian[part], last.memoryMiBMedian[part]];
        return [part, from === null || to === null ? null : to - from];
      }),
    ) as Record<keyof MemoryParts, number | null>;
    progress(`memory growth by figure (MiB, overlapping): ${JSON.stringify(memoryGrowthMiB)}`);
    writeResults({
      soak: {
        minutes,
        reportMinutes,
        spansPerSecond: rate,
        dashboardMinutes,
        engineAllocatorDirtyDecayMs: engineAllocatorDirtyDecayMs ?? null,
        engineSettings: settings,
        windows,
        targets,
        memoryGrowthMiB,
        settledReads,
      },
    });
  } finally {
    receiver.close();
    await stack.shutdown.run();
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
