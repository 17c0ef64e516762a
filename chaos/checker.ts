/**
 * The checker over a chaos run's whole history: every result the external system had acknowledged
 * is stored exactly once, in order, for its test; every follower received every message of its
 * test exactly once and saw the final one; every started test's request reached the requests
 * topic, and no request did whose start was not answered (starts are retried by id until they
 * are); reads answered no 5xx (nor nothing at all) outside the nemesis's fault windows; and each
 * replica's memory has no upward trend (the slope of a least-squares line through its samples).
 */
import type { History } from './history.js';
import { readStored } from './stored-sequences.js';

/** After a fault is healed, how long its effects may still show (reconnects, a rejoin, a failover settling). */
export const FAULT_GRACE_MS = 15_000;

/** A process watched at least this long is held to {@link MAX_HEAP_SLOPE_MB_PER_HOUR}; a shorter one's slope is noise. */
export const TREND_MIN_MINUTES = 20;
/** The steepest rise of a replica's heap that is not taken for a leak, over at least {@link TREND_MIN_MINUTES}. */
export const MAX_HEAP_SLOPE_MB_PER_HOUR = 60;

/** One line of the verdict. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** The verdict and the figures of the report. */
export interface Verdict {
  readonly checks: readonly Check[];
  readonly figures: {
    readonly tests: number;
    readonly produced: number;
    readonly stored: number;
    readonly delivered: number;
    readonly lost: number;
    readonly duplicated: number;
    readonly errorsOutsideFaults: number;
    readonly errorsInFaults: number;
    /** Per replica, over its longest-lived process: the slopes, the samples and the minutes they span. */
    readonly slopes: ReadonlyArray<{
      readonly replica: string;
      readonly rssMbPerHour: number;
      readonly heapMbPerHour: number;
      readonly samples: number;
      readonly minutes: number;
    }>;
  };
}

/** Every stream and follower finished within the run's limit after the faults stopped (recovery, not a hang). */
export function settleCheck(history: History): Check {
  const settle = history.settle;
  const limit = `${((settle?.limitMs ?? 0) / 60_000).toFixed(0)} min`;
  return {
    name: 'every stream and follower finished after the faults stopped',
    ok: settle?.tookMs !== undefined,
    detail: settle?.tookMs === undefined ? `not within ${limit}` : `in ${(settle.tookMs / 1000).toFixed(1)} s (limit ${limit})`,
  };
}

