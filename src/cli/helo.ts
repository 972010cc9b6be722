/**
 * The warning about a HELO name that mail servers penalise: the bare host name of a machine (`EHLO vm`), which
 * is no fully qualified domain name.
 * @module
 */
import { hostname } from 'node:os';
import { defaultHeloHost } from '../smtp/host.js';
import type { CliSettings } from './config.js';

/** Endings that machines get by default (mDNS, cloud-internal, home routers): never a public name of the host. */
const LOCAL_NAME = /(^|\.)(localhost|localdomain|local|internal|lan|home)$/;

/**
 * The warning line for settings whose EHLO name (from `--helo`, else the machine's host name) is not a fully
 * qualified domain name, or `undefined` when there is nothing to say (SMTP off, or a good name). Mail servers
 * check the name (many reject or slow down a dotless one) and it should match the reverse DNS of the egress
 * address; `mailvet doctor` checks that.
 * @example
 * heloWarning(settings, () => 'vm'); // 'mailvet: warning: EHLO name "vm" is not a fully qualified ...'
 */
export function heloWarning(settings: CliSettings, hostName: () => string = hostname): string | undefined {
  if (!settings.smtp) return undefined;
  const name = settings.heloHost ?? defaultHeloHost(hostName);
  const normal = name.trim().toLowerCase().replace(/\.$/, '');
  if (normal.includes('.') && !LOCAL_NAME.test(normal)) return undefined;
  const from = settings.heloHost === undefined ? "this machine's host name" : '--helo';
  return (
    `mailvet: warning: the EHLO name ${JSON.stringify(name)} (${from}) is not a fully qualified domain name; ` +
    'mail servers penalise it. Set --helo (or MAILVET_HELO) to the name the egress address resolves back to, ' +
    'e.g. --helo mx-check.example.net\n'
  );
}
