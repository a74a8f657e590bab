/**
 * What the io libraries need of a logger to report the errors they catch. Libraries do not import
 * the runtime's `Logger`; they take this (the `Logger` satisfies it), and fall back to `stderrLog`
 * when a caller gives none, so a caught error is never silent.
 */
export interface ErrorLog {
  warn(message: string): void;
  error(message: string, error?: unknown): void;
  /** Recoveries (a lost connection that is back); optional. */
  info?(message: string): void;
  /** Expected, harmless failures (closing what is already closed); optional. */
  debug?(message: string): void;
}

/** The runtime logger's line format on stderr, for callers that pass no log (tools, tests). */
export function stderrLog(component: string): ErrorLog {
  const write = (level: string, message: string) =>
    process.stderr.write(`${new Date().toISOString()} ${level.padEnd(5)} [${component}] ${message}\n`);
  return {
    info: (message) => write('INFO', message),
    warn: (message) => write('WARN', message),
    error: (message, error) =>
      write('ERROR', error === undefined ? message : `${message}: ${(error as { stack?: unknown } | null)?.stack ?? reasonOf(error)}`),
  };
}

/**
 * The reason of a caught error in a few words. Node's connection errors can carry an empty message
 * (an AggregateError from trying IPv6 and IPv4) with the reason in `code` or in the inner errors.
 */
export function reasonOf(error: unknown): string {
  // Duck-typed, not `instanceof Error`: errors made in another realm (a VM context, a test sandbox) are errors too.
  if (typeof error !== 'object' || error === null || typeof (error as { message?: unknown }).message !== 'string') return String(error);
  const { message: ownMessage, code, errors, name } = error as { message: string; code?: unknown; errors?: unknown; name?: unknown };
  const inner = Array.isArray(errors) ? [...new Set(errors.map((e: unknown) => reasonOf(e)))].join('; ') : '';
  const message = ownMessage || inner || (typeof code === 'string' ? code : '') || (typeof name === 'string' ? name : 'error');
  return typeof code === 'string' && code !== '' && !message.includes(code) ? `${message} (${code})` : message;
}

/**
 * A warning said at most once per interval (10 s): the first one at once, the ones after it counted,
 * and when the interval is over the latest of them with how many there were. For 'error' events
 * of connections, which a server that is down repeats on every reconnect attempt.
 */
export class ThrottledWarning {
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;
  private latest = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Pick<ErrorLog, 'warn'>,
    private readonly intervalMs = 10_000,
  ) {}

  warn(message: string): void {
    const now = Date.now();
    if (now - this.lastAt >= this.intervalMs && this.suppressed === 0) {
      this.lastAt = now;
      this.log.warn(message);
      return;
    }
    this.suppressed++;
    this.latest = message;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), Math.max(0, this.lastAt + this.intervalMs - now));
      // A pending count never keeps a process alive; close() paths call flush() themselves.
      this.timer.unref();
    }
  }

  /** Says the warnings held back so far, if any (at the end of an interval, or when closing). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.suppressed === 0) return;
    const seconds = Math.max(1, Math.round((Date.now() - this.lastAt) / 1000));
    const count = this.suppressed;
    this.suppressed = 0;
    this.lastAt = Date.now();
    this.log.warn(`${this.latest} [${count} such warning${count === 1 ? '' : 's'} in the last ${seconds} s; only the latest shown]`);
  }
}
