/**
 * The one table of `verify`/`createVerifier` option fields (kind, range, default), from which the known keys, the
 * defaults and the checks of the scalar options derive, and the one integer check every layer's options use.
 * @module
 */
import { OptionsError } from './errors.js';

/** An integer option: its inclusive range and its default. */
export interface IntegerField {
  readonly kind: 'integer';
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/** A boolean option and its default. */
export interface BooleanField {
  readonly kind: 'boolean';
  readonly default: boolean;
}

/** An option with a check of its own (a list, a seam, an enum, a signal): only its name is declared here. */
export interface CustomField {
  readonly kind: 'custom';
}

/** One row of an options table. */
export type OptionField = IntegerField | BooleanField | CustomField;

const integerField = (min: number, max: number, value: number): IntegerField =>
  Object.freeze({ kind: 'integer', min, max, default: value });
const booleanField = (value: boolean): BooleanField => Object.freeze({ kind: 'boolean', default: value });
const CUSTOM: CustomField = Object.freeze({ kind: 'custom' });

/** Longest budget any time option accepts: ten minutes. */
const MAX_BUDGET_MS = 600_000;

/**
 * Every option of a verification, declared once (the documentation of each is on `VerifyOptions`). Its keys are the
 * known keys; integer and boolean rows carry their range and default, which `DEFAULTS`, the validation and the
 * command line's ranges read. The compiler requires a row per `VerifyOptions` member.
 */
export const VERIFY_FIELDS = Object.freeze({
  dns: booleanField(true),
  smtp: booleanField(true),
  allowSmtpUtf8: booleanField(true),
  allowQuotedLocal: booleanField(false),
  allowDomainLiteral: booleanField(false),
  allowTlds: CUSTOM,
  blocklist: CUSTOM,
  allowlist: CUSTOM,
  roleIsDoNotMail: booleanField(false),
  suggestDomains: CUSTOM,
  lists: CUSTOM,
  checks: CUSTOM,
  disableChecks: CUSTOM,
  resolver: CUSTOM,
  transport: CUSTOM,
  heloHost: CUSTOM,
  mailFrom: CUSTOM,
  smtpPort: integerField(1, 65_535, 25),
  timeoutMs: integerField(1, MAX_BUDGET_MS, 10_000),
  connectTimeoutMs: integerField(1, MAX_BUDGET_MS, 5_000),
  replyTimeoutMs: integerField(1, MAX_BUDGET_MS, 5_000),
  tls: CUSTOM,
  allowAddresses: CUSTOM,
  catchAll: booleanField(true),
  catchAllTtlMs: integerField(0, 30 * 86_400_000, 3_600_000),
  trace: booleanField(false),
  maxMxHosts: integerField(1, 10, 3),
  perMxConcurrency: integerField(1, 100, 2),
  concurrency: integerField(1, 10_000, 64),
  maxRcptPerSession: integerField(1, 1_000, 20),
  maxRejectsPerSession: integerField(1, 1_000, 8),
  idleSessionMs: integerField(0, MAX_BUDGET_MS, 5_000),
  mxBackoffMs: integerField(0, 3_600_000, 30_000),
  observer: CUSTOM,
  signal: CUSTOM,
  knownResults: CUSTOM,
  knownResultsTtlMs: CUSTOM,
  fresh: booleanField(false),
  knownResultsNamespace: CUSTOM,
});

/** The name of an integer option of {@link VERIFY_FIELDS}. */
export type VerifyIntegerOption = {
  [K in keyof typeof VERIFY_FIELDS]: (typeof VERIFY_FIELDS)[K] extends IntegerField ? K : never;
}[keyof typeof VERIFY_FIELDS];

/** The name of a boolean option of {@link VERIFY_FIELDS}. */
export type VerifyBooleanOption = {
  [K in keyof typeof VERIFY_FIELDS]: (typeof VERIFY_FIELDS)[K] extends BooleanField ? K : never;
}[keyof typeof VERIFY_FIELDS];

/**
 * The integer `value` of the option `name`, or `fallback` when it is `undefined`.
 * @throws OptionsError naming `name` ("must be an integer min-max") for anything else, or out of range.
 * @example
 * integerOption(options.chunkSize, 'chunkSize', 100, 1, 10_000);
 */
export function integerOption(
  value: unknown,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OptionsError(name, `must be an integer ${min}-${max}`);
  }
  return value;
}

/** The value of the integer field `name` of `options`, checked against its row of {@link VERIFY_FIELDS}. */
export function verifyInteger(options: object, name: VerifyIntegerOption): number {
  const field: IntegerField = VERIFY_FIELDS[name];
  return integerOption((options as Record<string, unknown>)[name], name, field.default, field.min, field.max);
}

/** The value of the boolean field `name` of `options`, or its default. */
export function verifyBoolean(options: object, name: VerifyBooleanOption): boolean {
  const value = (options as Record<string, unknown>)[name];
  if (value === undefined) return VERIFY_FIELDS[name].default;
  if (typeof value !== 'boolean') throw new OptionsError(name, 'must be a boolean');
  return value;
}
