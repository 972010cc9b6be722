/**
 * The opening stages of an SMTP session: the greeting, EHLO (HELO when EHLO is refused), and STARTTLS when the
 * policy asks for it, then EHLO again over TLS.
 * @module
 */

import { isSmtpError } from '../../errors.js';
import { commands } from '../sanitize.js';
import type { ServerCapabilities, SmtpReply } from '../types.js';
import type { SessionCore } from './core.js';
import { DEFAULT_TIMEOUT_MS } from './options.js';

/** A `2xx` reply. */
export function isSuccess(reply: SmtpReply): boolean {
  return reply.code >= 200 && reply.code < 300;
}

/** The upper-case EHLO keywords of a reply (its lines after the first). */
export function extensionsOf(reply: SmtpReply): Set<string> {
  const keywords = new Set<string>();
  for (const line of reply.lines.slice(1)) {
    const keyword = line.trim().split(/\s+/, 1)[0]!.toUpperCase();
    if (/^[A-Z0-9][A-Z0-9-]*$/.test(keyword)) keywords.add(keyword);
  }
  return keywords;
}

function isIpAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

async function ehlo(core: SessionCore): Promise<{ extensions: Set<string>; esmtp: boolean }> {
  const reply = await core.exchange('ehlo', commands.ehlo(core.options.heloHost));
  if (isSuccess(reply)) return { extensions: extensionsOf(reply), esmtp: true };
  const helo = await core.exchange('ehlo', commands.helo(core.options.heloHost));
  if (isSuccess(helo)) return { extensions: new Set(), esmtp: false };
  throw core.failure('rejected', `EHLO and HELO refused: ${helo.code} ${helo.text}`, 'ehlo', {
    smtpReply: helo,
  });
}

async function startTls(core: SessionCore, offered: boolean): Promise<boolean> {
  const { channel, options } = core;
  const policy = options.tls ?? 'never';
  if (policy === 'never') return false;
  if (!offered || channel.startTls === undefined) {
    if (policy === 'opportunistic') return false;
    throw core.failure(
      'tls',
      offered
        ? 'STARTTLS is required but the transport cannot upgrade'
        : 'STARTTLS is required but not offered',
      'starttls',
    );
  }
  const reply = await core.exchange('starttls', commands.startTls());
  if (reply.code !== 220) {
    if (policy === 'opportunistic') return false;
    throw core.failure('tls', `STARTTLS refused: ${reply.code} ${reply.text}`, 'starttls', {
      smtpReply: reply,
    });
  }
  const remaining = core.limitOf({}) - core.now();
  if (remaining <= 0) throw core.failure('timeout', 'no time left for the TLS handshake', 'starttls');
  try {
    await channel.startTls({
      ...(options.servername === undefined || isIpAddress(options.servername)
        ? {}
        : { servername: options.servername }),
      timeoutMs: remaining,
    });
  } catch (error) {
    throw core.failure(isSmtpError(error) ? error.kind : 'tls', 'the TLS handshake failed', 'starttls', {
      cause: error,
    });
  }
  return true;
}

/**
 * Reads the greeting, says EHLO (or HELO), and upgrades to TLS when the policy asks for it; resolves with what
 * the server advertised. Any failure closes the session.
 */
export async function hello(core: SessionCore): Promise<ServerCapabilities> {
  const greetingLimit = core.limitOf({}, core.options.greetingTimeoutMs ?? DEFAULT_TIMEOUT_MS);
  const greeting = await core.readReply('greeting', greetingLimit, {});
  if (greeting.code !== 220) {
    throw core.failure(
      'rejected',
      `the server refused the session: ${greeting.code} ${greeting.text}`,
      'greeting',
      { smtpReply: greeting },
    );
  }
  let said: { extensions: Set<string>; esmtp: boolean };
  let tls = false;
  try {
    said = await ehlo(core);
    tls = await startTls(core, said.extensions.has('STARTTLS'));
    if (tls) {
      said = await ehlo(core);
      if (!said.esmtp) throw core.failure('protocol', 'EHLO refused after STARTTLS', 'ehlo');
    }
  } catch (error) {
    core.close();
    throw error;
  }
  return { extensions: said.extensions, tls, esmtp: said.esmtp, greeting };
}
