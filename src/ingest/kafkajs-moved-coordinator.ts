/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: a consumer's offset commits keep
 * going to the broker that was the group's coordinator when it joined, after the coordinator moved
 * (its node killed or frozen, the group's coordination taken over by another). kafkajs's offset
 * manager answers the broker's `NOT_COORDINATOR` by refreshing the cluster's metadata, but keeps
 * the broker it had and sends every retry there; only a rejoin of the group (which builds a new
 * offset manager) finds the new coordinator, so one commit is refused until then (a chaos run saw
 * one refused ten times over two and a half minutes, its consumer held from rejoining). This looks
 * the coordinator up again after such a refusal, so the next retry goes to the broker that
 * coordinates the group now. Importing the module applies it, once;
 * on any other kafkajs release it changes nothing (test/unit/ingest/kafkajs-moved-coordinator.test.ts
 * then fails, so the next upgrade looks at it again).
 */
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';

/** What this patch touches of kafkajs's offset manager (its `OffsetManager` class). */
interface OffsetManager {
  groupId: string;
  coordinator: unknown;
  cluster: { findGroupCoordinator(options: { groupId: string }): Promise<unknown> };
  commitOffsets(offsets?: unknown): Promise<void>;
}

/** True when the installed kafkajs's offset manager has the moved-coordinator fix. */
export const kafkajsMovedCoordinatorPatched = kafkajsIsPatchedRelease;

if (kafkajsMovedCoordinatorPatched) {
  const OffsetManager = requireKafkajsModule<{ prototype: OffsetManager }>('kafkajs/src/consumer/offsetManager/index.js');
  const commitOffsets = OffsetManager.prototype.commitOffsets;
  OffsetManager.prototype.commitOffsets = async function movedCoordinatorAwareCommit(this: OffsetManager, offsets?: unknown) {
    try {
      return await commitOffsets.call(this, offsets);
    } catch (error) {
      if ((error as { type?: unknown } | null)?.type === 'NOT_COORDINATOR_FOR_GROUP') {
        // kafkajs has just refreshed the metadata; a failed lookup leaves the broker it had, as before.
        this.coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId }).catch(() => this.coordinator);
      }
      throw error;
    }
  };
}
