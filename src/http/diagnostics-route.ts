/**
 * `GET /v1/diagnostics`: the report of `diagnose()` for the server's own host. Off by default: it tells the
 * caller the server's egress address and reputation, and each run opens a connection to a mail server, so an
 * operator turns it on (`diagnostics: true`, `mailvet serve --diagnostics`). When on, a key with the `admin`
 * scope may call it (every key of `MAILVET_API_KEYS` holds it); one run is shared by concurrent callers and its report reused for
 * `cacheMs`.
 * @module
 */
import { diagnose } from '../doctor/diagnose.js';
import type { DiagnoseOptions } from '../doctor/options.js';
import type { DiagnosticsReport } from '../doctor/types.js';
import { OptionsError } from '../errors.js';
import type { VerifyOptions } from '../options.js';
import type { Operation } from './context.js';
import { HttpError } from './errors.js';

/** Settings of `GET /v1/diagnostics` (the handler's `diagnostics` option, when an object). */
export interface DiagnosticsRouteOptions {
  /**
   * Options of `diagnose()`. @default the verifier's own settings (`verifierOptions`: resolver, transport,
   * heloHost, mailFrom, smtpPort, allowAddresses, allowTlds), else diagnose()'s defaults
   */
  readonly options?: DiagnoseOptions;
  /** How long a report is served again before a new run, in milliseconds (0: every request runs). @default 60000 */
  readonly cacheMs?: number;
}

/** Runs (or reuses) a diagnosis. */
export type DiagnosticsRunner = () => Promise<DiagnosticsReport>;

const SHARED_OPTIONS = [
  'resolver',
  'transport',
  'heloHost',
  'mailFrom',
  'smtpPort',
  'allowAddresses',
  'allowTlds',
] as const;

/**
 * The runner behind the route, or `undefined` when the route is off. Validates `cacheMs` now; the diagnose
 * options are validated on each run (a bad one answers 500 and is logged).
 */
export function diagnosticsRunner(
  setting: boolean | DiagnosticsRouteOptions | undefined,
  verifierOptions: VerifyOptions | undefined,
  clock: () => number,
): DiagnosticsRunner | undefined {
  if (setting === undefined || setting === false) return undefined;
  if (setting !== true && (typeof setting !== 'object' || setting === null)) {
    throw new OptionsError('diagnostics', 'must be a boolean or { options, cacheMs }');
  }
  const route = setting === true ? {} : setting;
  const cacheMs = route.cacheMs ?? 60_000;
  if (!Number.isInteger(cacheMs) || cacheMs < 0 || cacheMs > 86_400_000) {
    throw new OptionsError('diagnostics.cacheMs', 'must be an integer 0-86400000');
  }
  const inherited: Record<string, unknown> = {};
  for (const key of SHARED_OPTIONS) {
    if (verifierOptions?.[key] !== undefined) inherited[key] = verifierOptions[key];
  }
  const options: DiagnoseOptions = { ...(inherited as DiagnoseOptions), ...route.options };
  let running: Promise<DiagnosticsReport> | undefined;
  let cached: { report: DiagnosticsReport; until: number } | undefined;
  return () => {
    if (cached !== undefined && clock() < cached.until) return Promise.resolve(cached.report);
    running ??= diagnose(options)
      .then((report) => {
        if (cacheMs > 0) cached = { report, until: clock() + cacheMs };
        return report;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

/** Answers with the diagnostics report, or 404 when the route is off. */
export const getDiagnostics: Operation = async ({ services, json }) => {
  if (services.diagnostics === undefined) {
    throw new HttpError('not_found', 'diagnostics are off on this server (see docs/http.md)');
  }
  return json(200, await services.diagnostics());
};
