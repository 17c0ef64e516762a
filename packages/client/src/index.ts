/**
 * The Result Collection Service's client: `follow(correlationId, options)` hands each message of a
 * test to the application once, resuming by cursor on every reconnect, over graphql-ws or SSE.
 */
export { follow } from './follow.js';
export { FollowError, followIterator, type FollowIteratorOptions } from './follow-iterator.js';
export { withResume, type SubscribingClient } from './with-resume.js';
export { createMemoryCursorStore } from './memory-cursor-store.js';
export { createIndexedDbCursorStore, type IndexedDbCursorStoreOptions } from './indexed-db-cursor-store.js';
export { createWebStorageCursorStore, type CursorStorage, type SyncCursorStore } from './web-storage-cursor-store.js';
export { SERVICE_ERROR_CODES, type ServiceErrorCode } from './service-error-codes.js';
export type {
  CursorStore,
  DeliveryGranted,
  FollowEnd,
  FollowFailureCode,
  FollowOptions,
  FollowState,
  FollowedMessage,
  Following,
  LibraryErrorCode,
} from './types.js';
