/**
 * `mailvet/testing`: fakes of the seams and the contract suites every implementation runs.
 *
 * The contract suites (`resolverContract`, `transportContract`, `jobStoreContract`,
 * `usageStoreContract`, `limitStoreContract`, `knownResultsContract`) are vitest suites: call
 * them from a test file of your own implementation. The fakes (`staticResolver`, `scriptedTransport`,
 * `scriptedChannel`) need no network and suit unit tests of code built on mailvet.
 * @module
 */
export { type JobStoreFixture, jobStoreContract } from './job-store-contract.js';
export {
  type ContractClock,
  type KnownResultsFixture,
  knownResultsContract,
} from './known-results-contract.js';
export { CONTRACT_ZONE, type ResolverFixture, resolverContract } from './resolver-contract.js';
export {
  happyReply,
  type ScriptedChannel,
  type ScriptedTransport,
  type SmtpScript,
  scriptedChannel,
  scriptedTransport,
} from './scripted-channel.js';
export {
  type StaticLookup,
  type StaticResolver,
  type StaticResolverOptions,
  staticResolver,
} from './static-resolver.js';
export { type TransportContractOptions, transportContract } from './transport-contract.js';
export {
  limitStoreContract,
  type UsageFixture,
  usageStoreContract,
} from './usage-contract.js';
export type { Zone, ZoneEntry, ZoneFailure, ZoneRecordType } from './zone.js';
