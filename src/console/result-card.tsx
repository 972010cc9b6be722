/**
 * One verification result as a card: status badge (icon and word), sub-status in plain words, score meter,
 * flags, MX host, the suggestion as a link that verifies it, the reason and the SMTP dialogue.
 * @module
 */
import type { Result } from './types.js';
import { reasonWords, STATUS_LABEL, subStatusWords } from './words.js';

/** Properties of {@link ResultCard}. */
export interface ResultCardProps {
  readonly result: Result;
  /** Verifies another address (the suggestion). */
  readonly onVerify: (email: string) => void;
}

/** The card of one result. Every value is rendered as text. */
export function ResultCard({ result, onVerify }: ResultCardProps) {
  const label = STATUS_LABEL[result.status];
  const reason = result.reason === undefined ? null : reasonWords(result.reason, result.sub_status);
  const flags = (['disposable', 'role', 'free', 'accept_all'] as const).filter((flag) => result[flag]);
  return (
    <article class="card" aria-label={`Result for ${result.email}`} data-status={result.status}>
      <h3 class="address">{result.email}</h3>
      <p class={`badge badge-${result.status}`} data-testid="status">
        <span aria-hidden="true">{label.icon}</span> {label.word}
      </p>
      <p data-testid="sub-status">{subStatusWords(result.sub_status, result.status)}</p>
      {reason === null ? null : (
        <p class="reason" data-testid="reason" title={reason.code ?? undefined}>
          <span data-testid="reason-words">{reason.words}</span>
          {reason.code === null ? null : (
            <>
              {' '}
              <code class="reason-code" data-testid="reason-code">
                {reason.code}
              </code>
            </>
          )}
        </p>
      )}
      <label class="score">
        Score <meter min={0} max={100} low={50} high={80} optimum={100} value={result.score} /> {result.score}
      </label>
      <dl>
        <dt>Flags</dt>
        <dd data-testid="flags">
          {flags.length === 0 ? 'none' : flags.join(', ').replace('accept_all', 'accept-all')}
        </dd>
        <dt>Mail server</dt>
        <dd>{result.mx_record === '' ? '—' : result.mx_record}</dd>
      </dl>
      {result.did_you_mean === null ? null : (
        <p>
          Did you mean{' '}
          <button
            type="button"
            class="link"
            data-testid="suggestion"
            onClick={() => onVerify(result.did_you_mean ?? '')}
          >
            {result.did_you_mean}
          </button>
          ?
        </p>
      )}
      {result.smtp_transcript === undefined ? null : (
        <details>
          <summary>SMTP dialogue</summary>
          <pre>{result.smtp_transcript.join('\n')}</pre>
        </details>
      )}
    </article>
  );
}
