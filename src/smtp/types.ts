/**
 * The transport seam's interfaces (`Transport`, `Connection`, `SmtpReply`, `TlsPolicy`, ...), declared in the core
 * at `src/contracts/smtp.ts` and re-exported here beside their implementations.
 * @module
 */
export * from '../contracts/smtp.js';
