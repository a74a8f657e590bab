import { ConfigError, loadConfigFromEnvironment, portVariable, type AppConfig } from '@spanforge/config';
import { prepareProcess, type Mode, type ProcessContext } from './process';
import { StartRefused } from './start-refused';

/**
 * Boots one process: validate config, prepare the process (lock, credentials, secrets), install the
 * shutdown handlers, then `start` builds the role's Nest container and starts its servers (returning
 * the lines to print). A start that fails says why, closes what it opened, and exits 1.
 */
export function runRole(mode: Mode, start: (context: ProcessContext) => Promise<string[]>): void {
  const startedAt = performance.now();
  let config;
  try {
    config = loadConfigFromEnvironment();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
  void (async () => {
    let context: ProcessContext | undefined;
    try {
      context = await prepareProcess(config, mode);
      context.shutdown.installSignalHandlers();
      const lines = await start(context);
      printBanner(context, lines, (performance.now() - startedAt) / 1000);
    } catch (error) {
      process.stderr.write(`${startFailure(error, config.ports)}\n`);
      if (context?.credentials?.created)
        process.stderr.write(`The credentials made on this first start are in ${context.credentials.file}\n`);
      await context?.shutdown.run();
      process.exit(1);
    }
  })();
}

/** What a failed start prints: what to do for the failures an operator causes, the stack for the rest. */
export function startFailure(error: unknown, ports: AppConfig['ports']): string {
  if (error instanceof ConfigError || error instanceof StartRefused) return error.message;
  const { code, port } = (error ?? {}) as { code?: unknown; port?: unknown };
  if (code === 'EADDRINUSE' || code === 'EACCES') {
    const key = (Object.keys(ports) as Array<keyof AppConfig['ports']>).find((name) => ports[name] === port);
    const variable = key && portVariable(key);
    const which = variable ? `${variable}=${String(port)}` : `port ${String(port ?? '?')}`;
    const why = code === 'EADDRINUSE' ? 'is already in use by another process' : 'needs privileges this process does not have';
    return `failed to start: ${which} ${why}; stop what listens there, or set ${variable ?? 'the port'} to a free port`;
  }
  return `failed to start: ${(error as Error)?.stack ?? String(error)}`;
}

function printBanner(context: ProcessContext, lines: string[], seconds: number): void {
  const out: string[] = [];
  out.push(`spanforge ${context.mode} ready in ${seconds.toFixed(1)} s`);
  out.push(...lines.map((line) => `  ${line}`));
  const { postgres, clickhouse, queue } = context.services;
  if (postgres) out.push(`  PostgreSQL ${postgres}`);
  if (clickhouse) out.push(`  ClickHouse ${clickhouse}`);
  if (queue) out.push(`  Queue      ${queue}`);
  const credentials = context.credentials;
  if (credentials?.created && credentials.stored.development) {
    const otlpHttp = `http://localhost:${context.config.ports.otlpHttp}`;
    out.push('');
    out.push('First start: credentials (also kept in the file below):');
    out.push(`  ${credentials.file} (mode 0600)`);
    out.push('');
    out.push('Admin token (admin mutations on /graphql):');
    out.push(`ADMIN_TOKEN=${context.secrets.adminToken}`);
    out.push('');
    out.push('Development project "development/default" — paste into your application\'s environment:');
    out.push(`OTEL_EXPORTER_OTLP_ENDPOINT=${otlpHttp}`);
    out.push(`OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20${credentials.stored.development.apiKey}`);
  } else if (credentials) {
    out.push(`  Credentials: admin token and development API key are in ${credentials.file}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}
