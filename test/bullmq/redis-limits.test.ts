import { describe } from 'vitest';
import { redisLimits } from '../../src/bullmq/redis-limits.js';
import { limitStoreContract } from '../../src/testing/usage-contract.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

describe.skipIf(REDIS_URL === undefined)('on Redis', () => {
  limitStoreContract('redisLimits', async () => {
    const prefix = testPrefix();
    const store = await redisLimits({ connection: REDIS_URL!, prefix });
    const other = await redisLimits({ connection: REDIS_URL!, prefix });
    return {
      store,
      other,
      async close() {
        await store.close();
        await other.close();
        await deletePrefix(prefix);
      },
    };
  });
});
