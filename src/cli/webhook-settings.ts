/**
 * The webhook settings of `mailvet serve`: the signing secrets of each API key (`--webhook-secrets-file`, and
 * `MAILVET_WEBHOOK_SECRETS` for the keys the file does not list; a stored key's own is in the job store, set by
 * `mailvet keys`), the ranges webhooks may reach
 * (`--webhook-allow-address`) and `http:` receivers (`--allow-http-webhooks`).
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isMailvetError } from '../errors.js';
import { checkSecrets } from '../webhooks/sign.js';
import type { WebhookSettingNames } from '../webhooks/target.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { cidr, type Env, many, single, switched } from './config.js';
import { CliError, EXIT, usageError } from './io.js';

/** The webhook flags of `mailvet serve`. */
export const WEBHOOK_FLAGS: readonly FlagSpec[] = [
  {
    name: 'webhook-secrets-file',
    type: 'string',
    value: '<file>',
    description: 'webhook signing secrets per API key, one "<api key> whsec_... [whsec_...]" a line',
  },
  {
    name: 'webhook-allow-address',
    type: 'string',
    value: '<cidr>',
    multiple: true,
    description: 'let webhooks reach this non-public range (--allow-address opens SMTP only)',
  },
  { name: 'allow-http-webhooks', type: 'boolean', description: 'accept http: webhook URLs, not only https:' },
];

/** How the server's refusals name the settings that would allow a URL: these flags. */
export const WEBHOOK_FLAG_NAMES: WebhookSettingNames = Object.freeze({
  allowAddresses: '--webhook-allow-address',
  allowHttpWebhooks: '--allow-http-webhooks',
});

/** The webhook settings read from flags, environment and the secrets file. */
export interface WebhookChoice {
  /**
   * Signing secrets by key of `MAILVET_API_KEYS`; a key without an entry cannot ask for webhooks. Stored keys
   * are not listed: the server reads their secrets from the job store.
   */
  readonly keys: Readonly<Record<string, { readonly secrets: readonly string[] }>>;
  readonly allowAddresses: readonly string[];
  readonly allowHttp: boolean;
  /** Lines for standard error (one secret shared by several keys, a secrets file others can read). */
  readonly warnings: readonly string[];
}

/** Most lines read from a secrets file (one per API key). */
const MAX_SECRET_LINES = 100_000;

function secretsError(error: unknown, label: string): never {
  if (isMailvetError(error)) throw usageError(`${label} ${error.message.replace(/^\S+ /, '')}`);
  throw error;
}

/**
 * Parses the text of a secrets file: one `<api key> <whsec_...> [<whsec_...>]` a line (two secrets while
 * rotating), blank lines and `#` comments ignored. Every key must be one of `apiKeys`, once; no secret may
 * serve two keys (a shared secret lets one tenant sign events another tenant's receiver accepts). Errors name
 * the line, never the key or the secret.
 * @example
 * parseSecretsFile('key-a whsec_...\n', '--webhook-secrets-file', ['key-a']); // Map { 'key-a' => ['whsec_...'] }
 */
export function parseSecretsFile(
  text: string,
  label: string,
  apiKeys: readonly string[],
): Map<string, readonly string[]> {
  const known = new Set(apiKeys);
  const keys = new Map<string, readonly string[]>();
  const lineOfKey = new Map<string, number>();
  const lineOfSecret = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  if (lines.length > MAX_SECRET_LINES) throw usageError(`${label} has more than ${MAX_SECRET_LINES} lines`);
  for (const [index, raw] of lines.entries()) {
    const number = index + 1;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [key = '', ...secrets] = line.split(/\s+/);
    const at = `${label} line ${number}`;
    if (secrets.length === 0) throw usageError(`${at} must be "<api key> whsec_... [whsec_...]"`);
    if (!known.has(key)) throw usageError(`${at}: the key is not one of MAILVET_API_KEYS`);
    const before = lineOfKey.get(key);
    if (before !== undefined) throw usageError(`${at} repeats the key of line ${before}`);
    let checked: readonly string[];
    try {
      checked = checkSecrets(secrets, 'secrets');
    } catch (error) {
      secretsError(error, `${at}: its secrets`);
    }
    for (const secret of checked) {
      const shared = lineOfSecret.get(secret);
      if (shared !== undefined && shared !== number) {
        throw usageError(`${at} repeats a secret of line ${shared}: each API key needs its own`);
      }
      lineOfSecret.set(secret, number);
    }
    lineOfKey.set(key, number);
    keys.set(key, checked);
  }
  return keys;
}

