import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Logger } from '../logger';
import type { ProcessContext } from '../process';
import { ReadinessProbe } from '../readiness';
import { ShutdownSequence } from '../shutdown';
import { CONFIG, PROCESS } from './tokens';

/**
 * The process's own pieces (configuration, log, shutdown order, readiness, metrics), global so
 * every module can inject them. Built from the ProcessContext made before Nest starts.
 */
@Global()
@Module({})
export class ProcessModule {
  static forRoot(context: ProcessContext): DynamicModule {
    const providers = [
      { provide: PROCESS, useValue: context },
      { provide: CONFIG, useValue: context.config },
      { provide: Logger, useValue: context.log },
      { provide: ShutdownSequence, useValue: context.shutdown },
      { provide: ReadinessProbe, useValue: context.readiness },
      { provide: Registry, useValue: context.metrics },
    ];
    return { module: ProcessModule, providers, exports: providers.map((p) => p.provide) };
  }
}
