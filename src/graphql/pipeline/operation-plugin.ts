/**
 * The seam of the operation lifecycle (`operation-lifecycle.ts`): what a plugin may contribute to
 * each step an operation takes, on every transport alike. A concern of the pipeline (persisted
 * documents, a limit, a scope rule, a budget, the error edge) is one plugin file under `plugins/`
 * implementing the hooks it needs; the list the service runs is `plugins/index.ts`.
 *
 * The steps, in order: arrive (HTTP only: an answer kept for the request as sent, a response cache's)
 * → start (before the document is read: budgets) → resolve the document (an id
 * to its text) → parse (with the plugins' parse options) → validate (graphql-js's rules and the
 * plugins') → admit (the caller, the variables) → context → execute (a query or a mutation)
 * or subscribe (each event a subscription pushes: `onEvent`, once per event whatever the
 * subscribers) → format errors. Parse, validate and execute are phases in envelop's shape: a hook
 * before (`onParse`, `onValidate`, `onExecute`) returns the hooks that follow the phase's result.
 * A hook refuses by returning a ServiceError (or a GraphQL error a rule built); the lifecycle
 * converts it once (`refusal-error.ts`) and the transport answers it in its own protocol.
 */
import type {
  DocumentNode,
  ExecutionArgs,
  ExecutionResult,
  GraphQLError,
  GraphQLFormattedError,
  OperationDefinitionNode,
  ParseOptions,
  ValidationRule,
} from 'graphql';
import type { Principal } from '../../auth/principal.js';
import type { ServiceError } from '../../base/errors.js';
import type { TestSummary } from '../../domain/types.js';

/** How an operation reached the service. */
export type Transport = 'http' | 'websocket' | 'sse' | 'multipart';

/** An operation's parameters as a client sends them, over any transport. */
export interface OperationRequest {
  readonly query?: string | null | undefined;
  readonly documentId?: unknown;
  readonly operationName?: string | null | undefined;
  readonly variables?: Record<string, unknown> | null | undefined;
  readonly extensions?: Record<string, unknown> | null | undefined;
}

/** An operation as it starts, before its document is read. */
export interface OperationStart {
  readonly principal: Principal;
  readonly transport: Transport;
}

/** A validated operation, about to be admitted. */
export interface OperationToAdmit extends OperationStart {
  readonly document: DocumentNode;
  /** The operation to run, as `getOperationAST` found it (undefined when the document names none). */
  readonly operation: OperationDefinitionNode | null | undefined;
  readonly operationName: string | null | undefined;
  readonly variables: Record<string, unknown> | null | undefined;
  /** The request's `extensions` (a delivery guarantee asked for, say), as the client sent them. */
  readonly extensions?: Record<string, unknown> | null | undefined;
}

/**
 * An HTTP request to `/graphql` as it arrives, before any step runs: what a plugin may answer it
 * from (the response cache), and what it keeps an answer by once the operation has run. The
 * streaming transports have no such step: their answers are streams, not bodies.
 */
export interface ArrivingOperation {
  readonly principal: Principal;
  readonly method: string;
  /** The parameters of a JSON body (a POST that passed CSRF prevention); undefined for any other request. */
  readonly json: OperationRequest | undefined;
  /** The `Accept` header: it chooses the content type of the answer. */
  readonly accept: string | undefined;
  /** The content type a single result is sent in for this `Accept`, as Apollo Server chooses it; undefined when none is acceptable (406). */
  readonly contentType: string | undefined;
}

/** One operation as a transport received it. */
export interface ReceivedOperation extends OperationStart {
  /** The request's parameters, before its document is resolved. */
  readonly params: OperationRequest;
  /** The cursor a reconnecting SSE client last received (`Last-Event-ID`). */
  readonly resumeAfter?: string | undefined;
  /** The HTTP method of a plain HTTP operation: a GET runs queries only (it may be repeated, prefetched or cached). */
  readonly method?: string | undefined;
  /** A plain HTTP operation as it arrived (its `arrive` step's view of it). */
  readonly arrival?: ArrivingOperation | undefined;
}

/**
 * A prepared operation: its execution arguments, the text of its document (resolved from an id,
 * say), the operation it runs and the operation as received. Every transport hands it back to
 * `execute` as it got it.
 */
export interface PreparedOperation extends ExecutionArgs {
  readonly query: string;
  /** The operation the document and operation name select, as `prepare` found it (undefined or null: none, which graphql-js refuses). */
  readonly operation: OperationDefinitionNode | null | undefined;
  readonly received: ReceivedOperation;
}

/** What a plugin may read of an operation's context after it ran: the tests it read. */
export interface OperationContext {
  readonly loaders: {
    /**
     * Every test the operation read, by its one spelling (those answered null too: they may
     * appear), and what the log answered; every test whose messages an operation reads is read here
     * first (its ownership is checked on this read). Empty for a context that keeps no reads.
     */
    readonly reads: ReadonlyMap<string, TestSummary | null>;
  };
}

