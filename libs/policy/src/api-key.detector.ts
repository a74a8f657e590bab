import { markerOf, type Tally, type TextDetector } from './redaction';

const MARKER = markerOf('API_KEY');

/**
 * Provider key formats: a literal prefix and a bounded run of the characters the provider uses
 * (1000 is far above any issued key; a longer run is redacted up to there). Sticky: each is tried
 * only where a scan found its prefix.
 */
const SHAPES = {
  // OpenAI (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…) and Anthropic (sk-ant-api03-…): one shape.
  openAi: /sk-[\w-]{32,1000}/y,
  // Stripe secret and restricted keys, live and test.
  stripe: /[sr]k_(?:live|test)_[A-Za-z0-9]{10,1000}/y,
  // GitHub classic tokens: personal, OAuth, user-to-server, server-to-server, refresh.
  github: /gh[pousr]_[A-Za-z0-9]{30,1000}/y,
  // GitHub fine-grained personal access tokens.
  githubPat: /github_pat_\w{22,1000}/y,
  // Slack bot, app, user, refresh and legacy tokens.
  slack: /xox[abprs]-[A-Za-z0-9-]{10,1000}/y,
  // AWS access key ids, long-term (AKIA) and temporary (ASIA): exactly 20 characters, so the key
  // must end there (ASIAPACIFIC2024REGIONS is no key).
  aws: /(?:AKIA|ASIA)[A-Z0-9]{16}(?![\w-])/y,
  // Google API keys: exactly 39 characters.
  google: /AIza[\w-]{35}(?![\w-])/y,
} as const;

interface Candidate {
  start: number;
  shape: RegExp;
}

/** A key does not continue a word or a hyphenated token. */
function startsToken(text: string, start: number): boolean {
  if (start === 0) return true;
  const code = text.charCodeAt(start - 1);
  const word = (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
  return !word && code !== 0x2d;
}

function oneOf(text: string, at: number, letters: string): boolean {
  return at >= 0 && letters.includes(text.charAt(at));
}

/**
 * Where a key may start. Every prefix but AWS's and Google's has a '-' or '_' in it, a character
 * prose has few of, so the scan looks for those (single-character searches are the fast ones) and
 * checks the letters before; AKIA, ASIA and AIza are searched as they are (capital A is rare).
 */
function candidates(text: string): Candidate[] {
  const found: Candidate[] = [];
  for (let at = text.indexOf('-'); at >= 0; at = text.indexOf('-', at + 1)) {
    if (at >= 2 && text.startsWith('sk', at - 2)) found.push({ start: at - 2, shape: SHAPES.openAi });
    else if (at >= 4 && text.startsWith('xox', at - 4) && oneOf(text, at - 1, 'abprs')) found.push({ start: at - 4, shape: SHAPES.slack });
  }
  for (let at = text.indexOf('_'); at >= 0; at = text.indexOf('_', at + 1)) {
    if (at >= 2 && (text.startsWith('sk', at - 2) || text.startsWith('rk', at - 2))) found.push({ start: at - 2, shape: SHAPES.stripe });
    else if (at >= 3 && text.startsWith('gh', at - 3) && oneOf(text, at - 1, 'pousr')) found.push({ start: at - 3, shape: SHAPES.github });
    else if (at >= 6 && text.startsWith('github', at - 6)) found.push({ start: at - 6, shape: SHAPES.githubPat });
  }
  for (const [prefix, shape] of [
    ['AKIA', SHAPES.aws],
    ['ASIA', SHAPES.aws],
    ['AIza', SHAPES.google],
  ] as const) {
    for (let at = text.indexOf(prefix); at >= 0; at = text.indexOf(prefix, at + 1)) found.push({ start: at, shape });
  }
  return found.length > 1 ? found.sort((a, b) => a.start - b.start) : found;
}

/**
 * The `sk-` shape is generic enough to meet hyphenated words (`sk-learn-model-selection-…`): a
 * real key is random base62, so it mixes at least two of digits, capitals and small letters
 * (a 32-character random key uses only one class with probability below 10^-11).
 */
function looksRandom(key: string): boolean {
  let digit = 0;
  let upper = 0;
  let lower = 0;
  for (let i = 3; i < key.length && digit + upper + lower < 2; i++) {
    const code = key.charCodeAt(i);
    if (code >= 0x30 && code <= 0x39) digit = 1;
    else if (code >= 0x41 && code <= 0x5a) upper = 1;
    else if (code >= 0x61 && code <= 0x7a) lower = 1;
  }
  return digit + upper + lower >= 2;
}

/** The end of the key at `candidate`, or -1. */
function keyEnd(text: string, { start, shape }: Candidate): number {
  if (!startsToken(text, start)) return -1;
  shape.lastIndex = start;
  const match = shape.exec(text);
  if (match === null || (shape === SHAPES.openAi && !looksRandom(match[0]))) return -1;
  return start + match[0].length;
}

/**
 * API_KEY: OpenAI and Anthropic (`sk-…`), AWS access key ids (`AKIA…`, `ASIA…`), GitHub
 * (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), Google (`AIza…`), Stripe (`sk_live_`,
 * `rk_live_`, `sk_test_`, `rk_test_`) and Slack (`xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-`). Not
 * matched: AWS secret access keys and other formats without a prefix (use a pattern), Stripe
 * publishable keys (`pk_…`, public by design).
 */
export const API_KEY_DETECTOR: TextDetector = {
  name: 'API_KEY',
  needsNumberRun: false,
  minLength: 15, // xoxb- and 10 characters
  redact(text: string, tally: Tally): string {
    const found = candidates(text);
    if (found.length === 0) return text;
    let out = '';
    let copied = 0;
    for (const candidate of found) {
      if (candidate.start < copied) continue; // inside a key already replaced
      const end = keyEnd(text, candidate);
      if (end < 0) continue;
      out += text.slice(copied, candidate.start) + MARKER;
      copied = end;
      tally.redactions++;
    }
    return copied === 0 ? text : out + text.slice(copied);
  },
};