/** Least-squares slope of `points` (x in ms, y in bytes), in MB an hour. */
export function slopeMbPerHour(points: ReadonlyArray<{ readonly x: number; readonly y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  return sxx === 0 ? 0 : ((sxy / sxx) * 3_600_000) / 1e6;
}

/** No replica's heap rises faster than {@link MAX_HEAP_SLOPE_MB_PER_HOUR} over a process watched {@link TREND_MIN_MINUTES} or more. */
export function heapTrendCheck(slopes: Verdict['figures']['slopes']): Check {
  return {
    name: 'no upward trend of any replica heap',
    ok: slopes.every((s) => s.minutes < TREND_MIN_MINUTES || s.heapMbPerHour <= MAX_HEAP_SLOPE_MB_PER_HOUR),
    detail: `${slopes.map((s) => `${s.replica} ${s.heapMbPerHour.toFixed(1)} MB/h over ${s.minutes.toFixed(0)} min`).join(', ')} (held to ${MAX_HEAP_SLOPE_MB_PER_HOUR} MB/h when watched ${TREND_MIN_MINUTES} min or more)`,
  };
}

/** Whether `at` falls in a fault's window (until its grace after healing). */
export function inFault(history: History, at: number): boolean {
  return history.faults.some((f) => at >= f.start && at <= (f.end ?? Number.POSITIVE_INFINITY) + FAULT_GRACE_MS);
}

/** Checks the history against the service's state, read through `url`. */
export async function check(history: History, url: string): Promise<Verdict> {
  return judge(history, await readStored(url, [...history.acked.keys()]));
}

/** Per test, the sequences the service listed for it (undefined: it could not be read). */
export type Stored = ReadonlyMap<string, readonly number[] | undefined>;

/**
 * The verdict on a history, given what the service stored: pure, so that each check is proven to
 * fail on the defect it is there to find.
 */
export function judge(history: History, stored: Stored): Verdict {
  const store = storeFigures(history, stored);
  const followers = followerFigures(history);
  const failedReads = history.reads.filter((r) => r.status === 0 || r.status >= 500);
  const outside = failedReads.filter((r) => !inFault(history, r.at));
  const slopes = memorySlopes(history);
  const checks: Check[] = [
    ...storeChecks(store),
    {
      name: 'every follower got every message once and the final one',
      ok: followers.incomplete.length === 0 && followers.duplicates === 0,
      detail: `${history.followers.size} followers, ${followers.delivered} messages handed over, ${followers.duplicates} twice${followers.incomplete.length ? `; incomplete: ${followers.incomplete.slice(0, 5).join('; ')}` : ''}`,
    },
    ...requestChecks(history),
    {
      name: 'no failed read outside the fault windows',
      ok: outside.length === 0,
      detail: `${failedReads.length} failed reads of ${history.reads.length}, ${outside.length} outside the windows`,
    },
    settleCheck(history),
    {
      name: 'every replica asked to stop exited within its shutdown timeout',
      ok: history.wedged.length === 0,
      detail: history.wedged.length === 0 ? 'none killed after SIGTERM' : `killed 30 s after SIGTERM: ${history.wedged.map((w) => w.replica).join(', ')}`,
    },
    heapTrendCheck(slopes),
  ];
  return {
    checks,
    figures: {
      tests: history.started.size,
      produced: store.produced,
      stored: store.stored,
      delivered: followers.delivered,
      lost: store.lost,
      duplicated: store.duplicated + followers.duplicates,
      errorsOutsideFaults: outside.length,
      errorsInFaults: failedReads.length - outside.length,
      slopes,
    },
  };
}

interface StoreFigures {
  produced: number;
  stored: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  readonly unreadable: string[];
}

/** Acknowledged against stored, per test: what is missing, what is there twice, what is out of order. */
function storeFigures(history: History, read: Stored): StoreFigures {
  const figures: StoreFigures = { produced: 0, stored: 0, lost: 0, duplicated: 0, outOfOrder: 0, unreadable: [] };
  for (const [id, acked] of history.acked) {
    figures.produced += acked.sequences.size;
    const sequences = read.get(id);
    if (sequences === undefined) {
      figures.unreadable.push(id);
      figures.lost += acked.sequences.size;
      continue;
    }
    figures.stored += sequences.length;
    const held = new Set(sequences);
    figures.duplicated += sequences.length - held.size;
    for (const sequence of acked.sequences) if (!held.has(sequence)) figures.lost += 1;
    if (sequences.some((s, i) => i > 0 && s < (sequences[i - 1] as number))) figures.outOfOrder += 1;
  }
  return figures;
}

function storeChecks(store: StoreFigures): Check[] {
  return [
    {
      name: 'every acknowledged result stored',
      ok: store.lost === 0,
      detail: `${store.produced} acknowledged, ${store.lost} not stored${store.unreadable.length ? `; unreadable tests: ${store.unreadable.join(', ')}` : ''}`,
    },
    { name: 'each stored once', ok: store.duplicated === 0, detail: `${store.duplicated} duplicates among ${store.stored} stored` },
    { name: 'stored in order', ok: store.outOfOrder === 0, detail: `${store.outOfOrder} tests listed out of sequence order` },
  ];
}

/** What the followers were handed against what was acknowledged: each message once, the stream completed. */
function followerFigures(history: History): { delivered: number; duplicates: number; incomplete: string[] } {
  let delivered = 0;
  let duplicates = 0;
  const incomplete: string[] = [];
  for (const [id, follower] of history.followers) {
    delivered += follower.sequences.length;
    duplicates += follower.ids.length - new Set(follower.ids).size;
    const acked = history.acked.get(id);
    const got = new Set(follower.sequences);
    const missing = acked === undefined ? 0 : [...acked.sequences].filter((s) => !got.has(s)).length;
    if (follower.end?.status !== 'completed' || missing > 0)
      incomplete.push(`${id} (${follower.transport}: ${follower.end?.status ?? 'still following'}, ${missing} missing)`);
  }
  return { delivered, duplicates, incomplete };
}

/** Every started test's request on the topic, and no request of a start that was never answered. */
function requestChecks(history: History): Check[] {
  const neverRequested = [...history.started.keys()].filter((id) => !history.requestsSeen.has(id));
  // A start whose answer was lost may have gone out; retried with its id until answered, it is then a started test.
  const strays = [...history.requestsSeen].filter((id) => !history.started.has(id));
  return [
    {
      name: "every started test's request reached the requests topic",
      ok: neverRequested.length === 0,
      detail: `${history.started.size} started, ${neverRequested.length} never read from the topic`,
    },
    {
      name: 'no request without its test: every request read is of a start the client was answered',
      ok: strays.length === 0,
      detail: `${strays.length} requests read whose start was never answered 202; ${history.abandoned.size} starts given up after two minutes of retries`,
    },
  ];
}

/** Per replica, the RSS and heap slopes over its longest-lived process (a restarted replica starts afresh). */
function memorySlopes(history: History): Verdict['figures']['slopes'] {
  const replicas = [...new Set(history.memory.map((m) => m.replica))];
  return replicas.map((replica) => {
    const byProcess = new Map<number, Array<History['memory'][number]>>();
    for (const m of history.memory) {
      if (m.replica !== replica || !Number.isFinite(m.rss)) continue;
      const samples = byProcess.get(m.pid);
      if (samples) samples.push(m);
      else byProcess.set(m.pid, [m]);
    }
    const span = (list: ReadonlyArray<{ readonly at: number }>) => (list.at(-1)?.at ?? 0) - (list[0]?.at ?? 0);
    const samples = [...byProcess.values()].sort((a, b) => span(b) - span(a))[0] ?? [];
    return {
      replica,
      samples: samples.length,
      minutes: span(samples) / 60_000,
      rssMbPerHour: slopeMbPerHour(samples.map((m) => ({ x: m.at, y: m.rss }))),
      heapMbPerHour: slopeMbPerHour(samples.map((m) => ({ x: m.at, y: m.heap }))),
    };
  });
}