/** A query or mutation about to be executed, on any transport. */
export interface OperationToExecute {
  readonly prepared: PreparedOperation;
  /** The operation to run, as the document and operation name resolve it. */
  readonly operation: OperationDefinitionNode;
  /** Its context, as the resolvers got it. */
  readonly context: OperationContext;
}

/** What a plugin does after an execution it followed. One that throws is reported and skipped. */
export interface ExecutionHooks {
  /**
   * The result as graphql-js answered it, or as an earlier plugin replaced it: return a replacement
   * (the next plugin sees it), or nothing to leave it as it is.
   */
  onExecuteDone?(result: ExecutionResult): ExecutionResult | void;
  /** The result every plugin's `onExecuteDone` left: the one whose errors are formatted and which is sent (what a cache keeps). */
  onResult?(result: ExecutionResult): void;
}

/**
 * What a plugin returns before the parse or validate phase (envelop's `onParse` / `onParseDone`
 * shape): a result it kept for this input, which the phase then answers without running (the first
 * plugin's kept result wins), and what it does with the result the phase ends with, run or kept.
 */
export interface PhaseHooks<Kept, Result = Kept> {
  /** A result kept for this input (a document parsed before from the same text, say). */
  readonly kept?: Kept;
  /** After the phase, with its result. One that throws is reported and skipped. */
  done?(result: Result): void;
}

/** An answer a plugin kept for a request: sent as is, status 200. */
export interface KeptAnswer {
  readonly body: string;
  readonly contentType: string;
  /** Headers the answer adds (a `Cache-Status`). */
  readonly headers: Readonly<Record<string, string>>;
}

/** What `arrive` makes of a request: an answer a plugin kept, or nothing. */
export type Arrival = KeptAnswer | undefined;

/** Why a hook refuses an operation. */
export type Refusal = ServiceError | GraphQLError;

/**
 * What a plugin follows of one subscription event on its way to the subscribers (a push span):
 * the event is executed once per distinct operation and written to every subscriber in the same
 * turn of the event loop, after which it ends.
 */
export interface EventObserver {
  /** One more subscriber reached by the event. */
  reached(): void;
  /** Every subscriber the event reached in this turn has its result. */
  end(): void;
}

/** One concern of the lifecycle; every hook is optional. */
export interface OperationPlugin {
  /** For logs and tests. */
  readonly name: string;
  /** Options the parser is given (the lifecycle merges every plugin's). */
  readonly parseOptions?: ParseOptions;
  /** Validation rules beyond graphql-js's `specifiedRules` (they depend on the document alone, so results are kept per document). */
  readonly validationRules?: readonly ValidationRule[];
  /** Validation options: the smallest `maxErrors` wins, and suggestions are hidden if any plugin hides them. */
  readonly validationOptions?: { readonly maxErrors?: number; readonly hideSuggestions?: boolean };
  /** Before the service serves (Apollo Server's `serverWillStart`): what the plugin needs running, such as a subscription of its own. */
  onServiceStart?(): Promise<void>;
  /** After the transports drained, as the service stops: what `onServiceStart` started. */
  onServiceStop?(): Promise<void> | void;
  /** An HTTP request as it arrives (see {@link ArrivingOperation}); the first answer wins, and no other step runs. */
  arrive?(operation: ArrivingOperation): Arrival;
  /** Before the document is read (a budget): a refusal ends the operation there. */
  onStart?(start: OperationStart): Refusal | undefined | Promise<Refusal | undefined>;
  /**
   * The request's document: its parameters with the text in `query` (resolved from an id, say).
   * Throws a refusal (a ServiceError or GraphQL error) to refuse it. Plugins run in order, each on
   * the previous one's answer.
   */
  resolveDocument?(request: OperationRequest): OperationRequest;
  /**
   * Before a document's text is parsed: a document kept for it, and what follows the parse (which
   * sees the parse's failure too; a failure is never kept: its error holds the whole text). A hook
   * that throws is reported and skipped: these hooks keep and follow, they never refuse.
   */
  onParse?(text: string): PhaseHooks<DocumentNode, DocumentNode | GraphQLError> | undefined;
  /**
   * Before a parsed document is validated (graphql-js's rules and the plugins'; they depend on the
   * document alone): its errors as kept (none: valid), and what follows the validation. A hook that
   * throws is reported and skipped.
   */
  onValidate?(document: DocumentNode): PhaseHooks<readonly GraphQLError[]> | undefined;
  /** After validation (it depends on the caller and the variables, so it runs for every operation). */
  onAdmit?(operation: OperationToAdmit): Refusal | undefined;
  /**
   * A query or mutation about to be executed: return hooks to follow its result (the common case is
   * none). Subscriptions are not executed here: each event is, once per distinct operation (`onEvent`).
   */
  onExecute?(operation: OperationToExecute): ExecutionHooks | undefined;
  /**
   * A subscription event about to be pushed, on the streaming transports: once per event, however
   * many subscribers it reaches. Return an observer to follow it (the common case is none: keep it
   * to a lookup, it runs on the push path).
   */
  onEvent?(event: unknown): EventObserver | undefined;
  /** An error on its way to a client; plugins run in order, each on the previous one's answer. */
  formatError?(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}
