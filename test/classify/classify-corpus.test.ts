import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ProviderProfileId } from '../../src/classify/profiles.js';
import { classifyReply, explainReply } from '../../src/classify/reply.js';
import { SUB_STATUS_OF } from '../../src/result.js';
import { parseReply } from '../../src/smtp/reply.js';
import type { SmtpStage } from '../../src/smtp/types.js';

/** One labelled reply of fixtures/smtp-replies/replies.json (see the README beside it). */
interface CorpusRow {
  readonly stage: SmtpStage;
  readonly reply: readonly string[];
  readonly class: string;
  readonly expected: string;
  readonly source: string;
  readonly provider?: ProviderProfileId;
}

const corpus: readonly CorpusRow[] = JSON.parse(
  readFileSync(new URL('../../fixtures/smtp-replies/replies.json', import.meta.url), 'utf8'),
);

/** Classes that say the mailbox is missing or disabled: the ones that may, and should, come out `invalid`. */
const DEAD = new Set(['not_found', 'disabled']);
/** Classes that say the mailbox is full. */
const FULL = new Set(['full']);

const outcomeOf = (row: CorpusRow) =>
  classifyReply(parseReply([...row.reply]), row.stage, row.provider ?? null);
const isInvalid = (outcome: string) =>
  outcome !== 'accepted' && SUB_STATUS_OF[outcome as keyof typeof SUB_STATUS_OF] === 'invalid';

describe('the labelled SMTP reply corpus (fixtures/smtp-replies)', () => {
  it('has at least 300 rows, each with a source, a known stage and a known expected outcome', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
    for (const row of corpus) {
      expect(row.source.length, JSON.stringify(row)).toBeGreaterThan(3);
      expect(['greeting', 'ehlo', 'mail', 'rcpt']).toContain(row.stage);
      expect(row.expected === 'accepted' || row.expected in SUB_STATUS_OF, row.expected).toBe(true);
    }
  });

  it.each(corpus.map((row, index) => [index + 2, row.reply.join(' | ').slice(0, 90), row] as const))(
    'line %i: %s',
    (_line, _text, row) => {
      const { outcome, rule } = explainReply(parseReply([...row.reply]), row.stage, row.provider ?? null);
      expect({ outcome, rule: rule?.id }).toMatchObject({ outcome: row.expected });
    },
  );

  it('meets the goals of issue 33: no harmful invalid, >= 95% of dead mailboxes found', () => {
    const outcomes = corpus.map((row) => ({ row, outcome: outcomeOf(row) }));
    const notDead = outcomes.filter(({ row }) => !DEAD.has(row.class) && !FULL.has(row.class));
    const dead = outcomes.filter(({ row }) => DEAD.has(row.class));
    const notFull = notDead;
    // No policy / temporary / system / full-mailbox reply comes out as a missing or disabled mailbox ...
    const harmful = outcomes.filter(
      ({ row, outcome }) =>
        !DEAD.has(row.class) && (outcome === 'mailbox_not_found' || outcome === 'mailbox_disabled'),
    );
    expect(harmful.map(({ row }) => row.reply.join(' '))).toEqual([]);
    // ... no policy or temporary reply comes out full ...
    expect(
      notFull
        .filter(({ outcome }) => outcome === 'mailbox_quota_exceeded')
        .map(({ row }) => row.reply.join(' ')),
    ).toEqual([]);
    // ... and at least 95% of the dead mailboxes come out invalid.
    const found = dead.filter(({ outcome }) => isInvalid(outcome)).length;
    expect(found / dead.length).toBeGreaterThanOrEqual(0.95);
  });
});
