/**
 * Which transport answers a request to `/graphql`, by content negotiation under the HTTP rules
 * (RFC 9110 §12.5.1: q-values first, then the most specific range, then the order listed), through
 * Express's `req.accepts` (jshttp's `accepts` over `negotiator`) rather than by looking for a type's
 * name anywhere in `Accept`:
 *
 * - an event stream (graphql-sse) when the client prefers `text/event-stream` to both GraphQL
 *   response types (graphql-sse's client sends it alone, urql's subscriptions list it first);
 * - for a subscription, Apollo's multipart protocol when `Accept` lists `multipart/mixed` with
 *   `subscriptionSpec=1.0` (Apollo Client's `HttpLink`) and does not prefer `text/event-stream` to it;
 * - an event stream for a subscription whenever `text/event-stream` is acceptable at all (through a
 *   wildcard, or listed after JSON): a subscription has no single response to give, and over plain HTTP it is refused;
 * - otherwise one GraphQL response (Apollo Server), in the JSON type the client prefers: urql lists
 *   JSON first and `text/event-stream` fourth for its queries and mutations, and reads them as JSON.
 *
 * Only a document that names `subscription` is parsed here, so the usual query costs one scan of
 * its text. A text the lifecycle takes (a document sent by id, looked up and never registered, or
 * a text where texts are served) is parsed by the lifecycle's parse phase: its limits, and the
 * document kept for the transport that prepares it next (one parse per text). A text it refuses
 * (trusted documents only) is parsed alone and kept nowhere, only to choose the transport that
 * refuses it: refused texts never fill the documents kept for every caller.
 */
import { parse as parseMediaType } from 'content-type';
import { getOperationAST, parse, type DocumentNode } from 'graphql';
import type { Request } from 'express';
import { GRAPHQL_RESPONSE_TYPES } from '../../base/graphql-response-type.js';
import type { OperationLifecycle } from '../pipeline/operation-lifecycle.js';
import type { OperationRequest } from '../pipeline/operation-plugin.js';
import { ServiceError } from '../../base/errors.js';
import { readOperationRequest } from './operation-request.js';

const EVENT_STREAM = 'text/event-stream';

/** The streaming transport that answers `req`, or undefined for one GraphQL response; see the file header. */
export function streamingTransport(req: Request, lifecycle: DocumentReader): 'sse' | 'multipart' | undefined {
  let subscription: boolean | undefined;
  const isSubscriptionRequest = () => {
    if (subscription !== undefined) return subscription;
    // Parameters that cannot be read are refused by the transport that answers one response.
    const params = readOperationRequest(req);
    return (subscription = !(params instanceof ServiceError) && isSubscription(params, lifecycle));
  };
  if (multipartPreferred(req.headers.accept) === true && isSubscriptionRequest()) return 'multipart';
  if (req.accepts([...GRAPHQL_RESPONSE_TYPES, EVENT_STREAM]) === EVENT_STREAM) return 'sse';
  return req.accepts(EVENT_STREAM) === EVENT_STREAM && isSubscriptionRequest() ? 'sse' : undefined;
}

const MULTIPART = 'multipart/mixed';

/**
 * Whether `accept` prefers `multipart/mixed; subscriptionSpec=1.0` to an explicit
 * `text/event-stream` (by q-value, then order); undefined when it lists no such multipart range.
 */
function multipartPreferred(accept: string | undefined): boolean | undefined {
  if (accept === undefined || !/subscriptionspec/i.test(accept)) return undefined;
  let multipart: { q: number; at: number } | undefined;
  let eventStream: { q: number; at: number } | undefined;
  accept.split(',').forEach((range, at) => {
    const parsed = mediaRange(range);
    if (parsed === undefined) return;
    if (parsed.type === MULTIPART && parsed.parameters.subscriptionspec === '1.0') multipart ??= { q: parsed.q, at };
    if (parsed.type === EVENT_STREAM) eventStream ??= { q: parsed.q, at };
  });
  if (multipart === undefined || multipart.q <= 0) return undefined;
  return eventStream === undefined || multipart.q > eventStream.q || (multipart.q === eventStream.q && multipart.at < eventStream.at);
}

/** One range of an `Accept` header, by jshttp's `content-type` parser; undefined when unreadable. */
function mediaRange(range: string): { type: string; parameters: Record<string, string>; q: number } | undefined {
  try {
    const parsed = parseMediaType(range.trim());
    const q = parsed.parameters.q === undefined ? 1 : Number(parsed.parameters.q);
    return { ...parsed, q: Number.isFinite(q) ? q : 0 };
  } catch {
    return undefined;
  }
}

/** What the choice reads a document with: the lifecycle's resolve and parse steps, and its parse options. */
export type DocumentReader = Pick<OperationLifecycle, 'resolve' | 'parse' | 'parseOptions'>;

/** Whether the operation `request` selects is a subscription; anything unreadable is left for the transport to refuse. */
function isSubscription(request: OperationRequest, lifecycle: DocumentReader): boolean {
  const sent = typeof request.query === 'string' && request.query !== '' ? request.query : undefined;
  if (sent !== undefined && !sent.includes('subscription')) return false;
  // A text is resolved alone (no id: an APQ hash sent with it is not registered here); without
  // one, the id's document is looked up (an unknown one is refused by the transport).
  const resolved = lifecycle.resolve(sent === undefined ? { ...request, query: undefined } : { query: sent });
  const taken = resolved instanceof Error || typeof resolved.query !== 'string' || resolved.query === '' ? undefined : resolved.query;
  let document: DocumentNode | Error;
  if (taken !== undefined) {
    if (!taken.includes('subscription')) return false;
    document = lifecycle.parse(taken);
  } else if (sent !== undefined) {
    document = parseAlone(sent, lifecycle);
  } else {
    return false;
  }
  if (document instanceof Error) return false;
  const operationName = typeof request.operationName === 'string' ? request.operationName : undefined;
  return getOperationAST(document, operationName)?.operation === 'subscription';
}

/** `text` parsed under the lifecycle's limits and kept nowhere. */
function parseAlone(text: string, lifecycle: DocumentReader): DocumentNode | Error {
  try {
    return parse(text, lifecycle.parseOptions);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
