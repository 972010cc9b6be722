/**
 * The DNS seam's interfaces (`Resolver`, `MxRecord`, `DnsAnswer`, `DnsError`, ...), declared in the core at
 * `src/contracts/dns.ts` and re-exported here beside their implementations.
 * @module
 */
export * from '../contracts/dns.js';
