/**
 * The SMTP spans (docs/operations.md, "Traces"): `mailvet.smtp.rcpt` (one attempt at one mail host address),
 * `mailvet.smtp.session` (opening a session: connect, greeting, EHLO, STARTTLS), `mailvet.smtp.commands` (one
 * command group: `MAIL FROM` and `RCPT TO`, pipelined or not) and `mailvet.smtp.catch_all`. Each names the mail
 * host, never the address. Runtime-free: the SMTP check (core) and the session pool (seams) both start them.
 * @module
 */
import type { Attributes } from '@opentelemetry/api';
import { childSpan, endSpan, type TraceSpan } from './tracing.js';

/** A mail host address as the spans name it (the pool's `PoolTarget`). */
export interface SpanTarget {
  /** IP address. */
  readonly host: string;
  /** TCP port. */
  readonly port: number;
  /** The MX host name. */
  readonly hostname: string;
}

/** How a probe ended, as the spans record it (the pool's `RcptOutcome`). */
export type SpanOutcome =
  | {
      readonly kind: 'reply';
      readonly stage: string;
      readonly reply: { readonly code: number };
      readonly reused: boolean;
    }
  | { readonly kind: 'no_smtputf8'; readonly reused: boolean };

/** The semantic-convention attributes of a mail host: its MX name, its IP address and port. */
export function targetAttributes(target: SpanTarget): Attributes {
  return {
    'server.address': target.hostname,
    'server.port': target.port,
    'network.peer.address': target.host,
    'network.peer.port': target.port,
    'network.transport': 'tcp',
  };
}

/** Starts span `name` about `target` under `parent`; `undefined` when `parent` is (nothing traced). */
export function smtpSpan(
  parent: TraceSpan | undefined,
  name: string,
  target: SpanTarget,
): TraceSpan | undefined {
  return parent === undefined ? undefined : childSpan(parent, name, targetAttributes(target));
}

/** What one command group sends, as recorded on its `mailvet.smtp.commands` span. */
export interface CommandGroupShape {
  /** The group opens an envelope (`MAIL FROM`). */
  readonly mailFrom: boolean;
  /** `RCPT TO` commands in the group. */
  readonly recipients: number;
  /** Sent as one pipelined group (RFC 2920). */
  readonly pipelined: boolean;
}

/** Starts a `mailvet.smtp.commands` span about `target` under `parent`, recording the group's shape. */
export function commandsSpan(
  parent: TraceSpan | undefined,
  target: SpanTarget,
  shape: CommandGroupShape,
): TraceSpan | undefined {
  const span = smtpSpan(parent, 'mailvet.smtp.commands', target);
  span?.span.setAttributes({
    'mailvet.smtp.mail_from': shape.mailFrom,
    'mailvet.smtp.recipients': shape.recipients,
    'mailvet.smtp.pipelined': shape.pipelined,
  });
  return span;
}

/** Ends `span` with what the server answered: the reply code and the command it answered, and session reuse. */
export function endWithOutcome(span: TraceSpan | undefined, outcome: SpanOutcome): void {
  if (span === undefined) return;
  span.span.setAttribute('mailvet.smtp.reused', outcome.reused);
  if (outcome.kind === 'reply') {
    span.span.setAttributes({
      'mailvet.smtp.reply.code': outcome.reply.code,
      'mailvet.smtp.stage': outcome.stage,
    });
  } else span.span.setAttribute('mailvet.smtp.stage', 'no_smtputf8');
  endSpan(span);
}
