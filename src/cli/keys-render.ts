/**
 * How `mailvet keys list` shows keys: a table for people, `--json` for programs. Never a key, a digest or a
 * webhook secret: only whether the key has one.
 * @module
 */
import type { ApiKeyRecord } from '../postgres/api-keys.js';

/** A key's state at `now`: `active`, `rotating` (the replaced key still works) or `revoked`. */
export function keyState(record: ApiKeyRecord, now: number): 'active' | 'rotating' | 'revoked' {
  if (record.revokedAt !== null) return 'revoked';
  return record.previousUntil !== null && record.previousUntil > now ? 'rotating' : 'active';
}

/** Whether a key signs webhooks at `now`: `none`, `set`, or `rotating` (the replaced secret signs too). */
export function webhookState(record: ApiKeyRecord, now: number): 'none' | 'set' | 'rotating' {
  if (record.webhookSecret === null) return 'none';
  const until = record.previousWebhookSecretUntil;
  return record.previousWebhookSecret !== null && until !== null && until > now ? 'rotating' : 'set';
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** What people see of a key's public part: `mv_<id>_…`. */
export function keyPrefix(id: string): string {
  return `mv_${id}_`;
}

/** The JSON of one key in `mailvet keys list --json`. */
export function keyJson(record: ApiKeyRecord, now: number) {
  return {
    id: record.id,
    prefix: keyPrefix(record.id),
    name: record.name,
    scopes: record.scopes,
    requests_per_second: record.requestsPerSecond,
    addresses_per_day: record.addressesPerDay,
    created_at: iso(record.createdAt),
    last_used_at: iso(record.lastUsedAt),
    revoked_at: iso(record.revokedAt),
    previous_key_valid_until: keyState(record, now) === 'rotating' ? iso(record.previousUntil) : null,
    state: keyState(record, now),
    webhook_secret: webhookState(record, now),
    previous_webhook_secret_valid_until:
      webhookState(record, now) === 'rotating' ? iso(record.previousWebhookSecretUntil) : null,
  };
}

function rate(perSecond: number | null): string {
  if (perSecond === null) return '-';
  return perSecond >= 1 ? `${Number(perSecond.toFixed(3))}/s` : `${Number((perSecond * 60).toFixed(3))}/min`;
}

function minute(ms: number | null): string {
  return ms === null ? '-' : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

/** The table of `mailvet keys list`: one line per key, columns padded, times in UTC to the minute. */
export function keysTable(records: readonly ApiKeyRecord[], now: number): string {
  if (records.length === 0)
    return 'no API keys in this store (mailvet keys create --name ... --scopes ...)\n';
  const rows = [
    ['NAME', 'KEY', 'SCOPES', 'RATE', 'QUOTA/DAY', 'WEBHOOK', 'CREATED', 'LAST USED', 'STATE'],
    ...records.map((record) => {
      const state = keyState(record, now);
      const webhook = webhookState(record, now);
      return [
        record.name,
        `${keyPrefix(record.id)}…`,
        record.scopes.join(','),
        rate(record.requestsPerSecond),
        record.addressesPerDay === null ? '-' : String(record.addressesPerDay),
        webhook === 'none'
          ? '-'
          : webhook === 'set'
            ? 'signed'
            : `rotating (old secret until ${minute(record.previousWebhookSecretUntil)})`,
        minute(record.createdAt),
        minute(record.lastUsedAt),
        state === 'rotating' ? `rotating (old key until ${minute(record.previousUntil)})` : state,
      ];
    }),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '),
    )
    .join('\n')
    .concat('\n');
}
