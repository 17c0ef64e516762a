/**
 * GraphQL over WebSocket (the graphql-ws protocol) on the HTTP server's `/graphql` path. graphql-ws
 * runs no validation rules of its own beyond the standard ones, so `onSubscribe` parses, validates
 * and applies the same depth and cost limits as the HTTP path before anything executes.
 */
import { GraphQLError, getOperationAST, parse, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { createGraphQLContext, type GraphQLDeps } from './context.js';
import type { ErrorFormatter } from './format-error.js';
import { checkOperationLimits, type OperationLimits } from './limits.js';

/** Options of {@link attachGraphQLWebSocket}. */
export interface GraphQLWebSocketOptions {
  readonly httpServer: Server;
  readonly path: string;
  readonly schema: GraphQLSchema;
  readonly deps: GraphQLDeps;
  readonly limits: OperationLimits;
  readonly formatError: ErrorFormatter;
  /** Largest incoming WebSocket message, in bytes. */
  readonly maxPayload?: number;
  /** How often idle sockets are pinged; one that misses a pong is terminated. */
  readonly heartbeatMs?: number;
}

/** The attached WebSocket endpoint. */
export interface GraphQLWebSocket {
  /** Open sockets, for metrics and tests. */
  readonly connections: number;
  /** Closes every socket with 1001 (going away) and stops accepting. Safe to call twice. */
  dispose(): Promise<void>;
}

/** Attaches graphql-ws to the HTTP server. */
export function attachGraphQLWebSocket(options: GraphQLWebSocketOptions): GraphQLWebSocket {
  const wss = new WebSocketServer({ server: options.httpServer, path: options.path, maxPayload: options.maxPayload ?? 64 * 1024 });
  const { schema, limits, formatError } = options;

  const serverCleanup = useServer<Record<string, unknown> | undefined>(
    {
      schema,
      onSubscribe: (_ctx, _id, payload) => {
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError(String(error))];
        }
        const invalid = validate(schema, document);
        if (invalid.length > 0) return invalid.map((e) => withCode(e, 'GRAPHQL_VALIDATION_FAILED'));
        if (getOperationAST(document, payload.operationName) === null) {
          return [new GraphQLError('Unable to identify the operation to run.', { extensions: { code: 'BAD_USER_INPUT' } })];
        }
        const overBudget = checkOperationLimits(schema, document, payload.variables ?? undefined, payload.operationName ?? undefined, limits);
        if (overBudget.length > 0) return overBudget;
        const args: ExecutionArgs = {
          schema,
          document,
          variableValues: payload.variables ?? null,
          operationName: payload.operationName ?? null,
          contextValue: createGraphQLContext(options.deps),
        };
        return args;
      },
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (result.errors === undefined || result.errors.length === 0) return undefined;
        return { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) };
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatError(e.toJSON(), e)),
    },
    wss,
  );

  // Dead peers (a laptop that slept, a dropped network) never send a close frame; without pings
  // their subscriptions would be held forever.
  const alive = new WeakSet<object>();
  wss.on('connection', (socket) => {
    alive.add(socket);
    socket.on('pong', () => alive.add(socket));
  });
  const heartbeat = setInterval(() => {
    for (const socket of wss.clients) {
      if (!alive.has(socket)) {
        socket.terminate();
        continue;
      }
      alive.delete(socket);
      socket.ping();
    }
  }, options.heartbeatMs ?? 30_000);
  heartbeat.unref();

  let disposing: Promise<void> | undefined;
  return {
    get connections() {
      return wss.clients.size;
    },
    dispose() {
      disposing ??= (async () => {
        clearInterval(heartbeat);
        await serverCleanup.dispose();
      })();
      return disposing;
    },
  };
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, { nodes: error.nodes ?? [], extensions: { ...error.extensions, code } });
}
