/**
 * The fleet's reads of PostgreSQL that an API node and a worker make per chunk: the work queued ahead of the workers
 * (`fleetAhead`, which sizes the feed of the queue) and what is known of a chunk's positions (`fleetState`), on a
 * job of several inputs rows, appended, partly queued.
 */
import { describe, expect, it } from 'vitest';
import { zeroCounts } from '../../src/bulk/job.js';
import type { JobRecord } from '../../src/bulk/types.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { INPUT_CHUNK } from '../../src/postgres/rows.js';
import { verdictOf } from '../../src/result.js';
import { verdictOnlyResult } from '../../src/score.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';

const enabled = POSTGRES_URL !== undefined;
if (!enabled) console.warn('test/postgres/fleet-statements.test.ts skipped: set MAILVET_TEST_POSTGRES_URL');

const HOUR = 3_600_000;
const emails = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `u${from + i}@x.test`);

describe.skipIf(!enabled)('the fleet statements of the PostgreSQL store', () => {
  it('counts the work ahead from the queued rows, and tells the final and waiting positions of a chunk', async () => {
    const schema = testSchema();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    try {
      const created = INPUT_CHUNK + 904; // two rows: 0 (full) and INPUT_CHUNK
      const record: JobRecord = {
        id: 'job-1',
        owner: null,
        name: null,
        status: 'processing',
        total: created,
        completed: 0,
        counts: zeroCounts(),
        createdAt: 1000,
        startedAt: 1000,
        completedAt: null,
        error: null,
        greylistDelaysMs: [HOUR],
        armed: true,
      };
      await store.fleetCreate(record, emails(0, created), () => {});
      await store.fleetAppend('job-1', emails(created, 3000), 2000, () => {}); // a third row, at `created`
      expect(await store.fleetAhead('job-1')).toBe(0); // nothing queued yet
      await store.fleetQueued('job-1', [0, created]);
      expect(await store.fleetAhead('job-1')).toBe(INPUT_CHUNK + 3000);

      // Final results on both sides of a row's end, and a greylisted position waiting for its retry.
      const finals = [INPUT_CHUNK - 2, INPUT_CHUNK - 1, created, created + 2999];
      const results = finals.map((position) =>
        verdictOnlyResult(`u${position}@x.test`, verdictOf('mailbox_not_found')),
      );
      const grey = verdictOnlyResult('u7@x.test', verdictOf('greylisted'));
      const committed = await store.fleetCommit(
        'job-1',
        finals,
        results,
        [{ position: 7, attempt: 1, dueAt: 5000 + HOUR, result: grey }],
        5000,
      );
      expect(committed).toMatchObject({ written: 4, completed: false });
      expect(await store.fleetAhead('job-1')).toBe(INPUT_CHUNK + 3000 - 4 - 1);
      await store.fleetQueued('job-1', [INPUT_CHUNK]);
      expect(await store.fleetAhead('job-1')).toBe(created + 3000 - 4 - 1);

      // A chunk's positions in any order and span: only its own are told, never a neighbour's.
      const state = await store.fleetState('job-1', [created + 2999, 7, INPUT_CHUNK - 1, 8, created]);
      expect(state?.record.completed).toBe(4);
      expect([...state!.final].sort((a, b) => a - b)).toEqual([INPUT_CHUNK - 1, created, created + 2999]);
      expect([...state!.waiting]).toEqual([[7, 1]]);
      const alone = await store.fleetState('job-1', [INPUT_CHUNK - 3]);
      expect([...alone!.final, ...alone!.waiting.keys()]).toEqual([]);
      const none = await store.fleetState('job-1', []);
      expect([...none!.final, ...none!.waiting.keys()]).toEqual([]);
      expect(await store.fleetAhead('nope')).toBe(0);
    } finally {
      await store.close?.();
      await dropPostgresSchema(schema);
    }
  }, 30_000);
});
