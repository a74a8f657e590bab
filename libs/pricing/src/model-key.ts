/*
 * Model strings reach us in many spellings of one model: 'openai/gpt-4o', 'GPT-4o-2024-08-06',
 * 'us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet-v2@20241022',
 * 'claude-3.5-sonnet'. A model key is the one spelling the table is indexed by; table rows and span
 * strings go through the same modelKey() so both sides agree.
 */

// Routing prefixes the normaliser usually strips already ('openai/', 'openrouter/x/', 'models/');
// doing it again is cheap and keeps the table correct when a caller passes the raw model.
const PATH_PREFIX = /^.*\//;

// Bedrock model ids and inference profiles: optional region ('us.', 'eu.', 'global.') then vendor.
const BEDROCK_PREFIX =
  /^(?:(?:us|eu|apac|ap|jp|au|ca|us-gov|global)\.)?(?:anthropic|meta|mistral|amazon|cohere|ai21|deepseek|openai|qwen|writer)\./;

/** Lowercase, without routing or Bedrock prefixes, '.' spelled '-' ('claude-3.5-sonnet' = 'claude-3-5-sonnet'). */
export function modelKey(model: string): string {
  return model.trim().toLowerCase().replace(PATH_PREFIX, '').replace(BEDROCK_PREFIX, '').replaceAll('.', '-');
}

/*
 * Snapshot suffixes, tried at the end of a key until none applies. Each names a published pattern;
 * the digit counts are exact so that version numbers ('claude-sonnet-4-5', 'gpt-4-1') never look
 * like dates.
 */
const SNAPSHOT_SUFFIXES: readonly RegExp[] = [
  /(?:-v\d+)?@[^@]*$/, // Vertex AI: 'claude-3-5-sonnet-v2@20241022', 'claude-sonnet-4@20250514'
  /(?:-v\d+)?:\d+$/, // Bedrock: '-v1:0', '-v2:0'
  /-\d{4}-\d{2}-\d{2}$/, // OpenAI: '-2024-08-06'
  /-20\d{6}$/, // Anthropic: '-20241022'
  /-(?:0[1-9]|1[0-2])-20\d{2}$/, // Google month-year previews: '-09-2025'
  /-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/, // Google month-day previews: '-05-20'
  /-\d{4}$/, // MMDD or YYMM: 'gpt-4-0613', 'mistral-large-2411', 'grok-2-1212'
  /-00\d$/, // Google stable revisions: '-001', '-002'
  /-latest$/,
];

/** The key without its snapshot suffixes; the key itself when it has none. */
export function snapshotBase(key: string): string {
  let base = key;
  for (let changed = true; changed;) {
    changed = false;
    for (const suffix of SNAPSHOT_SUFFIXES) {
      const stripped = base.replace(suffix, '');
      if (stripped !== base && stripped.length > 0) {
        base = stripped;
        changed = true;
      }
    }
  }
  return base;
}

const BOUNDARY = /[-:@]/;

/**
 * Prefixes of the key that end on a '-', ':' or '@' boundary, longest first, so the first known one
 * is the most specific ('gpt-4o-mini-search' finds 'gpt-4o-mini' before 'gpt-4o').
 */
export function* boundaryPrefixes(key: string): Generator<string> {
  for (let i = key.length - 1; i > 0; i--) {
    if (BOUNDARY.test(key[i])) yield key.slice(0, i);
  }
}
