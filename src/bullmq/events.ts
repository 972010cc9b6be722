/**
 * Job events across the fleet: workers (and API nodes) publish them on a Redis channel, every API node hears them.
 * @module
 */
import type { Redis } from 'ioredis';

/** An event of a fleet job: the job moved (`progress`) or the database decided it is `complete` or `failed`. */
export interface FleetEvent {
  readonly event: 'progress' | 'complete' | 'failed';
  /** The job id. */
  readonly id: string;
}

/** Publishes `event` on `channel`. */
export async function publish(client: Redis, channel: string, event: FleetEvent): Promise<void> {
  await client.publish(channel, JSON.stringify(event));
}

/** Parses a message of the channel; `undefined` for anything else. */
export function parseEvent(message: string): FleetEvent | undefined {
  try {
    const value = JSON.parse(message) as Partial<FleetEvent>;
    if (
      (value.event === 'progress' || value.event === 'complete' || value.event === 'failed') &&
      typeof value.id === 'string'
    ) {
      return { event: value.event, id: value.id };
    }
  } catch {
    // not ours
  }
  return undefined;
}
