/**
 * The spans of one verification: `mailvet.verify` around it, `mailvet.check.<name>` around each check it runs
 * (docs/operations.md, "Traces"). Runtime-free.
 * @module
 */
import type { Check, CheckOutcome, CheckState } from './checks/types.js';
import type { VerificationResult } from './result.js';
import { childSpan, endSpan, startSpan, type TraceSpan, type TracingApi } from './tracing.js';

/**
 * Runs `verification` inside a `mailvet.verify` span (a child of the active context) once `api` is loaded, and
 * records the result's status, sub-status, provider and MX count on it. `verification` gets the span (or
 * `undefined` when it is not recorded) to start its checks' spans under.
 */
export async function tracedVerification(
  api: TracingApi | Promise<TracingApi | undefined>,
  verification: (span: TraceSpan | undefined) => Promise<VerificationResult>,
): Promise<VerificationResult> {
  const loaded = await api;
  const root = loaded === undefined ? undefined : startSpan(loaded, 'mailvet.verify', undefined);
  if (root === undefined) return verification(undefined);
  let result: VerificationResult;
  try {
    result = await verification(root);
  } catch (error) {
    endSpan(root, error);
    throw error;
  }
  root.span.setAttributes({ 'mailvet.status': result.status, 'mailvet.score': result.score });
  if (result.sub_status !== null) root.span.setAttribute('mailvet.sub_status', result.sub_status);
  if (result.smtp_provider !== null) root.span.setAttribute('mailvet.smtp_provider', result.smtp_provider);
  endSpan(root);
  return result;
}

/**
 * Runs `check` inside a `mailvet.check.<name>` span under `root`, with `state.span` set to that span while it
 * runs (the SMTP check starts its attempts, sessions and catch-all probe under it). A final verdict is recorded
 * as `mailvet.sub_status`; a check that throws is marked failed with its error's type.
 */
export function tracedCheck(
  check: Check,
  state: CheckState,
  root: TraceSpan,
): CheckOutcome | Promise<CheckOutcome> {
  const span = childSpan(root, `mailvet.check.${check.name}`, { 'mailvet.check.name': check.name });
  const done = (outcome: CheckOutcome): CheckOutcome => {
    state.span = root;
    if (outcome !== undefined) span?.span.setAttribute('mailvet.check.final', true);
    if (outcome?.sub_status != null) span?.span.setAttribute('mailvet.sub_status', outcome.sub_status);
    endSpan(span);
    return outcome;
  };
  const failed = (error: unknown): never => {
    state.span = root;
    endSpan(span, error);
    throw error;
  };
  state.span = span;
  let outcome: CheckOutcome | Promise<CheckOutcome>;
  try {
    outcome = check.run(state);
  } catch (error) {
    return failed(error);
  }
  return outcome instanceof Promise ? outcome.then(done, failed) : done(outcome);
}
