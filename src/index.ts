/**
 * mailvet: an embeddable email-verification engine.
 *
 * `verify(email, options)` and `createVerifier(options)` run composable checks (syntax, typo, lists, MX, SMTP
 * probe with catch-all detection). Network access goes only through a {@link Resolver} (DNS) and a
 * {@link Transport} (TCP). `BulkJobManager` runs asynchronous bulk jobs in process; `mailvet/http` exposes the
 * `/v1` API and `mailvet/testing` holds fakes and contract suites.
 * @module mailvet
 */

export {
  type BulkLimit,
  JobFailedError,
  JobFinishedError,
  JobInputError,
  JobNotCompleteError,
  JobNotFoundError,
  JobNotProcessingError,
  LimitError,
  StoreError,
} from './bulk/errors.js';
export type { HeldBytes } from './bulk/held-bytes.js';
export type { JobEvents } from './bulk/listeners.js';
export { BulkJobManager } from './bulk/manager.js';
export { memoryJobStore } from './bulk/memory-store.js';
export { BULK_DEFAULTS } from './bulk/options.js';
export type { JobFacts, JobRules } from './bulk/rules.js';
export {
  type FleetChunkState,
  type FleetCommitted,
  type FleetHealth,
  type FleetJobStore,
  isFleetStore,
  type JobEngine,
  type JobRunner,
  type NewJob,
  type OverdueRetry,
  type ResultsView,
  type RunnerContext,
  type UnqueuedInputs,
} from './bulk/runner.js';
export type { EncodedSource } from './bulk/source.js';
export {
  type AddOptions,
  type Awaitable,
  type BulkJobManagerApi,
  type BulkJobManagerOptions,
  type BulkVerifier,
  type Clock,
  type CreateJobInput,
  type DurableJobStore,
  type GreylistRetryOptions,
  isDurableStore,
  JOB_STATUSES,
  type Job,
  type JobAccess,
  type JobError,
  type JobEventName,
  type JobList,
  type JobListener,
  type JobRecord,
  type JobRetries,
  type JobSource,
  type JobStatus,
  type JobStore,
  type ListJobsOptions,
  type ResultCommit,
  type ResultsOptions,
  type SourcedResults,
  type SourceRowsInput,
  type StoreDamage,
  type StoredRetry,
  type StoreHealth,
  type StreamOptions,
} from './bulk/types.js';
export {
  dayOf,
  type LimitStore,
  type QuotaAnswer,
  type TokenAnswer,
  USAGE_KINDS,
  type UsageCount,
  type UsageKind,
  type UsageStore,
} from './bulk/usage.js';
export { type MemoryUsageOptions, memoryUsageStore } from './bulk/usage-memory.js';
export {
  createUsageMeter,
  DEFAULT_USAGE_FLUSH_MS,
  type UsageMeter,
  type UsageMeterOptions,
} from './bulk/usage-meter.js';
export { DEFAULT_CHECKS, listsCheck, mxCheck, smtpCheck, syntaxCheck, typoCheck } from './checks/index.js';
export { createCheckState, type KnownResultsCall } from './checks/state.js';
export {
  type InvalidAddress,
  parseAddress,
  SYNTAX_FAILURES,
  type SyntaxFailure,
  type SyntaxOptions,
  type SyntaxResult,
  type ValidAddress,
} from './checks/syntax.js';
export type {
  AddressParts,
  BuiltinCheckName,
  Check,
  CheckOutcome,
  CheckState,
  MailHost,
} from './checks/types.js';
export {
  PROVIDER_PROFILES,
  type ProviderProfile,
  type ProviderProfileId,
  profileOfHost,
} from './classify/profiles.js';
export { providerOf, providerOfHost } from './classify/provider.js';
export {
  CLASSIFICATION_RULES,
  type ClassificationRule,
  classifyError,
  classifyReply,
  explainReply,
  type ReplyContext,
  type ReplyReading,
  type SmtpOutcome,
} from './classify/reply.js';
export { type DomainMatcher, disposableDomains, isDisposableDomain } from './data/disposable.js';
export { freeDomains, isFreeDomain } from './data/free.js';
export type { Lookup } from './data/lookup.js';
export { isRoleLocalPart, normalizeRoleLocalPart, roleNames } from './data/role.js';
export { LIST_SOURCES } from './data/sources.js';
export type { ListMeta, ListSource } from './data/types.js';
export {
  type CachedResolver,
  type CachedResolverOptions,
  type CachedResolverStats,
  cachedResolver,
} from './dns/cached.js';
export { type NodeResolver, type NodeResolverOptions, nodeResolver } from './dns/node.js';
export { reverseName } from './dns/reverse.js';
export type { DnsAnswer, LookupOptions, MxRecord, Resolver } from './dns/types.js';
export { type BlocklistInfo, DEFAULT_BLOCKLISTS } from './doctor/blocklists.js';
export { diagnose } from './doctor/diagnose.js';
export { DIAGNOSE_DEFAULTS, type DiagnoseOptions } from './doctor/options.js';
export { evaluateSpf, type SpfEvaluation, type SpfOptions, type SpfResult } from './doctor/spf.js';
export {
  CHECK_NAMES,
  type CheckName,
  type CheckStatus,
  type DiagnosticCheck,
  type DiagnosticsReport,
  READINESS_CHECKS,
} from './doctor/types.js';
export {
  DnsError,
  type DnsFailure,
  ERROR_CODES,
  type ErrorCode,
  isMailvetError,
  isSmtpError,
  MailvetError,
  OptionsError,
  SmtpError,
  type SmtpEvidence,
  type SmtpFailure,
} from './errors.js';
export { type BatchOptions, batchedKnownResults, MAX_BATCH } from './known/batch.js';
export {
  MEMORY_KNOWN_DEFAULTS,
  type MemoryKnownResultsOptions,
  memoryKnownResults,
} from './known/memory.js';
export {
  DEFAULT_KNOWN_TTL,
  KNOWN_STATUSES,
  type KnownResultsTtl,
  type KnownStatus,
  MAX_KNOWN_TTL_MS,
} from './known/ttl.js';
export {
  type KnownEntry,
  type KnownResult,
  type KnownResults,
  type KnownVerdict,
  knownKey,
} from './known/types.js';
export {
  type AddressGuard,
  BLOCKED_IPV4,
  BLOCKED_IPV6,
  type BlockedRange,
  type CidrRange,
  createAddressGuard,
  EMBEDDED_IPV4,
  type GuardDecision,
  type GuardReason,
  type IpAddress,
  isRoutable,
  parseCidr,
  parseCidrList,
  parseIp,
} from './net/guard.js';
export type { DnsCounters, SmtpCounters, VerifierObserver } from './observer.js';
export {
  type BooleanField,
  type CustomField,
  type IntegerField,
  type OptionField,
  VERIFY_FIELDS,
} from './option-fields.js';
export {
  DEFAULTS,
  type ListOptions,
  type ListPatch,
  type ResolvedOptions,
  resolveOptions,
  type TlsPolicy,
  VERIFIER_LEVEL_OPTIONS,
  type VerifierLevelOption,
  type VerifyCallOptions,
  type VerifyOptions,
} from './options.js';
export {
  type CatchAllProbe,
  isStatus,
  isSubStatus,
  RESULT_FIELDS,
  STATUSES,
  type Status,
  SUB_STATUS_OF,
  SUB_STATUSES,
  type SubStatus,
  type Verdict,
  type VerificationResult,
  verdictOf,
} from './result.js';
export { resultJson } from './result-json.js';
export type { PlatformDefaults, VerifierRuntime } from './runtime.js';
export {
  PENALTIES,
  STATUS_FLOOR,
  STATUS_POINTS,
  SUB_STATUS_POINTS,
  scoreOf,
  verdictOnlyResult,
} from './score.js';
export { defaultHeloHost } from './smtp/host.js';
export { type SocketChannelOptions, socketChannel } from './smtp/line-channel.js';
export {
  DEFAULT_PIPELINE_DEPTH,
  type Lease,
  type PoolTarget,
  type RcptOutcome,
  type RcptRequest,
  type SessionSettings,
} from './smtp/pool.js';
export type { CatchAllRequest, Prober, ProberStats } from './smtp/prober.js';
export { parseReply, type ReplyLimits } from './smtp/reply.js';
export { openSmtpSession, type SessionOptions } from './smtp/session.js';
export {
  parseProxyUrl,
  type SocksProxyConfig,
  type SocksTransportOptions,
  socksTransport,
} from './smtp/socks.js';
export { type TcpTransportOptions, tcpTransport } from './smtp/tcp.js';
export type {
  CommandOptions,
  ConnectOptions,
  ConnectTarget,
  LineChannel,
  MailFromOptions,
  PipelinedRcpt,
  PipelinedReplies,
  PipelineOptions,
  ServerCapabilities,
  SmtpReply,
  SmtpSession,
  SmtpStage,
  StepCheck,
  TranscriptDirection,
  TranscriptHook,
  Transport,
} from './smtp/types.js';
export { childSpan, endSpan, errorType, TRACER_NAME, type TraceSpan } from './tracing.js';
export { osaDistance } from './typo/distance.js';
export {
  createDomainSuggester,
  type DomainSuggester,
  defaultSuggester,
  type SuggestLists,
  suggestDomain,
} from './typo/suggest.js';
export { createVerifier, type Verifier, verify } from './verifier.js';
export { createVerifierWith } from './verifier-with.js';
export { WebhookInputError, WebhookRefusedError } from './webhooks/errors.js';
export {
  type MemoryWebhookLogOptions,
  memoryWebhookLog,
  WEBHOOK_EVENT_TYPES,
  type WebhookAttempt,
  type WebhookDeliveryState,
  type WebhookEventType,
  type WebhookLog,
} from './webhooks/log.js';
export { type NodeWebhookTransportOptions, nodeWebhookTransport } from './webhooks/node-transport.js';
export {
  createWebhookNotifier,
  type PreparedWebhook,
  WEBHOOK_UNREACHABLE,
  type WebhookJob,
  type WebhookJobAccess,
  type WebhookJobSource,
  type WebhookNotifier,
  type WebhookNotifierOptions,
  type WebhookServerDetail,
  type WebhookSigning,
  type WebhookSpec,
} from './webhooks/notifier.js';
export { DEFAULT_WEBHOOK_RETRY_DELAYS_MS, retryDelayMs, WEBHOOK_RETRY_JITTER } from './webhooks/schedule.js';
export type { JobWebhook, SharedWebhook, WebhookShare } from './webhooks/share.js';
export { checkSecrets, generateWebhookSecret, type SignedHeaders, signWebhook } from './webhooks/sign.js';
export {
  type CheckedTarget,
  type CheckTargetOptions,
  checkTarget,
  MAX_WEBHOOK_URL_LENGTH,
  parseWebhookUrl,
  type WebhookSettingNames,
  type WebhookUrl,
} from './webhooks/target.js';
export type { WebhookRequest, WebhookResponse, WebhookTransport } from './webhooks/transport.js';
