/**
 * The records, results and source rows the {@link jobStoreContract} suite stores: hostile cells, unicode and a
 * 60,000-character row included.
 * @module
 */
import type { JobRecord } from '../bulk/types.js';
import type { VerificationResult } from '../result.js';

/** A job record with the contract's defaults and `patch` over them. */
export function record(id: string, patch: Partial<JobRecord> = {}): JobRecord {
  return {
    id,
    owner: null,
    name: null,
    status: 'processing',
    total: 0,
    completed: 0,
    counts: { valid: 0, invalid: 0, catch_all: 0, unknown: 0, do_not_mail: 0 },
    createdAt: 1_700_000_000_000,
    startedAt: 1_700_000_000_000,
    completedAt: null,
    error: null,
    greylistDelaysMs: [60_000, 300_000],
    ...patch,
  };
}

/** A result for `email` with the contract's defaults and `patch` over them. */
export function result(email: string, patch: Partial<VerificationResult> = {}): VerificationResult {
  const at = email.lastIndexOf('@');
  const user = at > 0 ? email.slice(0, at) : null;
  const domain = at > 0 ? email.slice(at + 1).toLowerCase() : null;
  return {
    email,
    normalized: user !== null && domain !== null ? `${user}@${domain}` : null,
    user,
    domain,
    status: 'valid',
    sub_status: null,
    score: 100,
    disposable: false,
    role: false,
    free: false,
    accept_all: false,
    did_you_mean: null,
    mx_record: domain === null ? null : `mx.${domain}`,
    smtp_provider: null,
    ...patch,
  };
}

/** A source header and rows as the manager stores them (CSV lines), hostile cells included. */
export const SOURCE = { columns: ['id', '', 'email', 'email', 'note "quoted"'], emailColumn: 2 };
/** Source rows (CSV lines) of {@link SOURCE}. */
export const ROWS = [
  '1,,r0@x.test,dup,"<img src=x onerror=alert(1)>"',
  '2,,r1@x.test,,"a ""quote"", a comma, and\r\na line break"',
  '3,=cmd(),r2@x.test,,用户 🎉',
  `4,,r3@x.test,,${'w'.repeat(60_000)}`,
];

/** Whether `run` throws or rejects. */
export async function rejects(run: () => unknown): Promise<boolean> {
  try {
    await run();
    return false;
  } catch {
    return true;
  }
}
