export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; ms: number; error?: string }>;
}

/** `/readyz`: every dependency reachable, each check bounded so a hung dependency answers "not ready" fast. */
export class ReadinessProbe {
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(private readonly timeoutMs = 2_000) {}

  add(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async run(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        const started = performance.now();
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            check(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer in ${this.timeoutMs} ms`)), this.timeoutMs);
            }),
          ]);
          return [name, { ok: true, ms: Math.round(performance.now() - started) }] as const;
        } catch (error) {
          // The message names the failure without connection strings (drivers do not put passwords in them).
          return [name, { ok: false, ms: Math.round(performance.now() - started), error: (error as Error).message }] as const;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return { ready: entries.every(([, r]) => r.ok), checks: Object.fromEntries(entries) };
  }
}
