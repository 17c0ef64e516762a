/**
 * How long records take to reach the consumer and the state, for the per-stage latency breakdown
 * (`rcs_ingest_delay_seconds`): from a record's timestamp (its producer's clock, or the broker's
 * where the topic uses `LogAppendTime`) to when the consumer fetched it, and to when it was stored.
 * Observed once per stored chunk, for its first and so oldest record, so the cost is a few
 * additions per chunk (`CHUNK`, 2,000 records) and the figures lean to the slow side. Plain bucket counts, read at
 * scrape time like the consumer's other counters.
 */
import type { DelayHistogram, IngestStage } from './consumer.js';

/** Bucket upper bounds in seconds: fine below 50 ms, where the end-to-end target lies. */
export const DELAY_BOUNDS: readonly number[] = [
  0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** The delays of one consumer. */
export interface IngestDelays {
  /** Counts one delay of `stage`; a negative one (clocks apart) counts as zero. */
  observe(stage: IngestStage, seconds: number): void;
  /** The histograms so far. */
  snapshot(): Readonly<Record<IngestStage, DelayHistogram>>;
}

/** Creates empty delay histograms. */
export function createIngestDelays(): IngestDelays {
  const empty = () => ({ bounds: DELAY_BOUNDS, counts: new Array<number>(DELAY_BOUNDS.length + 1).fill(0), sum: 0, count: 0 });
  const histograms: Record<IngestStage, { bounds: readonly number[]; counts: number[]; sum: number; count: number }> = { fetched: empty(), stored: empty() };
  return {
    observe(stage, seconds) {
      const h = histograms[stage];
      const value = Math.max(0, seconds);
      let i = 0;
      while (i < DELAY_BOUNDS.length && value > (DELAY_BOUNDS[i] as number)) i++;
      h.counts[i] = (h.counts[i] as number) + 1;
      h.sum += value;
      h.count += 1;
    },
    snapshot: () => histograms,
  };
}
