import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { disposableDomains, isDisposableDomain } from '../../src/data/disposable.js';
import { freeDomains, isFreeDomain } from '../../src/data/free.js';
import * as disposableData from '../../src/data/generated/disposable.js';
import * as freeData from '../../src/data/generated/free.js';
import * as roleData from '../../src/data/generated/role.js';
import * as typoGenerated from '../../src/data/generated/typo.js';
import { inSortedLines } from '../../src/data/lookup.js';
import { isRoleLocalPart, normalizeRoleLocalPart, roleNames } from '../../src/data/role.js';
import { LIST_SOURCES } from '../../src/data/sources.js';
import { typoData } from '../../src/data/typo.js';
import { osaDistance } from '../../src/typo/distance.js';

const root = new URL('../../', import.meta.url);
const lines = (text: string) => (text === '' ? [] : text.split('\n'));
const installed = (name: string): string =>
  JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, root), 'utf8')).version;

describe('generated lists', () => {
  it('are up to date with their sources (npm run data is deterministic)', () => {
    const output = execFileSync(process.execPath, ['scripts/generate-data.js', '--check'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(output).toContain('up to date');
  });

  it('record source, version, date and count', () => {
    expect(LIST_SOURCES.disposable.sources[0]).toMatchObject({
      name: 'mailchecker',
      version: installed('mailchecker'),
    });
    expect(LIST_SOURCES.free.sources[0]).toMatchObject({
      name: 'email-providers',
      version: installed('email-providers'),
    });
    for (const meta of Object.values(LIST_SOURCES)) {
      expect(meta.sources.length).toBeGreaterThan(0);
      for (const source of meta.sources) {
        expect(source.date, `${meta.list} ${source.name}`).toMatch(/^20\d\d-\d\d-\d\d$/);
        expect(source.version).not.toBe('');
      }
    }
    const disposableCount = lines(disposableData.domains).length + lines(disposableData.exactDomains).length;
    expect(disposableData.meta.count).toBe(disposableCount);
    expect(freeData.meta.count).toBe(lines(freeData.domains).length);
    expect(roleData.meta.count).toBe(lines(roleData.names).length);
    expect(typoGenerated.meta.count).toBe(typoData().domains.length);
  });

  it('are the sizes the issue asks for: tens of thousands disposable, thousands free', () => {
    expect(LIST_SOURCES.disposable.count).toBeGreaterThan(20_000);
    expect(LIST_SOURCES.free.count).toBeGreaterThan(2_000);
    expect(LIST_SOURCES.role.count).toBeGreaterThan(50);
  });

  it('are sorted, unique, lower-case ASCII domains', () => {
    for (const text of [disposableData.domains, disposableData.exactDomains, freeData.domains]) {
      const entries = lines(text);
      expect(entries).toEqual([...new Set(entries)].sort());
      expect(entries.filter((entry) => !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(entry))).toEqual([]);
    }
  });

  it('are sorted as the binary search of their lookups needs: it finds every entry', () => {
    for (const text of [
      disposableData.domains,
      disposableData.exactDomains,
      freeData.domains,
      roleData.names,
    ]) {
      expect(lines(text).filter((entry) => !inSortedLines(text, entry))).toEqual([]);
    }
  });

  it('keep mainstream providers out of the disposable list', () => {
    const disposable = disposableDomains();
    for (const domain of typoData().domains) expect(disposable.matches(domain), domain).toBe(false);
    expect(lines(freeData.domains).filter((domain) => disposable.matches(domain))).toEqual([]);
    // Upstream lists these; the documented exceptions take them out.
    for (const domain of ['tom.com', 'consultant.com', 'keemail.me', 'nus.edu.sg', 'sdf.org']) {
      expect(isDisposableDomain(domain), domain).toBe(false);
    }
  });

  it('count every popular domain as free, and no typo-squat or reserved name', () => {
    const free = freeDomains();
    for (const domain of typoData().domains) expect(free.has(domain), domain).toBe(true);
    for (const domain of ['gmail.co', 'yahoo.om', 'gmail.com.com', 'hotmail.con', 'example.com']) {
      expect(free.has(domain), domain).toBe(false);
    }
  });

  it('hold no free provider one edit from a top provider beyond the reviewed real ones', () => {
    // A new upstream entry here is either a typo-squat (add it to scripts/sources/typo-squats.txt, so that
    // it is corrected) or a real provider (add it to this list): review it, as it is never corrected.
    const reviewed = ['email.com', 'mail.com', 'ymail.com', 'love.com'];
    const top = typoData().domains.slice(0, 12);
    const near = lines(freeData.domains).filter((domain) =>
      top.some((popular) => popular !== domain && osaDistance(domain, popular, 1) <= 1),
    );
    expect(near.sort()).toEqual(reviewed.sort());
  });

  it('store role names normalised', () => {
    for (const name of lines(roleData.names)) expect(normalizeRoleLocalPart(name)).toBe(name);
    expect(roleNames().has('noreply')).toBe(true);
    expect(roleNames().has('no-reply')).toBe(false);
  });
});

describe('public helpers', () => {
  it('isDisposableDomain normalises its input and takes a patch', () => {
    expect(isDisposableDomain('Mailinator.COM.')).toBe(true);
    expect(isDisposableDomain('x.mailinator.com')).toBe(true);
    expect(isDisposableDomain('mailinator.com', { remove: ['mailinator.com'] })).toBe(false);
    expect(isDisposableDomain('gmail.com')).toBe(false);
  });

  it('isFreeDomain normalises its input and takes a patch', () => {
    expect(isFreeDomain('GMAIL.com')).toBe(true);
    expect(isFreeDomain('gmail.com', ['outlook.com'])).toBe(false);
    expect(isFreeDomain('corp.example', { add: ['corp.example'] })).toBe(true);
  });

  it('isRoleLocalPart and normalizeRoleLocalPart', () => {
    expect(normalizeRoleLocalPart('Customer.Service+2024')).toBe('customerservice');
    expect(normalizeRoleLocalPart('+info')).toBe('');
    expect(normalizeRoleLocalPart('no_re-ply.')).toBe('noreply');
    expect(isRoleLocalPart('no_reply+alerts')).toBe(true);
    expect(isRoleLocalPart('jane.doe')).toBe(false);
    expect(isRoleLocalPart('jane', ['jane'])).toBe(true);
  });
});
