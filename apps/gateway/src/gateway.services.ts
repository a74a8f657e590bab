import type { FeedbackService } from '@spanforge/feedback';
import type { ProcessContext } from '@spanforge/runtime';
import type { Authenticator } from '@spanforge/tenancy';

/** What the OTLP servers use besides the IngestService: the process's pieces, the key check, and feedback (Langfuse scores). */
export type GatewayServices = Pick<ProcessContext, 'config' | 'log' | 'shutdown' | 'readiness'> & {
  authenticator: Authenticator;
  feedback: FeedbackService;
};
