import { PHONE_DETECTOR } from './phone.detector';

const MARKER = '[REDACTED:PHONE]';

function redact(text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: PHONE_DETECTOR.redact(text, tally), count: tally.redactions };
}

describe('PHONE detector', () => {
  it.each([
    ['+14155552671'],
    ['+1 (415) 555-2671'],
    ['+1-415-555-2671'],
    ['+44 20 7946 0958'],
    ['+44 (0)20 7946 0958'],
    ['+49 30 12345678'],
    ['+33 1 23 45 67 89'],
    ['+81 3-1234-5678'],
    ['(415) 555-2671'],
    ['(415)555-2671'],
    ['415-555-2671'],
    ['415.555.2671'],
    ['415 555 2671'],
    ['1-800-555-0199'],
    ['555-123-4567'],
    ['020 7946 0958'],
    ['07700 900123'],
    ['030 12345678'],
    ['01 23 45 67 89'],
    ['(030) 1234567'],
  ])('replaces %s', (number) => {
    expect(redact(`call ${number} today`)).toEqual({ text: `call ${MARKER} today`, count: 1 });
    expect(redact(`{"phone":"${number}"}`)).toEqual({ text: `{"phone":"${MARKER}"}`, count: 1 });
  });

  it('counts each number', () => {
    expect(redact('+14155552671 or (415) 555-2671 or 020 7946 0958')).toEqual({
      text: `${MARKER} or ${MARKER} or ${MARKER}`,
      count: 3,
    });
  });

  it.each([
    ['a bare ten-digit number', 'id 4155552671'],
    ['an epoch timestamp in ms', 'at 1732924800000'],
    ['an epoch timestamp in ns', 'at 1732924800000000000'],
    ['an order number', 'order 12345678901'],
    ['an ISO date', 'on 2024-05-01'],
    ['a European date', 'on 01.05.2024'],
    ['a date and time', '2024-05-01 10:30:00'],
    ['a clock time', '10:30:00'],
    ['an IPv4 address', '192.168.1.1'],
    ['a version', 'version 1.2.3.4.5'],
    ['a semantic version', '2.10.0'],
    ['a UUID', '123e4567-e89b-12d3-a456-426614174000'],
    ['an amount', '$1,234,567.89'],
    ['a decimal', '3.14159265358979'],
    ['a number in a word', 'build4155552671x'],
    ['a trunk-0 number too short', '01 23 45'],
    ['a plus before too few digits', '+1 234'],
    ['a sum', '2+2 = 4'],
  ])('leaves %s alone', (_, text) => {
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it('stays linear on long runs of digits and separators', () => {
    const text = `${'+1 '.repeat(100_000)}${'0 1-'.repeat(100_000)}`;
    const started = performance.now();
    redact(text);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
