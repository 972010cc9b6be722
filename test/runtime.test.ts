import { describe, expect, it } from 'vitest';
import type { Prober, ProberFactory, ProberSettings } from '../src/contracts/prober.js';
import { nodeDefaults } from '../src/node-runtime.js';
import { resolveOptions } from '../src/options.js';
import { createRuntime, type PlatformDefaults } from '../src/runtime.js';
import { smtpProbing } from '../src/smtp/probing.js';
import { staticResolver } from '../src/testing/static-resolver.js';

describe('createRuntime', () => {
  it('uses the caller resolver and never closes it', async () => {
    const resolver = staticResolver({});
    let closed = 0;
    const runtime = createRuntime(
      resolveOptions({ resolver: { ...resolver, close: () => void closed++ } }),
      nodeDefaults,
      smtpProbing,
    );
    await expect(runtime.resolver.mx('example.com')).resolves.toMatchObject({ kind: 'nxdomain' });
    await runtime.close();
    expect(closed).toBe(0);
  });

  it('makes the prober on first use, once, and refuses a new one after close', async () => {
    const runtime = createRuntime(resolveOptions({ heloHost: 'probe.example' }), nodeDefaults, smtpProbing);
    expect(runtime.prober).toBe(runtime.prober);
    await runtime.close();
    const idle = createRuntime(resolveOptions(), nodeDefaults, smtpProbing);
    await idle.close();
    expect(() => idle.prober).toThrow(expect.objectContaining({ code: 'disposed' }));
  });

  it('takes each unset seam from the platform, once and only when first needed', async () => {
    const calls: string[] = [];
    const resolver = staticResolver({});
    const called =
      <T>(seam: string, value: T) =>
      () => {
        calls.push(seam);
        return value;
      };
    const platform: PlatformDefaults = {
      resolver: called('resolver', resolver),
      transport: called('transport', { connect: () => Promise.reject(new Error('no network')) }),
      heloHost: called('heloHost', 'platform.example'),
    };
    const runtime = createRuntime(resolveOptions(), platform, smtpProbing);
    expect(calls).toEqual(['transport']);
    expect(runtime.resolver).toBe(resolver);
    expect(runtime.resolver).toBe(resolver);
    expect(runtime.prober).toBe(runtime.prober);
    expect(calls).toEqual(['transport', 'resolver', 'heloHost']);
    await runtime.close();
  });

  it('calls no platform default for a seam the options give', async () => {
    const refuse = (): never => {
      throw new Error('the platform default was used');
    };
    const runtime = createRuntime(
      resolveOptions({
        resolver: staticResolver({}),
        transport: { connect: () => Promise.reject(new Error('no network')) },
        heloHost: 'given.example',
      }),
      { resolver: refuse, transport: refuse, heloHost: refuse },
      smtpProbing,
    );
    expect(runtime.prober).toBeDefined();
    await expect(runtime.resolver.mx('example.com')).resolves.toMatchObject({ kind: 'nxdomain' });
    await runtime.close();
  });

  it('makes its prober with the factory it is given, from the verifier settings, and closes it', async () => {
    const made: ProberSettings[] = [];
    let closed = 0;
    const probing: ProberFactory = {
      create(settings): Prober {
        made.push(settings);
        return {
          heloHost: settings.heloHost,
          rcpt: () => Promise.reject(new Error('no probe expected')),
          catchAll: () => Promise.reject(new Error('no probe expected')),
          stats: () => {
            throw new Error('no counters expected');
          },
          close: async () => void closed++,
        };
      },
      preload: () => Promise.resolve(),
    };
    const transport = { connect: () => Promise.reject(new Error('no network')) };
    const runtime = createRuntime(
      resolveOptions({ transport, heloHost: 'given.example', perMxConcurrency: 3, catchAllTtlMs: 1000 }),
      nodeDefaults,
      probing,
    );
    expect(made).toHaveLength(0);
    expect(runtime.prober.heloHost).toBe('given.example');
    expect(runtime.prober).toBe(runtime.prober);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      transport,
      heloHost: 'given.example',
      perMxConcurrency: 3,
      catchAllTtlMs: 1000,
    });
    await runtime.close();
    expect(closed).toBe(1);
  });
});
