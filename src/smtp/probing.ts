/**
 * mailvet's {@link ProberFactory}: the per-MX session pool and catch-all cache of smtp/prober.ts, whose code (the
 * pool, the SMTP dialogue) is imported on the first probe, so that a verification that never reaches SMTP
 * (`mailvet verify --no-dns`, a syntax failure, `smtp: false`) does not load it: the cold start of a process that
 * verifies one address. `createVerifierWith` (verifier-with.ts) wires it into the core. Runtime-free.
 * @module
 */
import {
  NO_POOL_STATS,
  type Prober,
  type ProberFactory,
  type ProberSettings,
  type ProberStats,
} from '../contracts/prober.js';
import { MailvetError } from '../errors.js';

/** The counters of a prober whose code has not been loaded yet: nothing done. */
const NOTHING_DONE: ProberStats = Object.freeze({ ...NO_POOL_STATS, catchAllProbes: 0 });

/**
 * Imports the prober's code (the session pool, the SMTP dialogue) ahead of the first probe; resolves once it is
 * loaded, or failed to load (the first probe then rejects with the error).
 */
function preloadProber(): Promise<void> {
  return import('./prober.js').then(
    () => undefined,
    () => undefined,
  );
}

/**
 * A {@link Prober} whose code (the session pool, the SMTP dialogue, the catch-all cache) is imported on its first
 * probe. Closed before its first probe, it makes no pool and refuses probes with `disposed`.
 */
function deferredProber(settings: ProberSettings): Prober {
  let prober: Prober | undefined;
  let loading: Promise<Prober> | undefined;
  let closed = false;
  const ready = (): Prober | Promise<Prober> => {
    if (prober !== undefined) return prober;
    // Closed before its first probe: no pool is made to outlive the verifier.
    if (closed && loading === undefined)
      return Promise.reject(new MailvetError('disposed', 'the verifier has been disposed'));
    loading ??= import('./prober.js').then(({ createProber }) => {
      prober = createProber(settings);
      return prober;
    });
    return loading;
  };
  return {
    heloHost: settings.heloHost,
    rcpt(target, request, lease) {
      const made = ready();
      return made instanceof Promise
        ? made.then((loaded) => loaded.rcpt(target, request, lease))
        : made.rcpt(target, request, lease);
    },
    catchAll(domain, target, request, lease) {
      const made = ready();
      return made instanceof Promise
        ? made.then((loaded) => loaded.catchAll(domain, target, request, lease))
        : made.catchAll(domain, target, request, lease);
    },
    stats: () => prober?.stats() ?? NOTHING_DONE,
    async close() {
      closed = true;
      if (loading === undefined) return;
      await (await loading).close();
    },
  };
}

/**
 * The SMTP probing a verifier gets from `createVerifier` and `createVerifierWith`: `create` makes a prober whose
 * code is imported on its first probe (or by `preload`).
 * @example
 * const prober = smtpProbing.create({ transport: tcpTransport(), heloHost: 'probe.example.org' });
 * await prober.close();
 */
export const smtpProbing: ProberFactory = Object.freeze({
  create: deferredProber,
  preload: preloadProber,
});
