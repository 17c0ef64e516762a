/**
 * Arrivals per second, for the detail view's chart: how many of a test's messages the service
 * stored in each second, from the messages' `receivedAt`. A pure function, tested on its own.
 */

/** One second of the chart: its start (epoch milliseconds) and how many messages arrived in it. */
export interface SecondCount {
  readonly second: number;
  readonly count: number;
}

/**
 * One entry per second from the first arrival's second to the last one's, quiet seconds
 * included as zero (a gap in the arrivals is what the chart is there to show), oldest first.
 * Only the last `maxSeconds` are kept, so a long test stays readable: the latest arrivals are
 * the ones being watched. Unparseable times are left out rather than put at 1970.
 */
export function arrivalsPerSecond(receivedAt: readonly string[], maxSeconds = 60): SecondCount[] {
  const counts = new Map<number, number>();
  for (const time of receivedAt) {
    const ms = Date.parse(time);
    if (Number.isNaN(ms)) continue;
    const second = Math.floor(ms / 1000) * 1000;
    counts.set(second, (counts.get(second) ?? 0) + 1);
  }
  if (counts.size === 0) return [];
  const last = Math.max(...counts.keys());
  const first = Math.max(Math.min(...counts.keys()), last - (maxSeconds - 1) * 1000);
  const seconds: SecondCount[] = [];
  for (let second = first; second <= last; second += 1000) seconds.push({ second, count: counts.get(second) ?? 0 });
  return seconds;
}
