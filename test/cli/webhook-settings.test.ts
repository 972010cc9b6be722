import { chmod, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import { parseSecretsFile, WEBHOOK_FLAGS, webhookChoiceOf } from '../../src/cli/webhook-settings.js';
import { tempDir } from './support.js';

const A = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const B = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const C = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const LABEL = '--webhook-secrets-file';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('mailvet-webhook-settings-');
});
afterAll(async () => {
  await dir.remove();
});

const args = (argv: string[]) => parseArgs(argv, WEBHOOK_FLAGS, 'mailvet serve');

describe('parseSecretsFile', () => {
  it('reads one key a line, two secrets while rotating, skipping blank lines and comments', () => {
    const keys = parseSecretsFile(`# tenants\r\nkey-a ${A}\n\n  key-b\t${B} ${C}  \n`, LABEL, [
      'key-a',
      'key-b',
    ]);
    expect(Object.fromEntries(keys)).toEqual({ 'key-a': [A], 'key-b': [B, C] });
  });

  it.each([
    ['a key alone', 'key-a\n', 'line 1 must be "<api key> whsec_... [whsec_...]"'],
    ['a key not in MAILVET_API_KEYS', `stranger ${A}\n`, 'line 1: the key is not one of MAILVET_API_KEYS'],
    ['a key twice', `key-a ${A}\nkey-a ${B}\n`, 'line 2 repeats the key of line 1'],
    ['a secret two keys share', `key-a ${A}\nkey-b ${B} ${A}\n`, 'line 2 repeats a secret of line 1'],
    ['a malformed secret', 'key-a whsec_AAAA\n', 'line 1: its secrets entry 0 must hold 24-64 bytes'],
    ['three secrets', `key-a ${A} ${B} ${C}\n`, 'line 1: its secrets must be a list of one or two'],
  ])('refuses %s, naming the line and never the key', (_name, text, message) => {
    expect(() => parseSecretsFile(text, LABEL, ['key-a', 'key-b'])).toThrow(`${LABEL} ${message}`);
  });
});

describe('webhookChoiceOf', () => {
  it('is off without secrets, and refuses the webhook flags then', async () => {
    expect(await webhookChoiceOf(args([]), {}, ['k'], dir.path)).toBeUndefined();
    await expect(webhookChoiceOf(args(['--allow-http-webhooks']), {}, ['k'], dir.path)).rejects.toThrow(
      '--allow-http-webhooks applies only with webhooks on',
    );
    await expect(
      webhookChoiceOf(args([]), { MAILVET_WEBHOOK_ALLOW_ADDRESS: '10.0.0.0/8' }, ['k'], dir.path),
    ).rejects.toThrow('MAILVET_WEBHOOK_ALLOW_ADDRESS applies only with webhooks on');
  });

  it('gives listed keys their own secrets and the others MAILVET_WEBHOOK_SECRETS, warning when it is shared', async () => {
    await writeFile(dir.file('secrets'), `key-a ${A}\n`);
    await chmod(dir.file('secrets'), 0o600);
    const choice = await webhookChoiceOf(
      args(['--webhook-secrets-file', 'secrets', '--webhook-allow-address', '10.1.0.0/16']),
      { MAILVET_WEBHOOK_SECRETS: B, MAILVET_ALLOW_HTTP_WEBHOOKS: 'yes' },
      ['key-a', 'key-b', 'key-c'],
      dir.path,
    );
    expect(choice?.keys).toEqual({
      'key-a': { secrets: [A] },
      'key-b': { secrets: [B] },
      'key-c': { secrets: [B] },
    });
    expect(choice?.allowAddresses).toEqual(['10.1.0.0/16']);
    expect(choice?.allowHttp).toBe(true);
    expect(choice?.warnings).toEqual([
      expect.stringContaining('MAILVET_WEBHOOK_SECRETS signs the webhooks of 2 API keys alike'),
    ]);
  });

  it('warns when group or others can read the secrets file, and refuses a bad range', async () => {
    await writeFile(dir.file('open'), `key-a ${A}\n`);
    await chmod(dir.file('open'), 0o644);
    const choice = await webhookChoiceOf(
      args([]),
      { MAILVET_WEBHOOK_SECRETS_FILE: dir.file('open') },
      ['key-a'],
      dir.path,
    );
    expect(choice?.warnings).toEqual([
      `mailvet: warning: ${dir.file('open')} holds API keys and secrets and others can read it (chmod 600 it)\n`,
    ]);
    await expect(
      webhookChoiceOf(
        args(['--webhook-allow-address', '10.0.0.0/33']),
        { MAILVET_WEBHOOK_SECRETS: A },
        ['k'],
        dir.path,
      ),
    ).rejects.toThrow('--webhook-allow-address must be an IP address or a CIDR range');
  });
});
