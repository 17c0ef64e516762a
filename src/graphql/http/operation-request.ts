/**
 * The parameters of an operation sent over plain HTTP (for a single result, or for a stream in
 * Apollo's multipart subscription protocol): a POST's JSON body, or a GET's URL with `variables`
 * and `extensions` as JSON, read as the GraphQL-over-HTTP specification reads them; anything else
 * is BAD_REQUEST.
 */
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../../base/errors.js';
import type { OperationRequest } from '../pipeline/operation-plugin.js';

/** The request's operation parameters, or why they cannot be read. */
export function readOperationRequest(req: IncomingMessage & { body?: unknown }): OperationRequest | ServiceError {
  if (req.method === 'GET') return fromUrl(new URL(req.url ?? '/', 'http://service').searchParams);
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('The body must be a JSON object of GraphQL request parameters.');
  return checked(body as Record<string, unknown>);
}

function fromUrl(search: URLSearchParams): OperationRequest | ServiceError {
  const json = (name: string): unknown => {
    const text = search.get(name);
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return Symbol.for('unreadable');
    }
  };
  return checked({
    query: search.get('query') ?? undefined,
    operationName: search.get('operationName') ?? undefined,
    documentId: search.get('documentId') ?? undefined,
    variables: json('variables'),
    extensions: json('extensions'),
  });
}

/** The parameters when each has the type the specification gives it. */
function checked(params: Record<string, unknown>): OperationRequest | ServiceError {
  const { query, operationName, documentId, variables, extensions } = params;
  if (query !== undefined && query !== null && typeof query !== 'string') return bad('"query" must be a string.');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return bad('"operationName" must be a string.');
  if (!isMap(variables)) return bad('"variables" must be a JSON object.');
  if (!isMap(extensions)) return bad('"extensions" must be a JSON object.');
  return { query, operationName, documentId, variables, extensions } as OperationRequest;
}

function isMap(value: unknown): value is Record<string, unknown> | null | undefined {
  return value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value));
}

function bad(message: string): ServiceError {
  return new ServiceError('BAD_REQUEST', message);
}
