/**
 * The peer's store: a test record and its list of messages per correlation id, deduplicated by
 * correlation id and sequence. Two implementations: an in-process `Map` (one replica) and
 * `redis-store.ts` (replicas sharing Redis).
 */

/** A test as the peer keeps it. */
export interface PeerTest {
  readonly correlationId: string;
  readonly status: string;
  readonly input: unknown;
  readonly messageCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A stored result message, in the shape the `TestMessage` type resolves from. */
export interface PeerMessage {
  readonly id: string;
  readonly correlationId: string;
  readonly sequence: number | null;
  readonly status: string | null;
  readonly final: boolean;
  readonly payload: unknown;
  readonly receivedAt: number;
}

/** What the schema's resolvers and the consumer need of a store. */
export interface PeerStore {
  createTest(correlationId: string, input: unknown): Promise<void>;
  /** Stores `message` unless a message of the same test and sequence is stored; true when stored. */
  addMessage(message: PeerMessage): Promise<boolean>;
  /** The tests of `ids`, null where unknown, in the same order (a DataLoader batch function). */
  getTests(ids: readonly string[]): Promise<Array<PeerTest | null>>;
  /** Up to `first` messages of a test, after the message at index `after` when given. */
  getMessages(correlationId: string, first: number, after?: number): Promise<{ nodes: PeerMessage[]; totalCount: number }>;
  close(): Promise<void>;
}

/** The status a test takes from a message: a final message ends it, any other one sets it running. */
export function statusAfter(message: PeerMessage): string {
  if (!message.final) return 'RUNNING';
  return message.status === 'FAILED' ? 'FAILED' : 'COMPLETED';
}

interface Entry {
  test: PeerTest;
  readonly messages: PeerMessage[];
  readonly seen: Set<string>;
}

/** The memory variant: a `Map` of tests, each with its messages in arrival order and the keys seen. */
export function createMemoryStore(): PeerStore {
  const tests = new Map<string, Entry>();
  const entry = (correlationId: string, input: unknown = null): Entry => {
    let found = tests.get(correlationId);
    if (found === undefined) {
      const now = Date.now();
      found = { test: { correlationId, status: 'PENDING', input, messageCount: 0, createdAt: now, updatedAt: now }, messages: [], seen: new Set() };
      tests.set(correlationId, found);
    }
    return found;
  };
  return {
    async createTest(correlationId, input) {
      entry(correlationId, input);
    },
    async addMessage(message) {
      const found = entry(message.correlationId);
      // Messages without a sequence cannot be told apart from a redelivery: each is kept.
      const key = message.sequence === null ? undefined : String(message.sequence);
      if (key !== undefined && found.seen.has(key)) return false;
      if (key !== undefined) found.seen.add(key);
      found.messages.push(message);
      found.test = { ...found.test, status: statusAfter(message), messageCount: found.messages.length, updatedAt: message.receivedAt };
      return true;
    },
    async getTests(ids) {
      return ids.map((id) => tests.get(id)?.test ?? null);
    },
    async getMessages(correlationId, first, after) {
      const messages = tests.get(correlationId)?.messages ?? [];
      const start = after === undefined ? 0 : after + 1;
      return { nodes: messages.slice(start, start + first), totalCount: messages.length };
    },
    async close() {
      tests.clear();
    },
  };
}
