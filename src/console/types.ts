/**
 * The wire shapes the console reads (the API's, see docs/http.md).
 * @module
 */

/** A verification result as the API sends it. */
export interface Result {
  readonly email: string;
  readonly status: 'valid' | 'invalid' | 'catch_all' | 'unknown' | 'do_not_mail';
  readonly sub_status: string | null;
  readonly score: number;
  readonly disposable: boolean;
  readonly role: boolean;
  readonly free: boolean;
  readonly accept_all: boolean;
  readonly did_you_mean: string | null;
  readonly mx_record: string;
  readonly smtp_provider: string | null;
  readonly reason?: string;
  readonly smtp_transcript?: string[];
}

/** A bulk job as the API sends it. */
export interface Job {
  readonly id: string;
  readonly name: string;
  readonly status: 'queued' | 'processing' | 'complete' | 'failed';
  readonly total: number;
  readonly completed: number;
  readonly progress: number;
  readonly created_at: string;
  readonly started_at: string | null;
  readonly completed_at: string | null;
  readonly counts: Readonly<Record<Result['status'], number>>;
  /** Greylisting retries: positions waiting for one and when the next is due (absent from older servers). */
  readonly retries?: {
    readonly waiting: number;
    readonly next_retry_at: string | null;
    readonly delays_ms: readonly number[];
  };
}
