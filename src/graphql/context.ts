/**
 * The per-operation GraphQL context. Loaders are created here for every operation and never
 * shared, so one request's batching and caching cannot leak into another's.
 */
import DataLoader from 'dataloader';
import type { TestRecord } from '../domain/types.js';
import type { PubSub } from '../pubsub/pubsub.js';
import type { TestStarter } from '../results/test-starter.js';
import type { Store } from '../store/store.js';

/** Long-lived parts the resolvers use; built once per process. */
export interface GraphQLDeps {
  readonly store: Store;
  readonly pubsub: PubSub;
  readonly starter: TestStarter;
  readonly subscriptionQueueLimit: number;
}

/** What every resolver receives. */
export interface GraphQLContext extends GraphQLDeps {
  readonly loaders: Loaders;
}

/** The request-scoped DataLoaders. */
export interface Loaders {
  /** Tests by correlation id, batched into one `store.getMany` per tick. */
  readonly test: DataLoader<string, TestRecord | null>;
}

/** Creates a fresh context (with fresh loaders) for one operation. */
export function createGraphQLContext(deps: GraphQLDeps): GraphQLContext {
  return {
    ...deps,
    loaders: {
      test: new DataLoader<string, TestRecord | null>((ids) => deps.store.getMany(ids)),
    },
  };
}
