/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: a commit that kafkajs is still
 * retrying when its consumer joins the group again is sent on under the new generation. Each retry
 * reads the consumer group's current offset manager, which a join replaces (with the new
 * generation, member id and coordinator), while the offsets stay the ones asked for before it; the
 * broker checks a commit's generation and member, not who owns each partition, so it accepts
 * offsets of partitions that moved to another member, and moves that member's committed offset
 * back (its records are read again). The commit tracking (`kafka-offset-commits.ts`) drops such
 * partitions at each join, but cannot take back what kafkajs already holds. This ends such a commit
 * at the first retry after a join, as failed: the tracking keeps its offsets pending and sends again
 * only those of partitions the join left to this member. Importing the module applies it, once; on
 * any other kafkajs release it changes nothing (test/unit/ingest/kafkajs-commit-across-rejoin.test.ts
 * then fails, so the next upgrade looks at it again).
 */
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';

type Retrier = <T>(attempt: (bail: (error: Error) => void, retryCount: number) => Promise<T>) => Promise<T>;

/** What this patch touches of kafkajs's consumer runner (its `Runner` class). */
interface Runner {
  running: boolean;
  retrier: Retrier;
  consumerGroup: { offsetManager: unknown; commitOffsets(offsets: unknown): Promise<void> };
  commitOffsets(offsets: unknown): Promise<void> | undefined;
}

/** True when the installed kafkajs's runner has the commit-across-rejoin fix. */
export const kafkajsCommitAcrossRejoinPatched = kafkajsIsPatchedRelease;

if (kafkajsCommitAcrossRejoinPatched) {
  const Runner = requireKafkajsModule<{ prototype: Runner }>('kafkajs/src/consumer/runner.js');
  const { KafkaJSNonRetriableError } = requireKafkajsModule<{ KafkaJSNonRetriableError: new (message: string) => Error }>('kafkajs/src/errors.js');
  // kafkajs's own method, but for the check of the offset manager each retry makes.
  Runner.prototype.commitOffsets = function generationBoundCommit(this: Runner, offsets: unknown) {
    if (!this.running) return undefined;
    const asked = this.consumerGroup.offsetManager;
    return this.retrier(async (bail) => {
      if (this.consumerGroup.offsetManager !== asked) {
        bail(new KafkaJSNonRetriableError('the consumer joined its group again while this commit was retried; not sent under the new generation'));
        return;
      }
      try {
        await this.consumerGroup.commitOffsets(offsets);
      } catch (error) {
        // As kafkajs does: a stopped consumer's commit ends quietly, one the broker cannot take ends at once.
        if (!this.running) return;
        if ((error as { name?: unknown } | null)?.name === 'KafkaJSNotImplemented') {
          bail(error as Error);
          return;
        }
        throw error;
      }
    });
  };
}
