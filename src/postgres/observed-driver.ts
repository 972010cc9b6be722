/**
 * A {@link SqlDriver} that times each statement for the store's `onQuery` observer (metrics of the store's round
 * trips and errors).
 * @module
 */
import type { SqlClient, SqlDriver } from './driver.js';

/**
 * Told about each statement the store runs: how long it took in milliseconds (its round trip), and whether it
 * failed. Must return quickly and not throw (an error it throws is ignored).
 */
export type QueryObserver = (durationMs: number, failed: boolean) => void;

function tell(observer: QueryObserver, started: number, failed: boolean): void {
  try {
    observer(performance.now() - started, failed);
  } catch {
    // An observer's failure must not change the store's answer.
  }
}

function observedClient(client: SqlClient, observer: QueryObserver): SqlClient {
  return {
    async query(text, params) {
      const started = performance.now();
      try {
        const rows = await client.query(text, params);
        tell(observer, started, false);
        return rows;
      } catch (error) {
        tell(observer, started, true);
        throw error;
      }
    },
  };
}

/** `driver` with every statement (inside transactions too) told to `observer`; `driver` itself without one. */
export function observedDriver(driver: SqlDriver, observer: QueryObserver | undefined): SqlDriver {
  if (observer === undefined) return driver;
  const outside = observedClient(driver, observer);
  return {
    query: outside.query,
    transaction: (work) => driver.transaction((client) => work(observedClient(client, observer))),
    close: () => driver.close(),
  };
}
