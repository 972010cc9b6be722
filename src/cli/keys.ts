/**
 * `mailvet keys create|list|revoke|rotate|webhook-secret`: API keys in the job store (`--data DIR` or
 * `--store postgres://`), each with a name, scopes, limits and optionally a webhook signing secret. A new key is
 * printed once, alone on standard output (its new webhook secret on the next line); the store keeps only the
 * key's SHA-256 digest, and the webhook secret as given (the server signs with it).
 * @module
 */
import { newApiKey } from '../io/api-key.js';
import { ApiKeyConflictError, type ApiKeyStore, type NewApiKeyRecord } from '../postgres/api-keys.js';
import { generateWebhookSecret } from '../webhooks/sign.js';
import { type FlagSpec, flagHelp, type ParsedArgs, parseArgs } from './args.js';
import { CliError, type CliIo, EXIT, quote, usageError, write } from './io.js';
import { graceMsOf, keyNameOf, quotaOf, rateOf, scopesOf } from './keys-args.js';
import { keyJson, keysTable } from './keys-render.js';
import { changeWebhookSecret, type WebhookSecretAction, webhookSecretActionOf } from './keys-webhook.js';
import { apiKeysOf, openStore, STORE_FLAGS, storeChoiceOf, storeCliError } from './store.js';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'name',
    type: 'string',
    value: '<name>',
    description: "create: the key's name (1-64 of A-Z a-z 0-9 . _ -)",
  },
  {
    name: 'scopes',
    type: 'string',
    value: '<list>',
    description: 'create: what the key may do, comma-separated: verify, bulk:read, bulk:write, admin',
  },
  {
    name: 'rate',
    type: 'string',
    value: '<n/s>',
    description: "create: the key's own request rate (e.g. 20/s, 600/min)",
  },
  {
    name: 'quota',
    type: 'string',
    value: '<n/day>',
    description: 'create: addresses the key may verify per UTC day (e.g. 100000/day)',
  },
  {
    name: 'webhook-secret',
    type: 'boolean',
    description: 'create: give the key a webhook signing secret (printed once, on the line after the key)',
  },
  {
    name: 'grace',
    type: 'string',
    value: '<duration>',
    description:
      'rotate, webhook-secret --rotate: how long the old key or secret keeps working (e.g. 1h, 30m, 2d; 0s: not at all)',
  },
  { name: 'rotate', type: 'boolean', description: "webhook-secret: replace the key's secret with a new one" },
  {
    name: 'remove',
    type: 'boolean',
    description: "webhook-secret: drop the key's secret (no more webhooks)",
  },
  { name: 'json', type: 'boolean', description: 'list: one JSON array instead of a table' },
  ...STORE_FLAGS.filter((flag) => flag.name === 'data' || flag.name === 'store'),
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** Help text of `mailvet keys`. */
export const KEYS_HELP = `Usage: mailvet keys <create|list|revoke|rotate|webhook-secret> [flags] (--data <dir> | --store <postgres://...>)

Manages the API keys kept in the job store of \`mailvet serve\`:
  create --name <name> --scopes <list> [--rate 20/s] [--quota 100000/day] [--webhook-secret]
                           make a key; it is printed once on standard output: store it now
                           (with --webhook-secret, its whsec_ signing secret on the next line)
  list [--json]            every key: name, id, scopes, limits, created, last used, state
  revoke <id|name>         stop a key: every API node refuses it within seconds
  rotate <id|name> --grace <duration>
                           print a new key for the same id (same jobs); the old one works until the grace ends
  webhook-secret <id|name> [--rotate --grace <duration> | --remove]
                           print a new whsec_ secret that signs the webhooks of the key's jobs; --rotate
                           replaces one (the old one signs too until the grace ends), --remove drops it

Flags:
${flagHelp(FLAGS)}

A stored key is mv_<id>_<secret>; its id is public (shown by list). Keys of MAILVET_API_KEYS keep working, with
every scope. Webhook secrets are stored as given (the server signs with them) and never logged. With --data, the directory must not be open in a running serve (stop it, or use --store).
Environment: MAILVET_DATA, MAILVET_STORE.
Exit codes: 0 done, 2 usage error (bad flag, unknown scope or key, a name in use), 3 cannot open the store.
Example: mailvet keys create --store postgres://... --name billing-app --scopes verify,bulk:read
`;

