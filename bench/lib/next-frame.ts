/**
 * The graphql-ws `next` frame a `testMessages { sequence payload }` subscription receives for one
 * record, built the way a bare WebSocket server would: the result serialized once per record, each
 * subscriber's frame its id around that shared text. The bytes are those graphql-ws's server writes
 * (`JSON.stringify({ id, type, payload })`, fields in the query's order); the fan-out benchmark
 * compares the frame sizes each server's subscribers receive, so a drift shows in its table.
 */

/** A record as the fan-out benchmark produces it (`bench/workers/produce.ts`). */
export interface FanoutRecord {
  readonly correlationId: string;
  readonly sequence: number;
  readonly payload: unknown;
}

/** The `payload` of the `next` frame for `record`: the execution result, serialized once. */
export function testMessagesResult(record: FanoutRecord): string {
  return `{"data":{"testMessages":{"sequence":${JSON.stringify(record.sequence)},"payload":${JSON.stringify(record.payload)}}}}`;
}

/** The whole `next` frame for subscription `id`, around a result from {@link testMessagesResult}. */
export function nextFrame(id: string, result: string): string {
  return `{"id":${JSON.stringify(id)},"type":"next","payload":${result}}`;
}
