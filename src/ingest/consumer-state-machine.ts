/**
 * The results consumer's state as readiness and metrics see it, kept apart from the loop that
 * drives it: which state it is in and why, whether "joined" still holds (a member that has heard
 * nothing from the broker for a session timeout is stalled, whatever kafkajs last said), and how
 * long to wait before a consumer that died is replaced. No broker client here: the loop reports
 * what happened, and the rules are unit-tested with a clock.
 */
import type { ConsumerActivity, ConsumerState } from './consumer.js';

/** What holds the consumer back while it lasts (a batch that cannot be decompressed). */
export interface ConsumerFault {
  readonly reason: string;
  readonly since: number;
}

/** Options of {@link createConsumerStateMachine}. */
export interface ConsumerStateMachineOptions {
  /** How long the broker may stay silent before a joined member counts as stalled. */
  readonly sessionTimeoutMs: number;
  /** The current fault, if any: readiness reports it as `crashed` while it lasts. */
  readonly fault: () => ConsumerFault | undefined;
  /** Injected for tests; defaults to `Date.now`. */
  readonly now?: () => number;
}

/** The consumer's state, fed by the loop's events. */
export interface ConsumerStateMachine {
  /** The state as reported: a fault and silence from the broker override what kafkajs last said. */
  state(): ConsumerState;
  /** The loop moved to `state`; joining also counts as an answer from the broker and a recovery. */
  enter(state: ConsumerState['state'], reason?: string): void;
  /** The broker answered a heartbeat. */
  contact(): void;
  /** A fetch succeeded (an empty one too): an answer from the broker, and the time operators alert on. */
  fetched(): void;
  /** What the loop did since it was created, for metrics and readiness (see {@link ConsumerActivity}). */
  activity(): ConsumerActivity;
  /** The consumer works again (a fault cleared): the next replacement starts from the shortest pause. */
  recovered(): void;
  /**
   * Milliseconds since the broker client last gave a sign of life: an answer from the broker (a
   * heartbeat, a fetch) or a state it entered (a crash and restart too). See consumer-stall-watch.ts.
   */
  silentMs(): number;
  /**
   * A consumer died for good, or went silent (`silent`, counted in `entered.stalled`): counts the
   * failure, enters `crashed` with `reason` (a fault's, when there is one) and answers how long to
   * wait before starting a new one.
   */
  replaced(reason: string, cause?: 'died' | 'silent'): { delayMs: number; reason: string };
}

/** Shortest and longest pause before a dead consumer is replaced. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 10_000;
/** Longest pause while a batch cannot be decompressed: every retry meets it again and rebalances the group. */
const MAX_FAULT_RETRY_MS = 60_000;

/** Creates the state machine of one consumer, in state `idle`. */
export function createConsumerStateMachine(options: ConsumerStateMachineOptions): ConsumerStateMachine {
  const now = options.now ?? Date.now;
  let current: ConsumerState = { state: 'idle', since: now() };
  let lastContact = now();
  let failures = 0;
  const startedAt = now();
  let lastFetchAt: number | undefined;
  let lastSign = startedAt;
  const entered: Record<ConsumerState['state'], number> = { idle: 0, connecting: 0, joined: 0, stalled: 0, rebalancing: 0, crashed: 0, stopped: 0 };

  const enter = (state: ConsumerState['state'], reason?: string) => {
    current = reason === undefined ? { state, since: now() } : { state, since: now(), reason };
    entered[state] += 1;
    lastSign = now();
    if (state !== 'joined') return;
    lastContact = now();
    // Joining proves nothing about a batch that cannot be decompressed: the backoff keeps growing.
    if (options.fault() === undefined) failures = 0;
  };

  return {
    state() {
      const fault = options.fault();
      if (fault !== undefined && current.state !== 'stopped') return { state: 'crashed', since: fault.since, reason: fault.reason };
      // "joined" is only as true as the last answer from the broker.
      const silent = now() - lastContact;
      if (current.state === 'joined' && silent > options.sessionTimeoutMs) {
        return { state: 'stalled', since: lastContact, reason: `no answer from the broker for ${Math.round(silent / 1000)} s` };
      }
      return current;
    },
    enter,
    contact() {
      lastContact = now();
      lastSign = lastContact;
    },
    fetched() {
      lastContact = now();
      lastFetchAt = lastContact;
      lastSign = lastContact;
    },
    silentMs: () => now() - lastSign,
    activity() {
      // Before the first fetch, the age counts from the start: a consumer that never fetched is as late as one that stopped.
      return { lastFetchAt, secondsSinceFetch: (now() - (lastFetchAt ?? startedAt)) / 1000, joinedOnce: entered.joined > 0, entered: { ...entered } };
    },
    recovered() {
      failures = 0;
    },
    replaced(reason, cause = 'died') {
      failures += 1;
      if (cause === 'silent') entered.stalled += 1;
      const fault = options.fault();
      const delayMs = Math.min(fault === undefined ? MAX_RETRY_MS : MAX_FAULT_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 6));
      const shown = fault?.reason ?? reason;
      enter('crashed', shown);
      return { delayMs, reason: shown };
    },
  };
}
