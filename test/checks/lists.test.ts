import { describe, expect, it } from 'vitest';
import { listsCheck } from '../../src/checks/lists.js';
import { createCheckState } from '../../src/checks/state.js';
import type { AddressParts, CheckState } from '../../src/checks/types.js';
import { type ListOptions, resolveOptions, type VerifyOptions } from '../../src/options.js';
import type { Verdict } from '../../src/result.js';
import type { VerifierRuntime } from '../../src/runtime.js';

/** The lists check is offline: any use of the runtime (resolver, transport, clock) fails the test. */
const NO_RUNTIME = new Proxy(
  {},
  {
    get(_, key) {
      throw new Error(`the lists check must not use runtime.${String(key)}`);
    },
  },
) as VerifierRuntime;

function addressOf(email: string, unicodeDomain?: string): AddressParts {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1).toLowerCase();
  return {
    local: email.slice(0, at),
    domain,
    unicodeDomain: unicodeDomain ?? domain,
    normalized: email,
    smtpUtf8: false,
    literalAddress: /^\[(.*)\]$/.exec(domain)?.[1] ?? null,
  };
}

function stateFor(address: AddressParts | null, options: VerifyOptions = {}): CheckState {
  const resolved = resolveOptions({ dns: false, smtp: false, ...options });
  return {
    ...createCheckState(address?.normalized ?? 'not an address', resolved, NO_RUNTIME, 0),
    address,
    user: address?.local ?? null,
    domain: address?.domain ?? null,
  };
}

function check(email: string, options: VerifyOptions = {}, unicodeDomain?: string) {
  const state = stateFor(addressOf(email, unicodeDomain), options);
  const verdict = listsCheck.run(state) as Verdict | undefined;
  const { allowlisted, disposable, role, free } = state;
  return {
    verdict: verdict?.sub_status ?? null,
    status: verdict?.status ?? null,
    allowlisted,
    disposable,
    role,
    free,
  };
}

const FLAGS_OFF = { allowlisted: false, disposable: false, role: false, free: false };

