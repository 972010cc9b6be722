import { describe, expect, it } from 'vitest';
import type { ConsoleFiles } from '../../src/http/console.js';
import { createHandlerWith, type HttpPlatform } from '../../src/http/handler-core.js';
import { resolveLimits } from '../../src/http/limits.js';
import { DEFAULT_LIMITS } from '../../src/http/node-runtime.js';
import { fakeVerifier, jsonAuth, KEY_A } from './support.js';

const FILES: ConsoleFiles = {
  index: '<!doctype html><title>in memory</title>',
  assets: new Map([['app-X1.js', 'void 0']]),
};

/** A platform that is not Node's: its console in memory, three addresses a key, and the directories it was asked for. */
function platform(): HttpPlatform & { asked: (string | undefined)[] } {
  const asked: (string | undefined)[] = [];
  return {
    asked,
    limits: resolveLimits({ maxAddressesPerKey: 3 }, DEFAULT_LIMITS),
    readConsole(dir) {
      asked.push(dir);
      return FILES;
    },
  };
}

describe('createHandlerWith: the handler on a platform of its own', () => {
  it("serves the platform's console and applies its default limits", async () => {
    const given = platform();
    const handler = createHandlerWith(given, { apiKeys: [KEY_A], verifier: fakeVerifier() });
    try {
      const page = await handler(new Request('http://localhost/'));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>in memory</title>');
      expect((await handler(new Request('http://localhost/console/assets/app-X1.js'))).status).toBe(200);
      expect(given.asked).toEqual([undefined]); // read once, from the platform's own place

      const tooMany = await handler(
        new Request('http://localhost/v1/bulk', {
          method: 'POST',
          headers: jsonAuth(KEY_A),
          body: JSON.stringify({ emails: ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test'] }),
        }),
      );
      expect(tooMany.status).toBe(429);
      expect(JSON.stringify(await tooMany.json())).toContain('at most 3 addresses held per API key');
    } finally {
      await handler.close();
    }
  });

  it('asks the platform for `console.dir`, and not at all with console: false', async () => {
    const given = platform();
    const elsewhere = createHandlerWith(given, {
      apiKeys: [KEY_A],
      verifier: fakeVerifier(),
      console: { dir: '/opt/console' },
    });
    const off = createHandlerWith(given, { apiKeys: [KEY_A], verifier: fakeVerifier(), console: false });
    try {
      expect(given.asked).toEqual(['/opt/console']);
      expect((await off(new Request('http://localhost/'))).status).toBe(404);
    } finally {
      await elsewhere.close();
      await off.close();
    }
  });
});
