/**
 * A broker question asked through a short-lived admin client: the consumer's own connections do not
 * expose what kafkajs knows of the cluster (a topic's partitions, its end offsets), so the few
 * places that need it open an admin client, ask, and close it again, whatever happened.
 */
import type { Admin, Kafka } from 'kafkajs';

/** Runs `ask` with a connected admin client of `kafka`; the client is disconnected after it, whatever happened. */
export async function withAdmin<T>(kafka: Kafka, ask: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await ask(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