describe('listsCheck', () => {
  it('is named lists and does nothing for an address that failed the syntax check', () => {
    expect(listsCheck.name).toBe('lists');
    const state = stateFor(null, { blocklist: ['example.com'] });
    expect(listsCheck.run(state)).toBeUndefined();
    expect(state).toMatchObject(FLAGS_OFF);
  });

  it('passes an ordinary address with every flag off', () => {
    expect(check('jane.doe@example.com')).toEqual({ verdict: null, status: null, ...FLAGS_OFF });
  });

  describe('disposable', () => {
    it('gives do_not_mail/disposable for a listed domain', () => {
      expect(check('jane@mailinator.com')).toMatchObject({
        verdict: 'disposable',
        status: 'do_not_mail',
        disposable: true,
      });
      expect(check('jane@yopmail.com')).toMatchObject({ verdict: 'disposable' });
    });

    it('matches subdomains of a listed domain', () => {
      expect(check('jane@inbox.mailinator.com')).toMatchObject({ verdict: 'disposable', disposable: true });
      expect(check('jane@a.b.c.yopmail.com')).toMatchObject({ verdict: 'disposable' });
    });

    it('does not match a domain that merely ends like a listed one', () => {
      expect(check('jane@notyopmail.com')).toMatchObject({ verdict: null, disposable: false });
    });

    it('matches a listed public suffix (a dynamic-DNS service) only exactly', () => {
      expect(check('jane@ddns.net')).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@my-company.ddns.net')).toMatchObject({ verdict: null, disposable: false });
      expect(check('jane@pp.ua')).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@shop.pp.ua')).toMatchObject({ verdict: null });
    });

    it('never makes a mainstream provider disposable', () => {
      for (const domain of [
        'gmail.com',
        'outlook.com',
        'yahoo.com',
        'icloud.com',
        'proton.me',
        'gmx.de',
        'tom.com',
      ]) {
        expect(check(`jane@${domain}`), domain).toMatchObject({
          verdict: null,
          disposable: false,
          free: true,
        });
      }
    });
  });

  describe('free', () => {
    it('flags consumer providers without a verdict', () => {
      expect(check('jane@gmail.com')).toEqual({ verdict: null, status: null, ...FLAGS_OFF, free: true });
      expect(check('jane@web.de')).toMatchObject({ free: true });
    });

    it('matches only the provider domain itself', () => {
      expect(check('jane@corp.gmail.com')).toMatchObject({ free: false });
    });

    it('does not count disposable or typo-squatted domains as free', () => {
      expect(check('jane@mailinator.com')).toMatchObject({ free: false });
      expect(check('jane@gmail.co')).toMatchObject({ free: false });
    });
  });

  describe('role', () => {
    it('flags role local parts without a verdict by default', () => {
      expect(check('info@example.com')).toEqual({ verdict: null, status: null, ...FLAGS_OFF, role: true });
      expect(check('postmaster@example.com')).toMatchObject({ role: true });
    });

    it('ignores case, a +tag and the separators - _ .', () => {
      for (const local of [
        'noreply',
        'no-reply',
        'no_reply',
        'no.reply',
        'No-Reply',
        'NOREPLY+alerts',
        'n-o_r.eply',
      ]) {
        expect(check(`${local}@example.com`), local).toMatchObject({ role: true });
      }
      expect(check('Sales+EU@example.com')).toMatchObject({ role: true });
      expect(check('customer.service@example.com')).toMatchObject({ role: true });
    });

    it('does not flag people or near misses', () => {
      for (const local of ['jane', 'info2', 'salesman', 'jane.info', '+info', 'noreplyplease']) {
        expect(check(`${local}@example.com`), local).toMatchObject({ role: false });
      }
    });

    it('gives do_not_mail/role_based only with roleIsDoNotMail', () => {
      expect(check('support@example.com', { roleIsDoNotMail: true })).toMatchObject({
        verdict: 'role_based',
        status: 'do_not_mail',
        role: true,
      });
      expect(check('jane@example.com', { roleIsDoNotMail: true })).toMatchObject({ verdict: null });
    });
  });

  describe('blocklist and allowlist', () => {
    it('blocks listed addresses, case-insensitively', () => {
      expect(check('Jane@Example.com', { blocklist: ['jane@example.com'] })).toMatchObject({
        verdict: 'blocklisted',
        status: 'do_not_mail',
      });
      expect(check('john@example.com', { blocklist: ['jane@example.com'] })).toMatchObject({ verdict: null });
    });

    it('blocks listed domains and their subdomains', () => {
      const blocklist = ['Example.COM'];
      expect(check('jane@example.com', { blocklist })).toMatchObject({ verdict: 'blocklisted' });
      expect(check('jane@mail.example.com', { blocklist })).toMatchObject({ verdict: 'blocklisted' });
      expect(check('jane@badexample.com', { blocklist })).toMatchObject({ verdict: null });
      expect(check('jane@example.com.evil.test', { blocklist })).toMatchObject({ verdict: null });
      expect(check('jane@example.com', { blocklist: ['@example.com'] })).toMatchObject({
        verdict: 'blocklisted',
      });
      expect(check('jane@sub.example.com', { blocklist: ['.example.com'] })).toMatchObject({
        verdict: 'blocklisted',
      });
    });

    it('matches entries written in Unicode against an IDN domain', () => {
      const email = 'jane@xn--bcher-kva.example';
      expect(check(email, { blocklist: ['bücher.example'] }, 'bücher.example')).toMatchObject({
        verdict: 'blocklisted',
      });
      expect(check(email, { blocklist: ['jane@bücher.example'] }, 'bücher.example')).toMatchObject({
        verdict: 'blocklisted',
      });
      expect(check(email, { blocklist: ['xn--bcher-kva.example'] }, 'bücher.example')).toMatchObject({
        verdict: 'blocklisted',
      });
    });

    it('matches a domain literal exactly', () => {
      const options = { allowDomainLiteral: true, blocklist: ['[192.0.2.1]'] };
      expect(check('jane@[192.0.2.1]', options)).toMatchObject({
        verdict: 'blocklisted',
        disposable: false,
        free: false,
      });
      expect(check('jane@[192.0.2.1]', { allowDomainLiteral: true, blocklist: ['192.0.2.1'] })).toMatchObject(
        {
          verdict: 'blocklisted',
        },
      );
      expect(check('jane@[192.0.2.10]', options)).toMatchObject({ verdict: null });
    });

    it('gives the blocklist precedence over the disposable and role verdicts', () => {
      expect(check('info@mailinator.com', { blocklist: ['mailinator.com'], roleIsDoNotMail: true })).toEqual({
        verdict: 'blocklisted',
        status: 'do_not_mail',
        allowlisted: false,
        disposable: true,
        role: true,
        free: false,
      });
    });

    it('lets the allowlist cancel every do_not_mail verdict but keeps the flags', () => {
      const options = {
        blocklist: ['mailinator.com'],
        allowlist: ['info@mailinator.com'],
        roleIsDoNotMail: true,
      };
      expect(check('info@mailinator.com', options)).toEqual({
        verdict: null,
        status: null,
        allowlisted: true,
        disposable: true,
        role: true,
        free: false,
      });
      expect(check('sales@mailinator.com', options)).toMatchObject({
        verdict: 'blocklisted',
        allowlisted: false,
      });
      expect(check('jane@sub.yopmail.com', { allowlist: ['yopmail.com'] })).toMatchObject({
        verdict: null,
        allowlisted: true,
        disposable: true,
      });
    });
  });

  describe('list patches (lists option)', () => {
    it('an array replaces a list', () => {
      const lists: ListOptions = {
        disposable: ['throwaway.example'],
        free: ['webmail.example'],
        role: ['crew'],
      };
      expect(check('jane@mailinator.com', { lists })).toMatchObject({ verdict: null, disposable: false });
      expect(check('jane@x.throwaway.example', { lists })).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@gmail.com', { lists })).toMatchObject({ free: false });
      expect(check('jane@webmail.example', { lists })).toMatchObject({ free: true });
      expect(check('info@example.com', { lists })).toMatchObject({ role: false });
      expect(check('crew@example.com', { lists })).toMatchObject({ role: true });
    });

    it('an empty array empties a list', () => {
      expect(check('jane@ddns.net', { lists: { disposable: [] } })).toMatchObject({ verdict: null });
      expect(check('info@example.com', { lists: { role: [] } })).toMatchObject({ role: false });
    });

    it('{ add, remove } edits a list, normalising the entries', () => {
      const lists: ListOptions = {
        disposable: { add: ['@Throwaway.Example.'], remove: ['mailinator.com', 'ddns.net'] },
        free: { add: ['WebMail.example'], remove: ['gmail.com'] },
        role: { add: ['Crew-Desk'], remove: ['info'] },
      };
      expect(check('jane@throwaway.example', { lists })).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@sub.throwaway.example', { lists })).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@mailinator.com', { lists })).toMatchObject({ verdict: null, disposable: false });
      expect(check('jane@ddns.net', { lists })).toMatchObject({ verdict: null });
      expect(check('jane@yopmail.com', { lists })).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@webmail.example', { lists })).toMatchObject({ free: true });
      expect(check('jane@gmail.com', { lists })).toMatchObject({ free: false });
      expect(check('jane@yahoo.com', { lists })).toMatchObject({ free: true });
      expect(check('crew_desk@example.com', { lists })).toMatchObject({ role: true });
      expect(check('info@example.com', { lists })).toMatchObject({ role: false });
      expect(check('sales@example.com', { lists })).toMatchObject({ role: true });
    });

    it('an entry both added and removed stays on the list', () => {
      const lists: ListOptions = { role: { add: ['info'], remove: ['info'] } };
      expect(check('info@example.com', { lists })).toMatchObject({ role: true });
    });

    it('removing a parent domain takes its subdomains off too', () => {
      expect(
        check('jane@inbox.mailinator.com', { lists: { disposable: { remove: ['mailinator.com'] } } }),
      ).toMatchObject({
        verdict: null,
      });
    });

    it('gives the same answer when the same patch object is used again', () => {
      const lists: ListOptions = { disposable: { add: ['throwaway.example'] } };
      expect(check('jane@throwaway.example', { lists })).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@throwaway.example', { lists })).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@example.org', { lists })).toMatchObject({ verdict: null });
    });
  });

  describe('hostile input', () => {
    it('treats object-prototype names as ordinary strings', () => {
      for (const local of ['__proto__', 'constructor', 'hasOwnProperty', 'toString']) {
        expect(check(`${local}@example.com`), local).toMatchObject({ verdict: null, role: false });
      }
      expect(check('jane@__proto__.com')).toMatchObject({ verdict: null, disposable: false, free: false });
      expect(check('jane@constructor')).toMatchObject({ verdict: null });
    });

    it('handles unicode local parts and domains', () => {
      expect(check('ｉｎｆｏ@example.com')).toMatchObject({ role: false });
      expect(check('INFO@bücher.example')).toMatchObject({ role: true });
      // müll.email is on the list in its ASCII form.
      expect(check('jane@xn--mll-hoa.email', {}, 'müll.email')).toMatchObject({ verdict: 'disposable' });
      expect(check('jane@xn--bcher-kva.example', {}, 'bücher.example')).toMatchObject({ verdict: null });
      expect(check('\u202eofni@example.com')).toMatchObject({ role: false });
    });

    it('handles oversized local parts and domains', () => {
      const label = 'a'.repeat(63);
      const domain = `${Array.from({ length: 200 }, () => label).join('.')}.mailinator.com`;
      expect(check(`jane@${domain}`)).toMatchObject({ verdict: 'disposable' });
      expect(check(`${'no-reply'.repeat(10_000)}@example.com`)).toMatchObject({ role: false });
      expect(check(`${'-'.repeat(10_000)}info@example.com`)).toMatchObject({ role: true });
    });
  });
});
