/**
 * The consumers' series of `GET /metrics`: what the results consumer did with each record, how far
 * behind it is and the state it is in, and, in the replicated mode, the same state series for the
 * requests consumer (a replica whose requests consumer stopped reading knows no test started on
 * another replica from then on, while it still answers reads and stays ready). Read from the
 * consumers when scraped.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ConsumerActivity, ConsumerState, DelayHistogram, ResultConsumer } from '../ingest/consumer.js';
import type { RequestConsumer } from '../ingest/request-consumer.js';

/** Every state a consumer reports, so the state gauge always has one series per state. */
const CONSUMER_STATES: ReadonlyArray<ConsumerState['state']> = ['idle', 'connecting', 'joined', 'stalled', 'rebalancing', 'crashed', 'stopped'];

/** What the state series of one consumer are read from. */
interface StateSource {
  state(): ConsumerState;
  activity(): ConsumerActivity;
}

/** The names of one consumer's state series, spelled out so that each can be found (and alerts checked: scripts/check-alert-rules.py). */
interface StateNames {
  readonly state: string;
  readonly changes: string;
  readonly sinceFetch: string;
}

/** The state gauge, the count of states entered and the seconds since a fetch, of one consumer (`who`: "The results consumer"). */
function registerStateMetrics(registry: Registry, names: StateNames, who: string, consumer: StateSource): void {
  new Gauge({
    name: names.state,
    help: `${who}'s state: 1 for the state it is in, 0 for the others (stalled: in its group, but no answer from the broker for a session timeout).`,
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const current = consumer.state().state;
      for (const state of CONSUMER_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  new Counter({
    name: names.changes,
    help: `Times ${who.toLowerCase()} entered each state: a rebalance counts once in rebalancing, each rejoin once in joined; stalled counts the consumers replaced after giving no sign of life past their limit.`,
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { entered } = consumer.activity();
      this.reset();
      for (const state of CONSUMER_STATES) this.inc({ state }, entered[state]);
    },
  });
  new Gauge({
    name: names.sinceFetch,
    help: `Seconds since a fetch of ${who.toLowerCase()} last succeeded (an empty one counts), or since it was created if none did yet.`,
    registers: [registry],
    collect() {
      this.set(consumer.activity().secondsSinceFetch);
    },
  });
}

/** The replicated mode's requests consumer: its state series and what it read. */
export function registerRequestConsumerMetrics(registry: Registry, requests: RequestConsumer): void {
  const names = {
    state: 'rcs_request_consumer_state',
    changes: 'rcs_request_consumer_state_changes_total',
    sinceFetch: 'rcs_request_consumer_seconds_since_fetch',
  };
  registerStateMetrics(registry, names, 'The requests consumer', requests);
  new Counter({
    name: 'rcs_request_records_total',
    help: 'Records read from the requests topic (each read counts: a new consumer reads the topic again from its start), by outcome: start_request (a start request, handed to the state, which skips one past the input limits) or malformed (not a start request: logged and skipped).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const { consumed, malformed } = requests.stats;
      this.reset();
      this.inc({ outcome: 'start_request' }, consumed - malformed);
      this.inc({ outcome: 'malformed' }, malformed);
    },
  });
}

/** What the consumer did with each record, how far behind it is, and whether it is in its group. */
export function registerConsumerMetrics(registry: Registry, consumer: ResultConsumer): void {
  const stats = () => consumer.stats;
  registerDelayHistogram(registry, consumer);
  new Counter({
    name: 'rcs_records_total',
    help: 'Result records consumed, by outcome: stored, duplicate (redelivery, not stored again), malformed, dead_lettered (malformed and copied to the dead-letter topic), oversized (malformed: headers or key over their bounds, refused before they were decoded), over_limit.',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const s = stats();
      this.reset();
      this.inc({ outcome: 'stored' }, s.stored);
      this.inc({ outcome: 'duplicate' }, s.duplicates);
      this.inc({ outcome: 'malformed' }, s.malformed);
      this.inc({ outcome: 'dead_lettered' }, s.deadLettered);
      this.inc({ outcome: 'over_limit' }, s.overLimit);
      this.inc({ outcome: 'oversized' }, s.oversized ?? 0);
    },
  });
  new Counter({
    name: 'rcs_records_consumed_total',
    help: 'Result records read from the results topic.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().consumed);
    },
  });
  new Gauge({
    name: 'rcs_consumer_lag',
    help: 'Records between the last processed offset and the end of the partition, as of the last fetched batch.',
    labelNames: ['topic', 'partition'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { topic, partition, lag } of consumer.lag()) this.set({ topic, partition }, lag);
    },
  });
  new Gauge({
    name: 'rcs_consumer_joined',
    help: '1 while the results consumer is a member of its group with an assignment, else 0.',
    registers: [registry],
    collect() {
      this.set(consumer.state().state === 'joined' ? 1 : 0);
    },
  });
  // Readiness of an API-serving process no longer follows the consumer: these are what operators
  // alert on instead (see deploy/prometheus/alerts.yaml).
  const names = { state: 'rcs_consumer_state', changes: 'rcs_consumer_state_changes_total', sinceFetch: 'rcs_consumer_seconds_since_fetch' };
  registerStateMetrics(registry, names, 'The results consumer', consumer);
}

/**
 * `rcs_ingest_delay_seconds{stage}`: the consumer's own bucket counts (ingest-delays.ts), written
 * out as a Prometheus histogram at scrape time, so the ingest path never calls into prom-client.
 */
function registerDelayHistogram(registry: Registry, consumer: ResultConsumer): void {
  const name = 'rcs_ingest_delay_seconds';
  const help =
    'Seconds from a result record\'s timestamp to when the consumer fetched it (stage="fetched") and stored it (stage="stored"); observed for the first record of each stored chunk.';
  const series = (stage: string, h: DelayHistogram) => {
    let cumulative = 0;
    const buckets = h.counts.map((count, i) => {
      cumulative += count;
      return { metricName: `${name}_bucket`, labels: { stage, le: i < h.bounds.length ? String(h.bounds[i]) : '+Inf' }, value: cumulative };
    });
    return [...buckets, { metricName: `${name}_sum`, labels: { stage }, value: h.sum }, { metricName: `${name}_count`, labels: { stage }, value: h.count }];
  };
  // prom-client takes any object with a name and a `get()`; its Histogram cannot be set from counts.
  registry.registerMetric({
    name,
    help,
    type: 'histogram',
    get: () =>
      Promise.resolve({
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: Object.entries(consumer.delays()).flatMap(([stage, h]) => series(stage, h)),
      }),
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}
