import { API_KEY_DETECTOR } from './api-key.detector';
import { CREDIT_CARD_DETECTOR } from './credit-card.detector';
import { DETECTORS, type Detector } from './data-policy.model';
import { EMAIL_DETECTOR } from './email.detector';
import { IP_ADDRESS_DETECTOR } from './ip-address.detector';
import { JWT_DETECTOR } from './jwt.detector';
import { PHONE_DETECTOR } from './phone.detector';
import type { TextDetector } from './redaction';

/**
 * The built-in detectors by name. They run in DETECTORS order, most specific first: a JWT or an
 * API key may contain digit runs or an '@' that a later detector would take for something else,
 * and what one detector replaced is no longer there for the next.
 */
const BY_NAME: Readonly<Record<Detector, TextDetector>> = {
  JWT: JWT_DETECTOR,
  API_KEY: API_KEY_DETECTOR,
  EMAIL: EMAIL_DETECTOR,
  CREDIT_CARD: CREDIT_CARD_DETECTOR,
  IP_ADDRESS: IP_ADDRESS_DETECTOR,
  PHONE: PHONE_DETECTOR,
};

/** The chosen detectors in their running order. */
export function detectorsFor(chosen: readonly Detector[]): TextDetector[] {
  const selected = new Set(chosen);
  return DETECTORS.filter((name) => selected.has(name)).map((name) => BY_NAME[name]);
}
