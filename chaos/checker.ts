/**
 * The checker over a chaos run's whole history: every result the external system had acknowledged
 * is stored exactly once, in order, for its test; every follower received every message of its
 * test exactly once and saw the final one; every started test's request reached the requests
 * topic, and no request did whose start was not answered (starts are retried by id until they
 * are); reads answered no 5xx (nor nothing at all) outside the nemesis's fault windows; and each
 * replica's memory has no upward trend (the slope of a least-squares line through its samples).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../test/support/tokens.js';
import type { History } from './history.js';

/** After a fault is healed, how long its effects may still show (reconnects, a rejoin, a failover settling). */
export const FAULT_GRACE_MS = 15_000;

/** How long the checker waits for one read of the store. */
const READ_TIMEOUT_MS = 10_000;
/** Reads of the store the checker has in flight at once. */
const READS_AT_ONCE = 8;

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

/**
 * The messages stored for a test, read through the load balancer (pages of 100) with the admin
 * scope: a test whose start the client was refused (a publish that timed out but landed, its record
 * removed) still gets its results stored, and only an admin sees a test with no owner.
 */
async function storedSequences(url: string, id: string): Promise<number[] | undefined> {
  const authorization = `Bearer ${await mintToken({ sub: 'chaos-checker', scope: 'tests:read tests:admin' })}`;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    // A read that hangs must not hold the run: it is tried again, then the test counts as unreadable.
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query Stored($id: ID!) { test(correlationId: $id) { messages(first: 100) { edges { node { sequence } } } } }',
      variables: { id },
    }),
  });
  const body = (await response.json()) as { data?: { test: { messages: { edges: Array<{ node: { sequence: number } }> } } | null } };
  return body.data?.test?.messages.edges.map((edge) => edge.node.sequence);
}

/** {@link storedSequences} tried up to three times, a second apart; undefined when every try failed. */
async function storedSequencesRetried(url: string, id: string): Promise<number[] | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await storedSequences(url, id);
    } catch {
      if (attempt === 3) return undefined;
      await sleep(1_000);
    }
  }
}

/** Reads the tests `ids` hold, {@link READS_AT_ONCE} at a time (an hour's thousands of tests, each read through the load balancer). */
async function readAll(url: string, ids: readonly string[]): Promise<Map<string, number[] | undefined>> {
  const read = new Map<string, number[] | undefined>();
  let next = 0;
  const reader = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      read.set(id, await storedSequencesRetried(url, id));
    }
  };
  await Promise.all(Array.from({ length: READS_AT_ONCE }, reader));
  return read;
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
  let produced = 0;
  let stored = 0;
  let lost = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  const unreadable: string[] = [];
  const read = await readAll(url, [...history.acked.keys()]);
  for (const [id, acked] of history.acked) {
    produced += acked.sequences.size;
    const sequences = read.get(id);
    if (sequences === undefined) {
      unreadable.push(id);
      lost += acked.sequences.size;
      continue;
    }
    stored += sequences.length;
    const held = new Set(sequences);
    duplicated += sequences.length - held.size;
    for (const sequence of acked.sequences) if (!held.has(sequence)) lost += 1;
    if (sequences.some((s, i) => i > 0 && s < (sequences[i - 1] as number))) outOfOrder += 1;
  }

  let delivered = 0;
  let followerDuplicates = 0;
  const incomplete: string[] = [];
  for (const [id, follower] of history.followers) {
    delivered += follower.sequences.length;
    followerDuplicates += follower.ids.length - new Set(follower.ids).size;
    const acked = history.acked.get(id);
    const got = new Set(follower.sequences);
    const missing = acked === undefined ? 0 : [...acked.sequences].filter((s) => !got.has(s)).length;
    if (follower.end?.status !== 'completed' || missing > 0)
      incomplete.push(`${id} (${follower.transport}: ${follower.end?.status ?? 'still following'}, ${missing} missing)`);
  }

  const neverRequested = [...history.started.keys()].filter((id) => !history.requestsSeen.has(id));
  // A start whose answer was lost may have gone out; retried with its id until answered, it is then a started test.
  const strays = [...history.requestsSeen].filter((id) => !history.started.has(id));
  const failedReads = history.reads.filter((r) => r.status === 0 || r.status >= 500);
  const outside = failedReads.filter((r) => !inFault(history, r.at));
  const replicas = [...new Set(history.memory.map((m) => m.replica))];
  const slopes = replicas.map((replica) => {
    const byProcess = new Map<number, Array<History['memory'][number]>>();
    for (const m of history.memory) if (m.replica === replica && Number.isFinite(m.rss)) byProcess.set(m.pid, [...(byProcess.get(m.pid) ?? []), m]);
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

  const checks: Check[] = [
    {
      name: 'every acknowledged result stored',
      ok: lost === 0,
      detail: `${produced} acknowledged, ${lost} not stored${unreadable.length ? `; unreadable tests: ${unreadable.join(', ')}` : ''}`,
    },
    { name: 'each stored once', ok: duplicated === 0, detail: `${duplicated} duplicates among ${stored} stored` },
    { name: 'stored in order', ok: outOfOrder === 0, detail: `${outOfOrder} tests listed out of sequence order` },
    {
      name: 'every follower got every message once and the final one',
      ok: incomplete.length === 0 && followerDuplicates === 0,
      detail: `${history.followers.size} followers, ${delivered} messages handed over, ${followerDuplicates} twice${incomplete.length ? `; incomplete: ${incomplete.slice(0, 5).join('; ')}` : ''}`,
    },
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
      produced,
      stored,
      delivered,
      lost,
      duplicated: duplicated + followerDuplicates,
      errorsOutsideFaults: outside.length,
      errorsInFaults: failedReads.length - outside.length,
      slopes,
    },
  };
}
