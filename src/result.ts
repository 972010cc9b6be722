/**
 * The verification result (the API's wire shape), its status taxonomy and the score rubric.
 * @module
 */

/** Every headline verdict, in order of preference for sending. */
export const STATUSES = ['valid', 'invalid', 'catch_all', 'unknown', 'do_not_mail'] as const;

/** Headline verdict of a verification. */
export type Status = (typeof STATUSES)[number];

/**
 * Every `sub_status`, mapped to the one `status` it may accompany.
 * The list is closed: docs/taxonomy.md explains each entry.
 */
export const SUB_STATUS_OF = {
  failed_syntax_check: 'invalid',
  no_dns_entries: 'invalid',
  does_not_accept_mail: 'invalid',
  unroutable_ip_address: 'invalid',
  mailbox_not_found: 'invalid',
  mailbox_disabled: 'invalid',
  mailbox_quota_exceeded: 'invalid',
  greylisted: 'unknown',
  mail_server_temporary_error: 'unknown',
  mail_server_did_not_respond: 'unknown',
  timeout_exceeded: 'unknown',
  failed_smtp_connection: 'unknown',
  forcible_disconnect: 'unknown',
  antispam_system: 'unknown',
  dns_error: 'unknown',
  smtp_protocol_error: 'unknown',
  exception_occurred: 'unknown',
  smtp_not_checked: 'unknown',
  disposable: 'do_not_mail',
  role_based: 'do_not_mail',
  blocklisted: 'do_not_mail',
} as const satisfies Record<string, Status>;

/** Specific reason for a verdict; `null` when the status needs none (`valid`, `catch_all`). */
export type SubStatus = keyof typeof SUB_STATUS_OF;

/** Every `sub_status` value. */
export const SUB_STATUSES = Object.keys(SUB_STATUS_OF) as SubStatus[];

/** A final verdict produced by a check: the verifier stops at the first one. */
export interface Verdict {
  readonly status: Status;
  readonly sub_status: SubStatus | null;
}

/** How the catch-all probe of the domain ended. */
export type CatchAllProbe = 'accepted' | 'refused' | 'inconclusive' | 'not_run';

/**
 * The result of verifying one address: the `/v1` API's wire shape, in snake_case.
 * Fields may be added in later versions, never removed.
 */
export interface VerificationResult {
  /** The input as given, with leading and trailing white space removed. */
  email: string;
  /** The address in canonical form (`local@ascii-domain`), or `null` when the syntax check failed. */
  normalized: string | null;
  /** The local part, or `null` when the input has no recognisable `local@domain` shape. */
  user: string | null;
  /** The domain in ASCII (punycode) form, lower case, or `null` when none could be read. */
  domain: string | null;
  /** Headline verdict. */
  status: Status;
  /** Specific reason for the verdict, or `null`. */
  sub_status: SubStatus | null;
  /** Quality score, an integer from 0 to 100 (see docs/scoring.md). */
  score: number;
  /** The domain is a throwaway (disposable) provider. */
  disposable: boolean;
  /** The local part names a role (info, sales, postmaster, ...) rather than a person. */
  role: boolean;
  /** The domain is a free consumer mail provider. */
  free: boolean;
  /** The domain's mail server accepts mail for any local part. */
  accept_all: boolean;
  /** A suggested correction of a likely typo, as a full address, or `null`. */
  did_you_mean: string | null;
  /** The mail exchanger used (or the first one found when none could be used), or `null`. */
  mx_record: string | null;
  /** The mail provider recognised from the MX host names (google, microsoft, ...), or `null`. */
  smtp_provider: string | null;
  /**
   * Why the verdict is what it is, for people: the syntax rule broken, the list that matched, the address the
   * SSRF guard refused and how to allow it, the SMTP reply that decided. Present when a check knows more than
   * `sub_status` says (never for a plain `valid`); the wording may change between versions, so match on
   * `status`/`sub_status`, not on this.
   */
  reason?: string;
  /** The SMTP commands and replies exchanged, present only when the `trace` option is on. */
  smtp_transcript?: string[];
  /**
   * When the verdict was found (ISO 8601, UTC), present when the verifier keeps known results (option
   * `knownResults`, on in `mailvet serve` with a durable store): for a result a known one answered, when its mail
   * server was asked; otherwise, when this verification ended.
   */
  checked_at?: string;
}

/** Every field a result always has, in wire order (all but the optional `reason`, `smtp_transcript` and `checked_at`). */
export const RESULT_FIELDS = Object.freeze([
  'email',
  'normalized',
  'user',
  'domain',
  'status',
  'sub_status',
  'score',
  'disposable',
  'role',
  'free',
  'accept_all',
  'did_you_mean',
  'mx_record',
  'smtp_provider',
] as const satisfies readonly (keyof VerificationResult)[]);

/** True when `value` is one of {@link STATUSES}. */
export function isStatus(value: unknown): value is Status {
  return typeof value === 'string' && (STATUSES as readonly string[]).includes(value);
}

/** True when `value` is one of {@link SUB_STATUSES}. */
export function isSubStatus(value: unknown): value is SubStatus {
  return typeof value === 'string' && Object.hasOwn(SUB_STATUS_OF, value);
}

/** Builds a {@link Verdict} from a sub-status, taking the status it belongs to from the taxonomy. */
export function verdictOf(subStatus: SubStatus): Verdict {
  return { status: SUB_STATUS_OF[subStatus], sub_status: subStatus };
}
