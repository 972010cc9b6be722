/**
 * The core runs anywhere: bundled by esbuild for the `neutral` platform (no Node built-ins to resolve, no
 * `require`), it verifies addresses through fake seams (src/testing's static resolver and scripted transport),
 * SMTP probe and catch-all probe included. A core module that reached `node:*` (directly or through a module it
 * imports) would make the bundle fail.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { VerificationResult } from '../src/result.js';

const ENTRY = `
import { createVerifierWith } from './src/verifier-with.ts';
import { staticResolver } from './src/testing/static-resolver.ts';
import { scriptedTransport } from './src/testing/scripted-channel.ts';

export async function run() {
  const resolver = staticResolver({
    'shop.test': { mx: [{ priority: 10, exchange: 'mx.shop.test' }] },
    'mx.shop.test': { a: ['192.0.2.10'] },
  });
  // Jane's mailbox exists; every other one (the catch-all probe's random name included) does not.
  const transport = scriptedTransport(() => ({
    respond: (command) =>
      command.startsWith('RCPT') ? (command.includes('<jane@') ? '250 2.1.5 ok' : '550 5.1.1 no such user') : happy(command),
  }));
  const platform = {
    resolver: () => { throw new Error('the platform resolver was used'); },
    transport: () => { throw new Error('the platform transport was used'); },
    heloHost: () => 'core.example.net',
  };
  const verifier = createVerifierWith(platform, {
    resolver, transport, allowTlds: ['test'], allowAddresses: ['192.0.2.0/24'], mailFrom: 'probe@example.net',
  });
  try {
    return [await verifier.verify('jane@shop.test'), await verifier.verify('nobody@shop.test'), await verifier.verify('not an address')];
  } finally {
    await verifier.dispose();
  }
}
function happy(command) {
  const verb = command.split(/[ :]/, 1)[0].toUpperCase();
  if (verb === 'EHLO') return ['250-mx.shop.test', '250 PIPELINING'];
  if (verb === 'QUIT') return '221 2.0.0 bye';
  return '250 2.1.0 ok';
}
`;

describe('the core, bundled for a neutral platform', () => {
  it('bundles without Node built-ins and verifies through fake seams', async () => {
    const bundle = await build({
      stdin: { contents: ENTRY, resolveDir: process.cwd(), loader: 'ts', sourcefile: 'core-entry.ts' },
      bundle: true,
      platform: 'neutral',
      format: 'esm',
      target: 'es2022',
      mainFields: ['module', 'main'],
      conditions: ['import', 'default'],
      write: false,
      logLevel: 'silent',
    });
    const code = bundle.outputFiles[0]!.text;
    expect(code).not.toMatch(/\bfrom\s*["']node:|\brequire\(/);
    const url = `data:text/javascript;base64,${Buffer.from(code).toString('base64')}`;
    const { run } = (await import(/* @vite-ignore */ url)) as { run: () => Promise<VerificationResult[]> };
    const [jane, nobody, bad] = await run();
    expect(jane).toMatchObject({ status: 'valid', mx_record: 'mx.shop.test' });
    expect(nobody).toMatchObject({ status: 'invalid', sub_status: 'mailbox_not_found' });
    expect(bad).toMatchObject({ status: 'invalid' });
  });
});
