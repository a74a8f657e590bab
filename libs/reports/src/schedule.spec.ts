import {
  DUE_WINDOWS_CAP,
  MIN_SCHEDULE_INTERVAL_MS,
  validateCronFrequency,
  canonicalTimezone,
  dueWindows,
  fireTimes,
  parseWindow,
  reportWindow,
  validateCron,
  validateTimezone,
  validateWindow,
} from './schedule';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The UTC instant of a local wall-clock time whose UTC offset (hours east) the test states. */
function localToUtc(date: string, time: string, utcOffsetHours: number): Date {
  return new Date(Date.parse(`${date}T${time}:00Z`) - utcOffsetHours * HOUR_MS);
}

/** An instant's wall-clock time in a zone, "YYYY-MM-DD HH:mm", read back through Intl (not cron-parser). */
function localTime(instant: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

describe('fireTimes', () => {
  it('fires 0 9 * * * at 09:00 Lisbon time each day across the March change from WET (+0) to WEST (+1)', () => {
    const fires = fireTimes('0 9 * * *', 'Europe/Lisbon', new Date('2025-03-28T00:00:00Z'), new Date('2025-04-01T00:00:00Z'));

    expect(fires).toEqual([
      localToUtc('2025-03-28', '09:00', 0),
      localToUtc('2025-03-29', '09:00', 0),
      localToUtc('2025-03-30', '09:00', 1),
      localToUtc('2025-03-31', '09:00', 1),
    ]);
    expect(fires.map((fire) => localTime(fire, 'Europe/Lisbon'))).toEqual([
      '2025-03-28 09:00',
      '2025-03-29 09:00',
      '2025-03-30 09:00',
      '2025-03-31 09:00',
    ]);
  });

  it('fires at 09:00 Lisbon time across the October change back to WET', () => {
    const fires = fireTimes('0 9 * * *', 'Europe/Lisbon', new Date('2025-10-25T00:00:00Z'), new Date('2025-10-27T23:00:00Z'));

    expect(fires).toEqual([
      localToUtc('2025-10-25', '09:00', 1),
      localToUtc('2025-10-26', '09:00', 0),
      localToUtc('2025-10-27', '09:00', 0),
    ]);
  });

  it('fires at 09:00 New York time across both 2025 changes (EST −5, EDT −4)', () => {
    const march = fireTimes('0 9 * * *', 'America/New_York', new Date('2025-03-08T00:00:00Z'), new Date('2025-03-10T23:00:00Z'));
    const november = fireTimes('0 9 * * *', 'America/New_York', new Date('2025-11-01T00:00:00Z'), new Date('2025-11-03T23:00:00Z'));

    expect(march).toEqual([
      localToUtc('2025-03-08', '09:00', -5),
      localToUtc('2025-03-09', '09:00', -4),
      localToUtc('2025-03-10', '09:00', -4),
    ]);
    expect(november).toEqual([
      localToUtc('2025-11-01', '09:00', -4),
      localToUtc('2025-11-02', '09:00', -5),
      localToUtc('2025-11-03', '09:00', -5),
    ]);
    // The UTC gap between the reports around each change is 23 h and 25 h: the local time is what is kept.
    expect(march[1].getTime() - march[0].getTime()).toBe(23 * HOUR_MS);
    expect(november[1].getTime() - november[0].getTime()).toBe(25 * HOUR_MS);
  });

  it('fires an hourly cron every elapsed hour, 25 times on the New York day that falls back', () => {
    const localMidnight = localToUtc('2025-11-02', '00:00', -4);
    const nextMidnight = localToUtc('2025-11-03', '00:00', -5);

    const fires = fireTimes('0 * * * *', 'America/New_York', new Date(localMidnight.getTime() - 1), new Date(nextMidnight.getTime() - 1));

    expect(fires).toHaveLength((nextMidnight.getTime() - localMidnight.getTime()) / HOUR_MS);
    expect(fires).toHaveLength(25);
    fires.forEach((fire, at) => expect(fire.getTime()).toBe(localMidnight.getTime() + at * HOUR_MS));
  });

  it('fires an hourly cron at minute 30 local in a half-hour zone (Asia/Kolkata, +5:30), i.e. on the UTC hour', () => {
    const fires = fireTimes('30 * * * *', 'Asia/Kolkata', new Date('2025-06-01T00:00:00Z'), new Date('2025-06-01T03:00:00Z'));

    expect(fires.map((fire) => fire.toISOString())).toEqual([
      '2025-06-01T01:00:00.000Z',
      '2025-06-01T02:00:00.000Z',
      '2025-06-01T03:00:00.000Z',
    ]);
  });

  it('moves a local time skipped by spring-forward past the gap, and fires a repeated local time once', () => {
    const skipped = fireTimes('30 2 * * *', 'America/New_York', new Date('2025-03-09T00:00:00Z'), new Date('2025-03-10T00:00:00Z'));
    const repeated = fireTimes('30 1 * * *', 'America/New_York', new Date('2025-11-02T00:00:00Z'), new Date('2025-11-03T00:00:00Z'));

    expect(skipped).toEqual([localToUtc('2025-03-09', '03:30', -4)]);
    expect(repeated).toEqual([localToUtc('2025-11-02', '01:30', -4)]);
  });

  it('excludes a fire exactly at the start, includes one exactly at the end, and stops at max', () => {
    const nine = new Date('2025-06-01T09:00:00Z');
    const nextNine = new Date(nine.getTime() + DAY_MS);

    expect(fireTimes('0 9 * * *', 'UTC', nine, nextNine)).toEqual([nextNine]);
    expect(fireTimes('0 9 * * *', 'UTC', new Date(nine.getTime() - 1), new Date(nine.getTime() - 1))).toEqual([]);
    expect(fireTimes('* * * * *', 'UTC', nine, nextNine, 5)).toHaveLength(5);
  });

  it('throws on a cron or time zone that would not validate', () => {
    const at = new Date('2025-06-01T00:00:00Z');
    expect(() => fireTimes('0 9 * *', 'UTC', at, at)).toThrow(RangeError);
    expect(() => fireTimes('0 9 * * *', 'Mars/Olympus', at, at)).toThrow(/timezone "Mars\/Olympus"/);
  });
});

describe('validateCron', () => {
  it.each(['0 9 * * *', '*/15 * * * *', '0 9 * * MON-FRI', '0 9 * * mon-thu', '0 9 1 * 1', '0 9 L * *', '0 0 29 2 *', ' 0  9 * * * '])(
    'accepts %p',
    (expr) => {
      expect(validateCron(expr)).toBeUndefined();
    },
  );

  it.each([
    ['', /empty; expected five fields/],
    ['0 9 * *', /has 4 fields; expected five fields "minute hour day-of-month month day-of-week"/],
    ['0 0 9 * * *', /has 6 fields \(a seconds field is not supported\)/],
    ['@daily', /has 1 field; expected/],
    ['H 9 * * *', /uses H \(hashed values\)/],
    ['0 9,H * * *', /uses H/],
    ['61 * * * *', /invalid: .*61.*0-59/],
    ['0 24 * * *', /invalid: .*0-23/],
    ['0 9 31 2 *', /invalid: .*day of month/],
    ['a b c d e', /invalid/],
    ['5-1 * * * *', /invalid: .*5-1/],
  ])('refuses %p', (expr, message) => {
    expect(validateCron(expr)).toMatch(message);
  });

  it('refuses an expression over 200 characters before parsing it', () => {
    expect(validateCron(`0 9 * * ${'1,'.repeat(100)}2`)).toBe('cron expression is longer than 200 characters');
  });
});

describe('validateTimezone', () => {
  it.each(['Europe/Lisbon', 'America/New_York', 'UTC', 'Asia/Kolkata', 'europe/lisbon'])('accepts %p', (tz) => {
    expect(validateTimezone(tz)).toBeUndefined();
  });

  it.each([
    [
      'Nope/Zone',
      'timezone "Nope/Zone" is not known; expected an IANA time zone name such as "Europe/Lisbon", "America/New_York" or "UTC"',
    ],
    ['', 'timezone is empty; expected an IANA time zone name such as "Europe/Lisbon", "America/New_York" or "UTC"'],
    [
      'America/New_York ',
      'timezone "America/New_York " is not known; expected an IANA time zone name such as "Europe/Lisbon", "America/New_York" or "UTC"',
    ],
    ['+01:00', expect.stringContaining('is a UTC offset')],
  ])('refuses %p', (tz, message) => {
    expect(validateTimezone(tz)).toEqual(message);
  });

  it('canonicalises the spelling for storage', () => {
    expect(canonicalTimezone('europe/lisbon')).toBe('Europe/Lisbon');
    expect(() => canonicalTimezone('Nope/Zone')).toThrow(RangeError);
  });
});

describe('parseWindow', () => {
  it.each([
    ['PT30M', 30 * 60_000],
    ['PT1H', HOUR_MS],
    ['P1D', DAY_MS],
    ['P7D', 7 * DAY_MS],
    ['P1W', 7 * DAY_MS],
    ['P1DT12H', 36 * HOUR_MS],
    ['PT90M', 90 * 60_000],
    ['pt1h', HOUR_MS],
    ['P93D', 93 * DAY_MS],
    ['PT1M', 60_000],
  ])('reads %p', (window, ms) => {
    expect(parseWindow(window)).toBe(ms);
    expect(validateWindow(window)).toBeUndefined();
  });

  it.each([
    ['P1M', 'window "P1M" uses years or months, which have no fixed length; use days or weeks, e.g. P30D'],
    ['P1Y', 'window "P1Y" uses years or months, which have no fixed length; use days or weeks, e.g. P30D'],
    ['P0D', 'window "P0D" is zero; a window must be at least PT1M'],
    ['PT0S', 'window "PT0S" is zero; a window must be at least PT1M'],
    ['-P1D', 'window "-P1D" is negative; a window is a positive duration such as P1D'],
    ['P94D', 'window "P94D" is longer than the maximum of 93 days (P93D)'],
    ['P14W', 'window "P14W" is longer than the maximum of 93 days (P93D)'],
    ['PT30S', 'window "PT30S" is shorter than the minimum of one minute (PT1M)'],
    ['PT1.5H', 'window "PT1.5H" has a fraction; use whole units, e.g. PT90M instead of PT1.5H'],
    ['1 day', 'window "1 day" is not an ISO-8601 duration such as PT30M, PT1H, P1D or P1W (weeks cannot be combined with other units)'],
    ['P', expect.stringContaining('is not an ISO-8601 duration')],
    ['P1DT', expect.stringContaining('is not an ISO-8601 duration')],
    ['P1W2D', expect.stringContaining('weeks cannot be combined')],
    ['', 'window is empty; expected an ISO-8601 duration such as PT30M, PT1H, P1D or P1W'],
  ])('refuses %p', (window, message) => {
    expect(validateWindow(window)).toEqual(message);
    expect(() => parseWindow(window)).toThrow(RangeError);
  });
});

describe('reportWindow', () => {
  it('is [fire − window, fire)', () => {
    const fire = new Date('2025-06-02T09:00:00Z');
    expect(reportWindow(fire, DAY_MS)).toEqual({ start: new Date('2025-06-01T09:00:00Z'), end: fire });
  });
});

describe('dueWindows', () => {
  const schedule = {
    cron: '0 9 * * *',
    timezone: 'Europe/Lisbon',
    windowMs: parseWindow('P1D'),
    createdAt: new Date('2025-05-01T12:00:00Z'),
  };
  // June: Lisbon is on WEST, UTC+1.
  const fireOn = (date: string) => localToUtc(date, '09:00', 1);

  it('returns the 3 windows missed during a 3-day downtime, oldest first', () => {
    const lastWindowEnd = fireOn('2025-06-01');
    const now = new Date(fireOn('2025-06-04').getTime() + 30 * 60_000);

    const due = dueWindows(schedule, lastWindowEnd, now);

    expect(due).toEqual(
      ['2025-06-02', '2025-06-03', '2025-06-04'].map((date) => ({ start: new Date(fireOn(date).getTime() - DAY_MS), end: fireOn(date) })),
    );
    expect(dueWindows(schedule, due[due.length - 1].end, now)).toEqual([]);
  });

  it('starts after createdAt before the first report, and includes a window ending exactly now', () => {
    const due = dueWindows(schedule, null, fireOn('2025-05-03'));
    expect(due.map((window) => window.end)).toEqual([fireOn('2025-05-02'), fireOn('2025-05-03')]);
  });

  it('produces every window once when a worker ticks irregularly through downtime and restarts', () => {
    const produced: Date[] = [];
    let lastWindowEnd: Date | null = null;
    // Ticks every 7 h for 2 days, a 3-day outage, then ticks again (a restart re-reads lastWindowEnd).
    const ticks = [0, 7, 14, 21, 28, 35, 42, 120, 121, 127].map((h) => new Date(schedule.createdAt.getTime() + h * HOUR_MS));
    for (const now of ticks) {
      for (const window of dueWindows(schedule, lastWindowEnd, now)) {
        produced.push(window.end);
        lastWindowEnd = window.end;
      }
    }

    const expected = fireTimes(schedule.cron, schedule.timezone, schedule.createdAt, ticks[ticks.length - 1]);
    expect(expected).toHaveLength(5);
    expect(produced).toEqual(expected);
  });

  it('catches up a long backlog in batches of at most DUE_WINDOWS_CAP, oldest first, skipping none', () => {
    const everyMinute = { ...schedule, cron: '* * * * *', windowMs: parseWindow('PT1M') };
    const downtimeMinutes = 3 * 24 * 60;
    const lastWindowEnd = new Date('2025-06-01T00:00:00Z');
    const now = new Date(lastWindowEnd.getTime() + downtimeMinutes * 60_000);

    const batches: number[] = [];
    const ends: number[] = [];
    let cursor: Date = lastWindowEnd;
    for (let batch = dueWindows(everyMinute, cursor, now); batch.length > 0; batch = dueWindows(everyMinute, cursor, now)) {
      batches.push(batch.length);
      ends.push(...batch.map((window) => window.end.getTime()));
      cursor = batch[batch.length - 1].end;
    }

    expect(Math.max(...batches)).toBe(DUE_WINDOWS_CAP);
    expect(batches).toHaveLength(Math.ceil(downtimeMinutes / DUE_WINDOWS_CAP));
    expect(ends).toEqual(Array.from({ length: downtimeMinutes }, (_, at) => lastWindowEnd.getTime() + (at + 1) * 60_000));
  });
});

describe('validateCronFrequency', () => {
  it.each(['0 9 * * *', '*/15 * * * *', '0,30 * * * *', '0 9 * * 1-5'])('accepts %s (at most every 15 minutes)', (cron) => {
    expect(validateCronFrequency(cron)).toBeUndefined();
  });

  it.each([
    ['* * * * *', 1],
    ['*/5 * * * *', 5],
    ['0,5 9 * * *', 5],
  ])('refuses %s, naming its shortest gap (%i minutes)', (cron, minutes) => {
    expect(validateCronFrequency(cron)).toBe(
      `cron expression "${cron}" fires every ${minutes} minute(s) at its most frequent; a report schedule may fire at most every ${MIN_SCHEDULE_INTERVAL_MS / 60_000} minutes`,
    );
  });
});
