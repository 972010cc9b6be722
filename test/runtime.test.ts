import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { createRuntime } from '../src/runtime.js';
import { staticResolver } from '../src/testing/static-resolver.js';

describe('createRuntime', () => {
  it('uses the caller resolver and never closes it', async () => {
    const resolver = staticResolver({});
    let closed = 0;
    const runtime = createRuntime(resolveOptions({ resolver: { ...resolver, close: () => void closed++ } }));
    await expect(runtime.resolver.mx('example.com')).resolves.toMatchObject({ kind: 'nxdomain' });
    await runtime.close();
    expect(closed).toBe(0);
  });

  it('makes the prober on first use, once, and refuses a new one after close', async () => {
    const runtime = createRuntime(resolveOptions({ heloHost: 'probe.example' }));
    expect(runtime.prober).toBe(runtime.prober);
    await runtime.close();
    const idle = createRuntime(resolveOptions());
    await idle.close();
    expect(() => idle.prober).toThrow(expect.objectContaining({ code: 'disposed' }));
  });
});