/** The secrets of `MAILVET_WEBHOOK_SECRETS` (one `whsec_`, or two comma-separated while rotating), if set. */
function sharedSecretsOf(env: Env): readonly string[] | undefined {
  const value = env.MAILVET_WEBHOOK_SECRETS;
  if (value === undefined || value.trim() === '') return undefined;
  try {
    return checkSecrets(
      value.split(',').map((part) => part.trim()),
      'MAILVET_WEBHOOK_SECRETS',
    );
  } catch (error) {
    secretsError(error, 'MAILVET_WEBHOOK_SECRETS');
  }
}

async function readSecretsFile(path: string, shown: string): Promise<{ text: string; open: boolean }> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError(EXIT.io, `cannot read ${shown}: it is not a file`);
    // Group or others can read it: worth a warning (Kubernetes and Docker mount secrets 0644 by default).
    const open = process.platform !== 'win32' && (info.mode & 0o044) !== 0;
    return { text: await readFile(path, 'utf8'), open };
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: unknown }).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? error);
    throw new CliError(EXIT.io, `cannot read ${shown}: ${reason}`, { cause: error });
  }
}

/**
 * Reads the webhook settings of `mailvet serve`: `undefined` when webhooks are off (no secret is configured and
 * `storedKeys` is false). A key listed in the secrets file signs with its own secrets; every other key of
 * `MAILVET_API_KEYS` with `MAILVET_WEBHOOK_SECRETS`, if set. With `storedKeys` (a job store, whose keys may hold
 * secrets of their own) webhooks are on even without either. `--webhook-allow-address` and
 * `--allow-http-webhooks` while webhooks are off are usage errors.
 */
export async function webhookChoiceOf(
  args: ParsedArgs,
  env: Env,
  apiKeys: readonly string[],
  cwd: string,
  storedKeys = false,
): Promise<WebhookChoice | undefined> {
  const shared = sharedSecretsOf(env);
  const file = single(args, env, 'webhook-secrets-file', 'MAILVET_WEBHOOK_SECRETS_FILE');
  const ranges = many(args, env, 'webhook-allow-address', 'MAILVET_WEBHOOK_ALLOW_ADDRESS');
  const allowAddresses = ranges.value.map((entry) => cidr(ranges.label, entry));
  const allowHttp = switched(args, env, 'allow-http-webhooks', 'MAILVET_ALLOW_HTTP_WEBHOOKS');
  const warnings: string[] = [];
  let own = new Map<string, readonly string[]>();
  if (file !== undefined) {
    const read = await readSecretsFile(resolve(cwd, file.value), file.value);
    own = parseSecretsFile(read.text, file.label, apiKeys);
    if (read.open) {
      warnings.push(
        `mailvet: warning: ${file.value} holds API keys and secrets and others can read it (chmod 600 it)\n`,
      );
    }
  }
  if (shared === undefined && own.size === 0 && !storedKeys) {
    const stray = allowAddresses.length > 0 ? ranges.label : allowHttp ? '--allow-http-webhooks' : undefined;
    if (stray !== undefined) {
      throw usageError(
        `${stray} applies only with webhooks on (MAILVET_WEBHOOK_SECRETS, --webhook-secrets-file, or keys in a job store: --data or --store)`,
      );
    }
    return undefined;
  }
  const keys: Record<string, { secrets: readonly string[] }> = {};
  let sharing = 0;
  for (const key of apiKeys) {
    const secrets = own.get(key) ?? shared;
    if (secrets === undefined) continue;
    if (!own.has(key)) sharing++;
    keys[key] = { secrets };
  }
  if (sharing > 1) {
    warnings.push(
      `mailvet: warning: MAILVET_WEBHOOK_SECRETS signs the webhooks of ${sharing} API keys alike, so each of ` +
        `those tenants can sign events the others' receivers accept; give each key its own secret with --webhook-secrets-file\n`,
    );
  }
  return { keys, allowAddresses, allowHttp, warnings };
}
