import { CREDIT_CARD_DETECTOR } from './credit-card.detector';

const MARKER = '[REDACTED:CREDIT_CARD]';

/** The payload followed by its Luhn check digit, computed here independently of the detector. */
function withCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let digit = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return `${payload}${(10 - (sum % 10)) % 10}`;
}

/** The same number with a wrong check digit. */
function breakCheckDigit(number: string): string {
  return `${number.slice(0, -1)}${(Number(number.slice(-1)) + 1) % 10}`;
}

const grouped = (digits: string, separator: string) => digits.replace(/(\d{4})(?=\d)/g, `$1${separator}`);

function redact(text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: CREDIT_CARD_DETECTOR.redact(text, tally), count: tally.redactions };
}

const CARDS: Array<[string, string]> = [
  ['Visa 16', withCheckDigit('411111111111111')],
  ['Visa 13', withCheckDigit('422222222222')],
  ['Visa 19', withCheckDigit('453201511283036')],
  ['Mastercard', withCheckDigit('555555555555444')],
  ['Mastercard 2-series', withCheckDigit('222300312200322')],
  ['American Express', withCheckDigit('37828224631000')],
  ['Discover', withCheckDigit('601111111111111')],
  ['JCB', withCheckDigit('353011133330000')],
  ['Diners Club', withCheckDigit('3056930902590')],
  ['UnionPay 19', withCheckDigit('621234567890123456')],
  ['Maestro', withCheckDigit('675964982643')],
];

describe('CREDIT_CARD detector', () => {
  it.each(CARDS)('replaces a %s number, plain, spaced and hyphenated', (_, number) => {
    for (const written of [number, grouped(number, ' '), grouped(number, '-')]) {
      expect(redact(`card ${written}, exp 12/29`)).toEqual({ text: `card ${MARKER}, exp 12/29`, count: 1 });
    }
  });

  it('finds the card in a run with a count before or after it', () => {
    const card = grouped(CARDS[0][1], ' ');
    expect(redact(`qty 2 ${card} thanks`)).toEqual({ text: `qty 2 ${MARKER} thanks`, count: 1 });
    expect(redact(`${card} 12 items`)).toEqual({ text: `${MARKER} 12 items`, count: 1 });
  });

  it('counts each card', () => {
    const text = CARDS.map(([, number]) => number).join('; ');
    expect(redact(text)).toEqual({ text: CARDS.map(() => MARKER).join('; '), count: CARDS.length });
  });

  it.each(CARDS)('leaves a %s number with a wrong check digit alone', (_, number) => {
    const text = `card ${grouped(breakCheckDigit(number), ' ')}`;
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it.each([
    ['an epoch timestamp in ms', withCheckDigit('173292480000')],
    ['an epoch timestamp in ns', withCheckDigit('173292480000000000')],
    ['a 12-digit number', '411111111111'],
    ['a 20-digit number', withCheckDigit('4111111111111111111')],
    ['digits inside a word', `id${CARDS[0][1]}x`],
    ['a decimal', `0.${CARDS[0][1]}`],
    ['a UUID whose last groups hold a valid number', `aaaaaaaa-bbbb-cccc-${CARDS[0][1].slice(0, 4)}-${CARDS[0][1].slice(4)}`],
    ['a number starting with 9', withCheckDigit('911111111111111')],
  ])('leaves %s alone', (_, text) => {
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it('stays linear on a long run of spaced digits', () => {
    const text = '1 '.repeat(300_000);
    const started = performance.now();
    redact(text);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
