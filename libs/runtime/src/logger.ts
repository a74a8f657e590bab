import type { LogLevel } from '@spanforge/config';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Plain one-line logs to stderr (stdout is kept for the startup banner and CLI output). */
export class Logger {
  constructor(
    private readonly level: LogLevel,
    private readonly component = 'spanforge',
  ) {}

  child(component: string): Logger {
    return new Logger(this.level, component);
  }

  debug(message: string): void {
    this.write('debug', message);
  }

  info(message: string): void {
    this.write('info', message);
  }

  warn(message: string): void {
    this.write('warn', message);
  }

  error(message: string, error?: unknown): void {
    const detail = error instanceof Error ? `: ${error.stack ?? error.message}` : error === undefined ? '' : `: ${String(error)}`;
    this.write('error', `${message}${detail}`);
  }

  private write(level: LogLevel, message: string): void {
    if (ORDER[level] < ORDER[this.level]) return;
    process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} [${this.component}] ${message}\n`);
  }
}
