/**
 * Which authentication a handler's options choose: the caller's own `authenticate`, the keys of a job store (with
 * `apiKeys` / `MAILVET_API_KEYS` beside them), or the bearer keys alone; refuses an API open to anyone.
 * @module
 */
import { OptionsError } from '../errors.js';
import { keysFromEnv } from '../io/api-key.js';
import { type Authenticate, bearerKeys } from './auth.js';
import {
  type ApiKeyLookup,
  checkKeyStore,
  checkWhole,
  type StoreKeysAuthenticate,
  storeKeys,
} from './store-keys.js';

/** The authentication fields of the handler's options (documented there). */
export interface AuthenticationOptions {
  readonly apiKeys?: readonly string[];
  readonly authenticate?: Authenticate;
  readonly apiKeyStore?: ApiKeyLookup;
  readonly apiKeyCacheMs?: number;
  readonly clock?: () => number;
}

/**
 * The authentication `options` choose, validated; an `OptionsError` names a bad or conflicting field, or
 * `apiKeys` when no key is given anywhere.
 */
export function authenticatorOf(options: AuthenticationOptions): Authenticate | StoreKeysAuthenticate {
  if (options.authenticate !== undefined) {
    if (options.apiKeys !== undefined)
      throw new OptionsError('apiKeys', 'cannot be combined with authenticate');
    if (options.apiKeyStore !== undefined)
      throw new OptionsError('apiKeyStore', 'cannot be combined with authenticate');
    if (typeof options.authenticate !== 'function')
      throw new OptionsError('authenticate', 'must be a function');
    return options.authenticate;
  }
  const keys = options.apiKeys ?? keysFromEnv();
  const store = options.apiKeyStore;
  const cacheMs = checkWhole(options.apiKeyCacheMs, 'apiKeyCacheMs', 600_000);
  if (store !== undefined) {
    checkKeyStore(store, 'apiKeyStore');
    return storeKeys({
      store,
      envKeys: keys,
      ...(cacheMs === undefined ? {} : { cacheMs }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  }
  if (cacheMs !== undefined) throw new OptionsError('apiKeyCacheMs', 'applies to apiKeyStore only');
  if (keys.length === 0) {
    throw new OptionsError(
      'apiKeys',
      'must hold at least one key (or set MAILVET_API_KEYS, or pass apiKeyStore or authenticate)',
    );
  }
  return bearerKeys(keys);
}
