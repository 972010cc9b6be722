import { memoryUsageStore } from '../../src/bulk/usage-memory.js';
import { limitStoreContract, usageStoreContract } from '../../src/testing/usage-contract.js';

usageStoreContract('memoryUsageStore', () => ({ store: memoryUsageStore() }));
limitStoreContract('memoryUsageStore', () => ({ store: memoryUsageStore() }));
