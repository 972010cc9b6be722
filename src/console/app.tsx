/**
 * The console: sign in with an API key, then verify one address, verify a list, manage jobs and see the key's
 * usage.
 * @module
 */
import { useSignal } from '@preact/signals';
import { ApiError, json } from './api.js';
import { BulkPanel } from './bulk-panel.js';
import { JobsPanel } from './jobs-panel.js';
import { apiKey, signIn, signOut } from './session.js';
import { UsagePanel } from './usage-panel.js';
import { VerifyPanel } from './verify-panel.js';
import { signInFailureWords } from './words.js';

function SignIn() {
  const key = useSignal('');
  const error = useSignal<string | null>(null);
  return (
    <form
      class="sign-in"
      onSubmit={async (event) => {
        event.preventDefault();
        error.value = null;
        try {
          await json(key.value, 'v1/openapi.json'); // any valid key, whatever its scopes: checks the key
          signIn(key.value);
        } catch (failure) {
          error.value =
            failure instanceof ApiError ? signInFailureWords(failure) : (failure as Error).message;
        }
      }}
    >
      <h2>Sign in</h2>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autoComplete="off"
        value={key.value}
        onInput={(event) => {
          key.value = (event.target as HTMLInputElement).value;
        }}
      />
      <button type="submit">Sign in</button>
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
    </form>
  );
}

/** The whole page. */
export function App() {
  const created = useSignal(0);
  const key = apiKey.value;
  return (
    <>
      <header>
        <h1>mailvet</h1>
        {key === null ? null : (
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        )}
      </header>
      <main>
        {key === null ? (
          <SignIn />
        ) : (
          <>
            <VerifyPanel apiKey={key} />
            <BulkPanel apiKey={key} onCreated={() => created.value++} />
            <JobsPanel apiKey={key} version={created.value} />
            <UsagePanel apiKey={key} />
          </>
        )}
      </main>
    </>
  );
}
