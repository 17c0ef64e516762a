/** The REST representation of tests and messages (times as ISO 8601 strings). */
import { messageGlobalId, type TestMessage, type TestRecord } from '../domain/types.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** One message as REST returns it: the same fields as the GraphQL `TestMessage`. */
export function messageToJson(message: TestMessage) {
  return {
    id: messageGlobalId(message),
    correlationId: message.correlationId,
    messageId: message.messageId,
    sequence: message.sequence,
    status: message.status,
    final: message.final,
    payload: message.payload,
    producedAt: iso(message.producedAt),
    receivedAt: iso(message.receivedAt),
  };
}

/** A test with all its messages, as `GET /tests/{id}` returns it. */
export function testToJson(test: TestRecord) {
  return {
    correlationId: test.correlationId,
    status: test.status,
    input: test.input,
    createdAt: iso(test.createdAt),
    updatedAt: iso(test.updatedAt),
    messageCount: test.messages.length,
    messages: test.messages.map(messageToJson),
  };
}
