/**
 * Verify one address.
 * @module
 */
import { useSignal } from '@preact/signals';
import { json } from './api.js';
import { ResultCard } from './result-card.js';
import type { Result } from './types.js';

/** The form and the card of its answer. */
export function VerifyPanel({ apiKey }: { readonly apiKey: string }) {
  const email = useSignal('');
  const result = useSignal<Result | null>(null);
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const verify = async (address: string) => {
    email.value = address;
    busy.value = true;
    error.value = null;
    try {
      result.value = await json<Result>(apiKey, `v1/verify?email=${encodeURIComponent(address)}`);
    } catch (failure) {
      result.value = null;
      error.value = (failure as Error).message;
    } finally {
      busy.value = false;
    }
  };
  return (
    <section id="verify" aria-labelledby="verify-title">
      <h2 id="verify-title">Verify one address</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (email.value.trim() !== '') void verify(email.value.trim());
        }}
      >
        <label for="verify-email">Email address</label>
        <input
          id="verify-email"
          type="text"
          inputMode="email"
          autoComplete="off"
          value={email.value}
          onInput={(event) => {
            email.value = (event.target as HTMLInputElement).value;
          }}
        />
        <button type="submit" disabled={busy.value}>
          {busy.value ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
      {result.value === null ? null : (
        <ResultCard result={result.value} onVerify={(next) => void verify(next)} />
      )}
    </section>
  );
}
