/**
 * The SMTP check: asks the domain's mail hosts whether they accept the address (`RCPT TO`), then whether
 * they accept any address (the catch-all probe). The work is in checks/smtp-probe.ts, imported on first need.
 * @module
 */
import type { Check } from './types.js';

/** The check's work, once imported. */
let work: typeof import('./smtp-probe.js') | undefined;
let loading: Promise<typeof import('./smtp-probe.js')> | undefined;

function load(): Promise<typeof import('./smtp-probe.js')> {
  loading ??= import('./smtp-probe.js').then((loaded) => {
    work = loaded;
    return loaded;
  });
  return loading;
}

/**
 * Imports the check's work ahead of its first probe; resolves once it is loaded, or failed to load (the first probe
 * then rejects with the error). A verifier with `dns` and `smtp` on starts it when it is made.
 */
export function preloadSmtpCheck(): Promise<void> {
  return load().then(
    () => undefined,
    () => undefined,
  );
}

/**
 * Probes the mail hosts found by the MX check, in order (each address of each host, at most `maxMxHosts`
 * hosts), through the verifier's session pool:
 * - a connection failure, no greeting, a reply that did not come in time, a `421` or a host backing off
 *   (`mxBackoffMs`) moves on to the next host; when none is left, the last failure's `sub_status` is the
 *   verdict (`mail_server_temporary_error` for a host backing off);
 * - the `RCPT TO` reply is classified (classify/reply.ts), as the answering host's provider means it (its profile,
 *   classify/profiles.ts): a refusal gives its `invalid` or `unknown` verdict;
 * - an accepted address is `valid`, unless the catch-all probe (option `catchAll`) finds that the domain
 *   accepts a random local part: then `catch_all` with `accept_all: true`. A probe that is inconclusive
 *   (deferred, blocked, failed) leaves the address `valid`: the server did accept it. At a provider known to
 *   accept every recipient at `RCPT TO` (Yahoo / AOL), a `250` alone is never `valid`: without a refused probe
 *   the address is `catch_all`, and `reason` says why;
 * - a local part that needs SMTPUTF8, at a server that does not offer it, is `unknown`/`smtp_not_checked`;
 * - the whole probe stays within the verification's budget (`timeout_exceeded`) and its abort signal.
 *
 * Sets `mx_record` to the host that answered, and `smtp_provider` from the MX host names (also when the
 * `smtp` option is off). With `trace`, the dialogue goes to `smtp_transcript`. Does nothing when `smtp` or
 * `dns` is off or the MX check found no mail host. Its code (checks/smtp-probe.ts: reply classification, provider
 * profiles, the pool's requests) is imported the first time the MX check found mail hosts, so a verification that
 * never gets that far (`mailvet verify --no-dns`) does not load it.
 */
export const smtpCheck: Check = {
  name: 'smtp',
  run(state) {
    const hosts = state.mailHosts;
    if (hosts === null || hosts.length === 0) return undefined;
    if (work !== undefined) return work.smtpOutcome(state, hosts);
    return load().then((loaded) => loaded.smtpOutcome(state, hosts));
  },
};
