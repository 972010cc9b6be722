/**
 * Shared helpers of the HTTP tests: a deterministic verifier and request builders.
 * @module
 */
import type { VerifyOptions } from '../../src/options.js';
import type { VerificationResult } from '../../src/result.js';
import type { Verifier } from '../../src/verifier.js';

/** A verifier that answers from the address alone and records the overrides it got. */
export interface FakeVerifier extends Pick<Verifier, 'verify'> {
  readonly calls: { email: string; overrides: VerifyOptions | undefined }[];
}

/**
 * `bad@...` and anything without `@` are invalid, `boom@...` throws (an engine bug), the rest valid.
 * With `gate`, every verification waits for it.
 */
export function fakeVerifier(gate?: Promise<void>): FakeVerifier {
  const calls: FakeVerifier['calls'] = [];
  return {
    calls,
    async verify(email, overrides) {
      calls.push({ email, overrides });
      if (gate !== undefined) await gate;
      const trimmed = email.trim();
      const at = trimmed.lastIndexOf('@');
      const user = at > 0 ? trimmed.slice(0, at) : null;
      const domain = at > 0 ? trimmed.slice(at + 1).toLowerCase() : null;
      if (user === 'boom') throw new Error('secret internal detail: db password is hunter2');
      const valid = user !== null && user !== 'bad';
      const result: VerificationResult = {
        email: trimmed,
        normalized: valid ? `${user}@${domain}` : null,
        user,
        domain,
        status: valid ? 'valid' : 'invalid',
        sub_status: valid ? null : 'failed_syntax_check',
        score: valid ? 100 : 0,
        disposable: false,
        role: false,
        free: false,
        accept_all: false,
        did_you_mean: null,
        mx_record: valid ? `mx.${domain}` : null,
        smtp_provider: null,
      };
      return result;
    },
  };
}

/** The key of tenant A and of tenant B in the tests. */
export const KEY_A = 'test-key-a';
export const KEY_B = 'test-key-b';

/** Headers with a bearer key, plus `extra`. */
export function auth(key: string = KEY_A, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${key}`, ...extra };
}

/** Headers of a JSON POST with a bearer key. */
export function jsonAuth(key: string = KEY_A): Record<string, string> {
  return auth(key, { 'content-type': 'application/json' });
}

/** `count` distinct addresses over `domains` domains, unicode ones included. */
export function addresses(count: number, domains = 50): string[] {
  return Array.from({ length: count }, (_, i) =>
    i % 7 === 3 ? `用户${i}@例子${i % domains}.广告` : `user${i}@d${i % domains}.example`,
  );
}