const SUBCOMMANDS = ['create', 'list', 'revoke', 'rotate', 'webhook-secret'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

/** The flags each subcommand accepts besides --data and --store. */
const OWN_FLAGS: Readonly<Record<Subcommand, readonly string[]>> = {
  create: ['name', 'scopes', 'rate', 'quota', 'webhook-secret'],
  list: ['json'],
  revoke: [],
  rotate: ['grace'],
  'webhook-secret': ['rotate', 'grace', 'remove'],
};

function checkFlags(args: ParsedArgs, sub: Subcommand): void {
  for (const flag of FLAGS) {
    if (flag.name === 'data' || flag.name === 'store' || flag.name === 'help') continue;
    const given = flag.type === 'boolean' ? args.flag(flag.name) : args.string(flag.name) !== undefined;
    if (given && !OWN_FLAGS[sub].includes(flag.name)) {
      throw usageError(`--${flag.name} does not apply to keys ${sub}; see mailvet keys --help`);
    }
  }
}

/** The one positional `<id|name>` of revoke and rotate. */
function target(args: ParsedArgs, sub: Subcommand): string {
  const rest = args.positionals.slice(1);
  if (rest.length !== 1) throw usageError(`keys ${sub} takes one key id or name, got ${rest.length}`);
  const given = rest[0]!;
  if (given.length === 0 || given.length > 64) throw usageError(`no API key ${quote(given)} in this store`);
  return given;
}

async function live(keys: ApiKeyStore, idOrName: string) {
  const record = await keys.find(idOrName);
  if (record === undefined) {
    throw usageError(
      `no API key ${quote(idOrName)} in this store (revoked, or never made; see mailvet keys list)`,
    );
  }
  return record;
}

/** What a subcommand was asked, checked before the store opens (so a typo costs no database start). */
interface KeysCall {
  readonly sub: Subcommand;
  readonly args: ParsedArgs;
  /** create: the new key's settings. */
  readonly key?: Omit<NewApiKeyRecord, 'id' | 'hash' | 'createdAt'>;
  /** rotate: the grace of the old key. */
  readonly graceMs?: number;
  /** revoke, rotate and webhook-secret: the key's id or name. */
  readonly target?: string;
  /** webhook-secret: set, rotate or remove. */
  readonly webhook?: WebhookSecretAction;
}

function requestOf(sub: Subcommand, args: ParsedArgs): KeysCall {
  if (sub === 'create') {
    const key = {
      name: keyNameOf(args.string('name')),
      scopes: scopesOf(args.string('scopes')),
      requestsPerSecond: rateOf(args.string('rate')),
      addressesPerDay: quotaOf(args.string('quota')),
      webhookSecret: args.flag('webhook-secret') ? generateWebhookSecret() : null,
    };
    return { sub, args, key };
  }
  if (sub === 'rotate') {
    return { sub, args, target: target(args, sub), graceMs: graceMsOf(args.string('grace')) };
  }
  if (sub === 'revoke') return { sub, args, target: target(args, sub) };
  if (sub === 'webhook-secret') {
    return { sub, args, target: target(args, sub), webhook: webhookSecretActionOf(args) };
  }
  if (args.positionals.length > 1) throw usageError('keys list takes no arguments');
  return { sub, args };
}

async function create(
  key: NonNullable<KeysCall['key']>,
  keys: ApiKeyStore,
  io: CliIo,
  now: number,
): Promise<number> {
  const { name, scopes } = key;
  for (let attempt = 1; ; attempt++) {
    const made = await newApiKey();
    try {
      await keys.create({ ...key, id: made.keyId, hash: made.hash, createdAt: now });
    } catch (error) {
      if (error instanceof ApiKeyConflictError && error.field === 'name') throw usageError(error.message);
      if (error instanceof ApiKeyConflictError && attempt < 3) continue; // a random id drawn twice
      throw error;
    }
    const secret = key.webhookSecret ?? null;
    await write(io.stdout, secret === null ? `${made.key}\n` : `${made.key}\n${secret}\n`);
    const shown =
      secret === null
        ? 'It is shown only now: store it; the store keeps only its hash.'
        : 'They are shown only now: store the key (the store keeps only its hash) and give the webhook secret (line 2) to the receivers.';
    await write(
      io.stderr,
      `mailvet: created API key ${quote(name)} (id ${made.keyId}; scopes ${scopes.join(', ')}${secret === null ? '' : '; webhook secret'}). ${shown}\n`,
    );
    return EXIT.ok;
  }
}

async function rotate(
  idOrName: string,
  graceMs: number,
  keys: ApiKeyStore,
  io: CliIo,
  now: number,
): Promise<number> {
  const record = await live(keys, idOrName);
  const made = await newApiKey({ keyId: record.id });
  if (!(await keys.rotate(record.id, made.hash, now + graceMs))) {
    throw usageError(`API key ${quote(idOrName)} was revoked meanwhile`);
  }
  await write(io.stdout, `${made.key}\n`);
  const until = new Date(now + graceMs).toISOString();
  await write(
    io.stderr,
    `mailvet: rotated API key ${quote(record.name)} (id ${record.id}): the old key works until ${until}. The new key is shown only now: store it.\n`,
  );
  return EXIT.ok;
}

async function run(request: KeysCall, keys: ApiKeyStore, io: CliIo): Promise<number> {
  const now = (io.now ?? Date.now)();
  const { args } = request;
  switch (request.sub) {
    case 'create':
      return create(request.key!, keys, io, now);
    case 'rotate':
      return rotate(request.target!, request.graceMs!, keys, io, now);
    case 'webhook-secret':
      return changeWebhookSecret(await live(keys, request.target!), request.webhook!, keys, io, now);
    case 'revoke': {
      const record = await live(keys, request.target!);
      await keys.revoke(record.id, now);
      await write(
        io.stderr,
        `mailvet: revoked API key ${quote(record.name)} (id ${record.id}); API nodes refuse it within seconds\n`,
      );
      return EXIT.ok;
    }
    case 'list': {
      const records = await keys.list();
      const text = args.flag('json')
        ? `${JSON.stringify(
            records.map((record) => keyJson(record, now)),
            null,
            2,
          )}\n`
        : keysTable(records, now);
      await write(io.stdout, text);
      return EXIT.ok;
    }
  }
}

/** Runs `mailvet keys`; resolves with the exit code. */
export async function runKeys(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'mailvet keys');
  if (args.flag('help')) {
    await write(io.stdout, KEYS_HELP);
    return EXIT.ok;
  }
  const sub = args.positionals[0];
  if (sub === undefined || !(SUBCOMMANDS as readonly string[]).includes(sub)) {
    const got = sub === undefined ? 'none' : quote(sub);
    throw usageError(
      `keys needs a subcommand: create, list, revoke, rotate or webhook-secret (got ${got}); see mailvet keys --help`,
    );
  }
  checkFlags(args, sub as Subcommand);
  const choice = storeChoiceOf(args, io.env);
  if (choice.kind === 'memory') {
    throw usageError(
      'keys live in the job store: give --data <dir> or --store <postgres://...> (as to serve)',
    );
  }
  const request = requestOf(sub as Subcommand, args);
  const store = await openStore(choice);
  try {
    const keys = apiKeysOf(store);
    if (keys === undefined) throw new CliError(EXIT.io, 'this job store keeps no API keys');
    return await run(request, keys, io);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw storeCliError(error);
  } finally {
    await store?.close?.();
  }
}
