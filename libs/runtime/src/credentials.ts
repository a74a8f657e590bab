import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Secrets the all-in-one server generates on first start, kept in DATA_DIR/credentials.json
 * (mode 0600). Environment variables, when set, win over what is stored.
 */
export interface StoredCredentials {
  adminToken: string;
  keyPepper: string;
  development?: { tenantId: string; projectId: string; apiKeyId: string; apiKey: string };
}

export class CredentialsFile {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = path.join(dataDir, 'credentials.json');
  }

  async read(): Promise<StoredCredentials | undefined> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as StoredCredentials;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new Error(`cannot read ${this.path}: ${(error as Error).message}`);
    }
  }

  /** Written to a temporary file and renamed, so a crash never leaves half a file. */
  async write(credentials: StoredCredentials): Promise<void> {
    await mkdir(path.dirname(this.path), { recursive: true });
    const temporary = `${this.path}.tmp`;
    await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.path);
  }

  /** Reads the stored credentials, creating them on first start. */
  async loadOrCreate(): Promise<{ credentials: StoredCredentials; created: boolean }> {
    const existing = await this.read();
    if (existing) return { credentials: existing, created: false };
    const credentials: StoredCredentials = {
      adminToken: `sfadm_${randomBytes(32).toString('base64url')}`,
      keyPepper: randomBytes(32).toString('base64url'),
    };
    await this.write(credentials);
    return { credentials, created: true };
  }
}
