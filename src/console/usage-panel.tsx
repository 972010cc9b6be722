/**
 * The key's usage: today's and the last 30 days' verifications per status (single and bulk), the daily quota
 * when the key has one, and a table of the days with usage.
 * @module
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { json } from './api.js';
import { quotaWords, type Usage, type UsageRow, usageView } from './usage-view.js';
import { STATUS_LABEL, STATUSES } from './words.js';

function UsageTable({
  label,
  first,
  rows,
}: {
  readonly label: string;
  readonly first: string;
  readonly rows: readonly UsageRow[];
}) {
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          <th scope="col">{first}</th>
          {STATUSES.map((status) => (
            <th scope="col" key={status}>
              {STATUS_LABEL[status].icon} {STATUS_LABEL[status].word}
            </th>
          ))}
          <th scope="col">Single</th>
          <th scope="col">Bulk</th>
          <th scope="col">Total</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.label} data-testid="usage-row">
            <th scope="row" data-label={first}>
              {row.label}
            </th>
            {row.counts.map((count, i) => (
              <td key={STATUSES[i]} data-label={STATUS_LABEL[STATUSES[i]!].word}>
                {count.toLocaleString()}
              </td>
            ))}
            <td data-label="Single">{row.single.toLocaleString()}</td>
            <td data-label="Bulk">{row.bulk.toLocaleString()}</td>
            <td data-label="Total" data-testid="usage-total">
              {row.total.toLocaleString()}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The Usage panel; Refresh reads it again. */
export function UsagePanel({ apiKey }: { readonly apiKey: string }) {
  const usage = useSignal<Usage | null>(null);
  const error = useSignal<string | null>(null);
  const reload = useSignal(0);
  const reloads = reload.value;
  useEffect(() => {
    void reloads;
    let current = true;
    json<Usage>(apiKey, 'v1/usage')
      .then((answer) => {
        if (!current) return;
        usage.value = answer;
        error.value = null;
      })
      .catch((failure: Error) => {
        if (current) error.value = failure.message;
      });
    return () => {
      current = false;
    };
  }, [apiKey, reloads]);
  const view = usage.value === null ? null : usageView(usage.value);
  const quota = usage.value === null ? null : quotaWords(usage.value.quota);
  return (
    <section id="usage" aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <button type="button" onClick={() => reload.value++}>
        Refresh
      </button>
      {quota === null ? null : <p data-testid="usage-quota">{quota}</p>}
      {view === null ? null : (
        <>
          <UsageTable label="Usage totals" first="Period" rows={[view.today, view.range]} />
          {view.days.length === 0 ? (
            <p>No verifications in these 30 days.</p>
          ) : (
            <>
              <h3>Per day</h3>
              <UsageTable label="Usage per day" first="Day" rows={view.days} />
            </>
          )}
        </>
      )}
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
    </section>
  );
}
