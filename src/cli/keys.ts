/**
 * `mailvet keys create|list|revoke|rotate`: API keys in the job store (`--data DIR` or `--store postgres://`),
 * each with a name, scopes and limits. A new key is printed once, alone on standard output; the store keeps only
 * its SHA-256 digest.
 * @module
 */
import { newApiKey } from '../io/api-key.js';
import { ApiKeyConflictError, type ApiKeyStore, type NewApiKeyRecord } from '../postgres/api-keys.js';
import { type FlagSpec, flagHelp, type ParsedArgs, parseArgs } from './args.js';
import { CliError, type CliIo, EXIT, quote, usageError, write } from './io.js';
import { graceMsOf, keyNameOf, quotaOf, rateOf, scopesOf } from './keys-args.js';
import { keyJson, keysTable } from './keys-render.js';
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
    name: 'grace',
    type: 'string',
    value: '<duration>',
    description: 'rotate: how long the old key keeps working (e.g. 1h, 30m, 2d; 0s: not at all)',
  },
  { name: 'json', type: 'boolean', description: 'list: one JSON array instead of a table' },
  ...STORE_FLAGS.filter((flag) => flag.name === 'data' || flag.name === 'store'),
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** Help text of `mailvet keys`. */
export const KEYS_HELP = `Usage: mailvet keys <create|list|revoke|rotate> [flags] (--data <dir> | --store <postgres://...>)

Manages the API keys kept in the job store of \`mailvet serve\`:
  create --name <name> --scopes <list> [--rate 20/s] [--quota 100000/day]
                           make a key; it is printed once on standard output: store it now
  list [--json]            every key: name, id, scopes, limits, created, last used, state
  revoke <id|name>         stop a key: every API node refuses it within seconds
  rotate <id|name> --grace <duration>
                           print a new key for the same id (same jobs); the old one works until the grace ends

Flags:
${flagHelp(FLAGS)}

A stored key is mv_<id>_<secret>; its id is public (shown by list). Keys of MAILVET_API_KEYS keep working, with
every scope. With --data, the directory must not be open in a running serve (stop it, or use --store).
Environment: MAILVET_DATA, MAILVET_STORE.
Exit codes: 0 done, 2 usage error (bad flag, unknown scope or key, a name in use), 3 cannot open the store.
Example: mailvet keys create --store postgres://... --name billing-app --scopes verify,bulk:read
`;

const SUBCOMMANDS = ['create', 'list', 'revoke', 'rotate'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

/** The flags each subcommand accepts besides --data and --store. */
const OWN_FLAGS: Readonly<Record<Subcommand, readonly string[]>> = {
  create: ['name', 'scopes', 'rate', 'quota'],
  list: ['json'],
  revoke: [],
  rotate: ['grace'],
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
  /** revoke and rotate: the key's id or name. */
  readonly target?: string;
}

function requestOf(sub: Subcommand, args: ParsedArgs): KeysCall {
  if (sub === 'create') {
    const key = {
      name: keyNameOf(args.string('name')),
      scopes: scopesOf(args.string('scopes')),
      requestsPerSecond: rateOf(args.string('rate')),
      addressesPerDay: quotaOf(args.string('quota')),
    };
    return { sub, args, key };
  }
  if (sub === 'rotate') {
    return { sub, args, target: target(args, sub), graceMs: graceMsOf(args.string('grace')) };
  }
  if (sub === 'revoke') return { sub, args, target: target(args, sub) };
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
    await write(io.stdout, `${made.key}\n`);
    await write(
      io.stderr,
      `mailvet: created API key ${quote(name)} (id ${made.keyId}; scopes ${scopes.join(', ')}). It is shown only now: store it; the store keeps only its hash.\n`,
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
      `keys needs a subcommand: create, list, revoke or rotate (got ${got}); see mailvet keys --help`,
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
