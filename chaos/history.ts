/**
 * Everything a chaos run saw, recorded as it happened, for the checker: what was started, what the
 * external system had acknowledged, what each follower was handed, every read's answer, the faults
 * the nemesis injected, and each replica's memory over time. Tables keyed by correlation id are
 * Maps (ids come from the service).
 */
import type { FollowEnd } from '../packages/client/src/index.js';

/** One follower of one test, through the load balancer. */
export interface FollowerRecord {
  readonly transport: 'ws' | 'sse';
  /** Sequences in the order the application was handed them. */
  readonly sequences: number[];
  readonly ids: string[];
  reconnects: number;
  end: FollowEnd | undefined;
}

/** One fault, from its start to the moment it was healed. */
export interface FaultRecord {
  readonly kind: string;
  readonly target: string;
  readonly start: number;
  end: number | undefined;
  /** Why it could not be injected or healed, when it could not (it then counts for nothing). */
  failed?: string;
}

/** A chaos run's history. */
export interface History {
  readonly startedAt: number;
  /** Tests started through the load balancer (a 2xx answer), with when. */
  readonly started: Map<string, number>;
  /** Start requests that failed, by status (0: no answer). */
  readonly startFailures: Array<{ readonly at: number; readonly status: number }>;
  /** Correlation ids of starts given up after every retry (never answered 202). */
  readonly abandoned: Set<string>;
  /** Requests the external system read from the requests topic. */
  readonly requestsSeen: Set<string>;
  /** Per test, the sequences whose send the brokers acknowledged (duplicates sent again, once each here), and its final sequence. */
  readonly acked: Map<string, { readonly sequences: Set<number>; final: number | undefined }>;
  /** Sends that failed and were tried again. */
  sendRetries: number;
  /** Replicas that had not exited 30 s after a SIGTERM (then killed): a shutdown that wedged. */
  readonly wedged: Array<{ readonly at: number; readonly replica: string }>;
  /** Times the external system's requests consumer was replaced because it had stopped fetching. */
  externalConsumerRestarts: number;
  readonly followers: Map<string, FollowerRecord>;
  readonly reads: Array<{ readonly at: number; readonly kind: string; readonly status: number }>;
  /** Milliseconds from a result's production to its hand-over to a follower. */
  readonly pushLatency: Array<{ readonly at: number; readonly ms: number }>;
  readonly faults: FaultRecord[];
  /** Each replica's memory over time; `pid` tells its processes apart (a restarted replica starts afresh). */
  readonly memory: Array<{ readonly at: number; readonly replica: string; readonly pid: number; readonly rss: number; readonly heap: number }>;
  /** What the report must say about the run itself (a kind of fault it could not inject, and why). */
  readonly notes: string[];
  /**
   * After the faults stopped: how long the run gave the system to finish every stream and follower,
   * and how long it took (undefined: it had not within the limit).
   */
  settle: { readonly limitMs: number; tookMs: number | undefined } | undefined;
}

/** An empty history starting now. */
export function createHistory(): History {
  return {
    startedAt: Date.now(),
    started: new Map(),
    startFailures: [],
    abandoned: new Set(),
    requestsSeen: new Set(),
    acked: new Map(),
    sendRetries: 0,
    externalConsumerRestarts: 0,
    wedged: [],
    followers: new Map(),
    reads: [],
    pushLatency: [],
    faults: [],
    memory: [],
    notes: [],
    settle: undefined,
  };
}
