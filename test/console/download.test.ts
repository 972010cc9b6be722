import { describe, expect, it } from 'vitest';
import { downloadName } from '../../src/console/download.js';

describe('the name of a download', () => {
  it("is the uploaded file's name with -verified", () => {
    expect(downloadName({ id: 'abc', name: 'contacts.csv' }, 'csv')).toBe('contacts-verified.csv');
    expect(downloadName({ id: 'abc', name: 'Leads 2026.TXT' }, 'ndjson')).toBe('Leads 2026-verified.ndjson');
    expect(downloadName({ id: 'abc', name: 'contacts.csv' }, 'csv', true)).toBe(
      'contacts-verified-partial.csv',
    );
  });

  it('falls back to the job name, then the id, and never holds a path or a control character', () => {
    expect(downloadName({ id: 'abc', name: 'spring signups' }, 'csv')).toBe('spring signups-verified.csv');
    expect(downloadName({ id: 'abc', name: '' }, 'csv')).toBe('mailvet-abc-verified.csv');
    expect(downloadName({ id: 'abc', name: '../../etc/passwd\n' }, 'csv')).toBe(
      '_.._etc_passwd_-verified.csv',
    );
    expect(downloadName({ id: 'abc', name: '...' }, 'csv')).toBe('mailvet-abc-verified.csv');
    expect(downloadName({ id: 'abc', name: 'x'.repeat(500) }, 'csv')).toHaveLength(
      120 + '-verified.csv'.length,
    );
  });
});
