import { ConfigError } from '@spanforge/config';
import { startFailure } from './run-role';
import { StartRefused } from './start-refused';

const ports = { otlpHttp: 4318, otlpGrpc: 4317, api: 3000 };
const listenError = (code: string, port: number) =>
  Object.assign(new Error(`listen ${code}: address already in use 0.0.0.0:${port}`), { code, port });

describe('startFailure', () => {
  it('names the variable of a port that is taken, and what to do, without a stack', () => {
    const message = startFailure(listenError('EADDRINUSE', 4318), ports);
    expect(message).toBe(
      'failed to start: OTLP_HTTP_PORT=4318 is already in use by another process; stop what listens there, or set OTLP_HTTP_PORT to a free port',
    );
    expect(startFailure(listenError('EADDRINUSE', 3000), ports)).toMatch(/^failed to start: API_PORT=3000 is already in use/);
    expect(startFailure(listenError('EACCES', 4317), ports)).toMatch(/OTLP_GRPC_PORT=4317 needs privileges/);
  });

  it('prints refusals and configuration problems as they are, and the stack of anything else', () => {
    expect(startFailure(new StartRefused('DATA_DIR /x is in use by another spanforge process (pid 7): stop it first'), ports)).toBe(
      'DATA_DIR /x is in use by another spanforge process (pid 7): stop it first',
    );
    expect(startFailure(new ConfigError(['API_PORT must be a port']), ports)).toContain('API_PORT must be a port');
    const unexpected = new Error('boom');
    expect(startFailure(unexpected, ports)).toBe(`failed to start: ${unexpected.stack}`);
  });
});
