import { describe, expect, it } from 'vitest';
import { reasonWords, signInFailureWords } from '../../src/console/words.js';

describe('the console speaks words', () => {
  it('turns a syntax failure reason into a sentence and keeps its code apart', () => {
    expect(reasonWords('no_at_sign: the address has no @', 'failed_syntax_check')).toEqual({
      words: 'The address has no @.',
      code: 'no_at_sign',
    });
    expect(
      reasonWords('too_long: the address is longer than 254 octets (RFC 5321)', 'failed_syntax_check'),
    ).toEqual({ words: 'The address is longer than 254 octets (RFC 5321)', code: 'too_long' });
  });

  it('leaves other reasons as the server wrote them', () => {
    const smtp = 'mx.good.test [127.0.0.2] answered RCPT TO with 550 5.1.1 no such user';
    expect(reasonWords(smtp, 'mailbox_not_found')).toEqual({ words: smtp, code: null });
    expect(reasonWords('dns_error: odd', 'dns_error')).toEqual({ words: 'dns_error: odd', code: null });
  });

  it('says what a failed sign-in means for a person', () => {
    const api = { message: 'a valid API key is required (Authorization: Bearer <key>)' };
    expect(signInFailureWords({ ...api, status: 401 })).not.toContain('Authorization');
    expect(signInFailureWords({ ...api, status: 401 })).toContain('API key was not accepted');
    expect(signInFailureWords({ message: 'the server cannot be reached', status: 0 })).toContain(
      'cannot be reached',
    );
    expect(signInFailureWords({ message: 'boom', status: 500 })).toBe('boom');
  });
});
