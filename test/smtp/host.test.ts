import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultHeloHost } from '../../src/smtp/host.js';
import { commands } from '../../src/smtp/sanitize.js';

describe('defaultHeloHost', () => {
  it.each([
    ['Mail-Probe.Example.NET', 'mail-probe.example.net'],
    ['worker7.', 'worker7'],
    ['', 'localhost.localdomain'],
    ['bad host\r\nRCPT TO:<x@y>', 'localhost.localdomain'],
    ['under_score', 'localhost.localdomain'],
    ['-leading.example', 'localhost.localdomain'],
    ['a..b', 'localhost.localdomain'],
    [`${'a'.repeat(64)}.example`, 'localhost.localdomain'],
    ['ünï.example', 'localhost.localdomain'],
  ])('turns %j into %j', (name, expected) => {
    expect(defaultHeloHost(() => name)).toBe(expected);
  });

  it('falls back when the host name cannot be read', () => {
    expect(
      defaultHeloHost(() => {
        throw new Error('no hostname');
      }),
    ).toBe('localhost.localdomain');
  });

  it('gives a name that EHLO accepts, from this machine by default', () => {
    const name = defaultHeloHost();
    expect(commands.ehlo(name)).toBe(`EHLO ${name}`);
    if (/^[a-z0-9.-]+$/i.test(hostname())) expect(name).toBe(hostname().toLowerCase().replace(/\.$/, ''));
  });
});
