/**
 * The per-operation GraphQL context. Loaders are made here for each operation (on first use) and never
 * shared, so one request's batching and caching cannot leak into another's.
 */
import DataLoader from 'dataloader';
import type { AccessPolicy } from '../../auth/access.js';
import type { Principal } from '../../auth/principal.js';
import type { TestSummary } from '../../domain/types.js';
import type { ResultLog } from '../../log/result-log.js';
import type { TestStarter } from '../../results/test-starter.js';
import type { PreparedOperation } from './operation-plugin.js';
import { canonicalCorrelationId } from '../../domain/correlation-id.js';

/** Long-lived parts the resolvers use; built once per process. */
export interface GraphQLDeps {
  readonly log: ResultLog;
  readonly starter: TestStarter;
  readonly subscriptionQueueLimit: number;
  readonly access: AccessPolicy;
}

/**
 * Which tests the operation's caller may see: its own, or every test with the admin scope (the
 * access policy's rule, applied once per operation here, so no resolver applies it itself). A test
 * the caller may not see is answered as an unknown id is, so ids of others' tests leak nothing.
 */
export interface Visibility {
  canSee(test: Pick<TestSummary, 'owner'>): boolean;
  /** The owner whose tests a list shows: the caller's subject, or undefined when it sees every test. */
  readonly owner: string | undefined;
}

/** What every resolver receives. */
export interface GraphQLContext extends GraphQLDeps {
  readonly loaders: Loaders;
  /** The verified caller; every operation has one. */
  readonly principal: Principal;
  readonly visibility: Visibility;
  /**
   * The cursor the transport resumes after, which takes the place of a subscription's `after` and
   * `afterSequence`: an SSE client's `Last-Event-ID` when it reconnects.
   */
  readonly resumeAfter?: string | undefined;
  /**
   * An HTTP operation as the lifecycle prepared it (its document parsed and validated): its endpoint
   * prepares it before Apollo Server sees it, Apollo is handed its document rather than parsing it
   * again, and the lifecycle executes it (`../http/apollo-server.ts`). Carried here because the
   * context is what Apollo passes on.
   */
  readonly prepared?: PreparedOperation | undefined;
}

/** What a context carries beyond its caller. */
export interface ContextExtras {
  readonly resumeAfter?: string | undefined;
  readonly prepared?: PreparedOperation | undefined;
  /** False for a context that may live long (see {@link createGraphQLContext}). */
  readonly cacheReads?: boolean;
}

/** The request-scoped DataLoaders. */
export interface Loaders {
  /**
   * Tests by correlation id, batched into one `log.getMany` per tick: their summaries, without
   * messages, which `Test.messages` reads a page of when asked for; null for a test the caller may
   * not see (its ownership is checked here, on the summary, before any message is read).
   */
  readonly test: DataLoader<string, TestSummary | null>;
  /**
   * What `test` read, by each test's one spelling (null: unknown, or not the caller's to see; those
   * may appear): what the operation's answer depends on (the response cache keeps it by them). Empty
   * for a context that keeps no reads.
   */
  readonly reads: ReadonlyMap<string, TestSummary | null>;
}

/**
 * Creates a fresh context (with fresh loaders) for one operation of `principal`. `cacheReads` false
 * for a context that may live long (the streaming transports': a subscription's lives as long as
 * it does): its loader batches reads but keeps none, so it neither answers an event with an earlier
 * read nor holds every test it ever read.
 */
export function createGraphQLContext(deps: GraphQLDeps, principal: Principal, extras: ContextExtras = {}): GraphQLContext {
  const { resumeAfter, prepared, cacheReads = true } = extras;
  const visibility: Visibility = {
    canSee: (test) => deps.access.canSee(principal, test),
    owner: deps.access.seesAll(principal) ? undefined : principal.subject,
  };
  return {
    ...deps,
    principal,
    visibility,
    ...(resumeAfter === undefined ? {} : { resumeAfter }),
    ...(prepared === undefined ? {} : { prepared }),
    loaders: new OperationLoaders(deps, visibility, cacheReads),
  };
}

/**
 * The loaders of one operation, each made on first use: a subscription's context lives as long as
 * it does, and most never load a test (the fields under `testMessages` read the message alone), so
 * a loader made up front (the loader, its options and its batch function) was held for nothing.
 */
class OperationLoaders implements Loaders {
  private loader: DataLoader<string, TestSummary | null> | undefined;
  // Only a context that keeps its reads records them: a long-lived one would hold every test it read.
  readonly reads = new Map<string, TestSummary | null>();

  constructor(
    private readonly deps: GraphQLDeps,
    private readonly visibility: Visibility,
    private readonly cacheReads: boolean,
  ) {}

  get test(): DataLoader<string, TestSummary | null> {
    this.loader ??= new DataLoader<string, TestSummary | null>(
      async (ids) => {
        // Either spelling of a UUID reads the one test it names, and is recorded by that test's id:
        // the response cache drops what read a test by the id its changes carry.
        const canonical = ids.map(canonicalCorrelationId);
        const tests = await this.deps.log.getMany(canonical);
        if (this.cacheReads) for (let i = 0; i < canonical.length; i++) this.reads.set(canonical[i] as string, tests[i] ?? null);
        return tests.map((test) => (test !== null && this.visibility.canSee(test) ? test : null));
      },
      { cache: this.cacheReads },
    );
    return this.loader;
  }
}
