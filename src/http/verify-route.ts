/**
 * `GET /v1/verify`, `GET /v1/openapi.json` and `GET /healthz`.
 * @module
 */
import type { VerifyCallOptions } from '../options.js';
import type { Operation } from './context.js';
import { HttpError } from './errors.js';
import { reserveAddresses } from './key-limits.js';
import { VERIFY_TIMEOUT } from './limits.js';
import { booleanParam, numberParam, queryParam } from './params.js';
import { wireResultJson } from './wire.js';

/** Most `timeout` values whose overrides are kept (each is asked for by clients; the default is one of them). */
const MAX_KEPT_BUDGETS = 32;

/** The frozen overrides per `timeout` in ms: the verifier reads a frozen object once, then looks it up. */
const overridesByTimeout = new Map<number, VerifyCallOptions>();

/** The verifier's overrides for a `timeout` of `timeoutMs`: the budget and the bound of every mail-server wait. */
function timeoutOverrides(timeoutMs: number): VerifyCallOptions {
  let overrides = overridesByTimeout.get(timeoutMs);
  if (overrides === undefined) {
    overrides = Object.freeze({ timeoutMs, connectTimeoutMs: timeoutMs, replyTimeoutMs: timeoutMs });
    if (overridesByTimeout.size < MAX_KEPT_BUDGETS) overridesByTimeout.set(timeoutMs, overrides);
  }
  return overrides;
}

/** Most (timeout, tenant, fresh) overrides kept, so a request reuses the frozen object the verifier split once. */
const MAX_KEPT_CALLS = 1024;

/** The frozen overrides per timeout, tenant and `fresh`. */
const overridesByCall = new Map<string, VerifyCallOptions>();

/**
 * The verifier's overrides for a request: the budget of {@link timeoutOverrides}, the tenant as the namespace of
 * known results (one tenant's kept results never answer another's), and `fresh`. Only the budget without a tenant
 * or `fresh` (no authentication, as in tests and local use).
 */
function callOverrides(timeoutMs: number, tenant: string | undefined, fresh: boolean): VerifyCallOptions {
  const budget = timeoutOverrides(timeoutMs);
  if (tenant === undefined && !fresh) return budget;
  const key = `${timeoutMs}\n${fresh}\n${tenant ?? ''}`;
  let overrides = overridesByCall.get(key);
  if (overrides === undefined) {
    overrides = Object.freeze({
      ...budget,
      ...(tenant === undefined ? {} : { knownResultsNamespace: tenant }),
      ...(fresh ? { fresh } : {}),
    });
    if (overridesByCall.size < MAX_KEPT_CALLS) overridesByCall.set(key, overrides);
  }
  return overrides;
}

/**
 * Verifies `?email=` waiting at most `?timeout=` seconds (default {@link VERIFY_TIMEOUT}) for the mail server, as
 * the specification defines the parameter: it is both the verification's budget (`timeoutMs`) and the bound of
 * each mail-server wait (`connectTimeoutMs`: the TCP connect and the greeting; `replyTimeoutMs`: every later
 * reply), so a slow-greeting server gets the
 * whole `timeout` rather than the verifier's default 5 s (the verifier applies such budget-only overrides without
 * re-resolving its options). `?fresh=true` asks the mail server even when the verifier keeps a known result; the
 * caller's tenant is the namespace of known results. No abort signal is passed: a verification is bounded by its timeout, and a signal per request would cost
 * every request more than a client that went away costs the server.
 */
export const verifyEmail: Operation = async (context) => {
  const { query, services, jsonText, principal, tenant } = context;
  const email = queryParam(query, 'email');
  if (email === null || email.trim() === '') throw new HttpError('invalid_request', 'email is required');
  const timeout = numberParam(
    query,
    'timeout',
    VERIFY_TIMEOUT.default,
    VERIFY_TIMEOUT.min,
    VERIFY_TIMEOUT.max,
  );
  // A key with a daily quota spends one address of it (given back if the verification throws).
  const release = principal?.addressesPerDay === undefined ? undefined : await reserveAddresses(context, 1);
  const fresh = booleanParam(query, 'fresh');
  let result: Awaited<ReturnType<typeof services.verifier.verify>>;
  try {
    result = await services.verifier.verify(email, callOverrides(Math.round(timeout * 1000), tenant, fresh));
  } catch (error) {
    await release?.();
    throw error;
  }
  if (tenant !== undefined) services.usage.meter.count(tenant, 'single', result.status);
  return jsonText(200, wireResultJson(result));
};

/** Serves the OpenAPI document. */
export const getOpenApi: Operation = async ({ services, json }) => json(200, services.openapi);

/**
 * Liveness and the job store: 200 `{ status: 'ok', store }` where `store` is `memory` (jobs live in process) or
 * `up` (a durable store answered a trivial query within 2 s); 503 `service_unavailable` when the durable store
 * does not answer, or found damage when it opened (a complete job whose results cannot all be read) (a closed handler answers 503 before this runs). On an API node of a worker fleet it also
 * reports `queue: 'up'` and `workers`, the number of workers with a live heartbeat (503 when the queue's Redis
 * does not answer).
 */
export const getHealth: Operation = async ({ services, json }) => {
  const [store, fleet] = await Promise.all([
    services.jobs.storeHealth?.() ?? 'memory',
    services.jobs.fleetHealth?.(),
  ]);
  if (store === 'down') throw new HttpError('service_unavailable', 'the job store does not answer');
  if (store === 'damaged') {
    throw new HttpError(
      'service_unavailable',
      "the job store is damaged: some complete jobs' results cannot all be read (the server log names them)",
    );
  }
  if (fleet?.queue === 'down') throw new HttpError('service_unavailable', 'the queue does not answer');
  return json(200, {
    status: 'ok',
    store,
    ...(fleet === undefined ? {} : { queue: fleet.queue, workers: fleet.workers }),
  });
};
