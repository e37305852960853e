/**
 * One JSON GET against an upstream, with the failure policy every source call
 * shares: a per-attempt timeout (AbortSignal), retries of retryable failures
 * with exponential backoff and full jitter, and nothing but `UpstreamError`
 * escaping. Failure kinds:
 * - `timeout`: no complete answer within the timeout (or the caller aborted);
 * - `unavailable`: connection refused or reset, 5xx, 408/429, or any other
 *   refusal (401/403/400: retrying will not help, so those are not retried);
 * - `not_found`: 404;
 * - `parse_failed`: the body is not JSON (the decoders add schema violations).
 * The bearer token goes in the Authorization header only: it is never part
 * of a URL, a log record or an error message.
 */
import { UpstreamError } from '../source.ts';

export interface Backoff {
  /** Ceiling of the first retry's wait, ms. */
  baseMs: number;
  /** Largest ceiling, ms. */
  capMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 250, capMs: 8_000 };

/**
 * Wait ceilings of retries 1…n: min(cap, base × 2^i). Each actual wait is
 * drawn uniformly from [0, ceiling) ("full jitter"), so clients that failed
 * together do not retry together.
 */
export function backoffSchedule(retries: number, backoff: Backoff = DEFAULT_BACKOFF): number[] {
  return Array.from({ length: retries }, (_, i) => Math.min(backoff.capMs, backoff.baseMs * 2 ** i));
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** setTimeout as a promise that rejects when the signal aborts. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface RetryLog {
  warn(record: object, message: string): void;
}

export interface JsonClientOptions {
  token?: string | undefined;
  timeoutMs: number;
  retries: number;
  fetch?: typeof fetch;
  backoff?: Backoff;
  sleep?: Sleep;
  /** Uniform [0, 1): the jitter source. */
  random?: () => number;
  log?: RetryLog;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  retries?: number | undefined;
}

/** Seconds of a Retry-After header (delay-seconds form), as ms; null otherwise. */
function retryAfterMs(header: string | null): number | null {
  if (header === null || !/^\d+$/.test(header.trim())) return null;
  return Number(header.trim()) * 1000;
}

/** Longest Retry-After honoured: a misbehaving upstream must not park a refresh for hours. */
const MAX_RETRY_AFTER_MS = 60_000;

class AttemptError extends UpstreamError {
  constructor(
    kind: UpstreamError['kind'],
    message: string,
    status?: number,
    readonly retry = kind === 'timeout' || kind === 'unavailable',
    readonly retryAfter: number | null = null,
  ) {
    super(kind, message, status);
  }
}

function networkCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return 'network error';
}

export class JsonClient {
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly fetchImpl: typeof fetch;
  private readonly backoff: Backoff;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly log: RetryLog | undefined;

  constructor(options: JsonClientOptions) {
    this.token = options.token;
    this.timeoutMs = options.timeoutMs;
    this.retries = options.retries;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.log = options.log;
  }

  /** GETs `url` and parses its JSON body, retrying per the policy above. */
  async get(url: string, what: string, options: RequestOptions = {}): Promise<unknown> {
    const retries = options.retries ?? this.retries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const schedule = backoffSchedule(retries, this.backoff);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt(url, what, timeoutMs, options.signal);
      } catch (error) {
        if (!(error instanceof AttemptError)) throw error;
        const failure = error;
        if (options.signal?.aborted || attempt >= retries || !failure.retry) {
          // Callers see the plain contract type, not the attempt bookkeeping.
          throw new UpstreamError(failure.kind, failure.message, failure.status);
        }
        const jitter = Math.floor(this.random() * schedule[attempt]!);
        const delayMs = Math.max(jitter, Math.min(failure.retryAfter ?? 0, MAX_RETRY_AFTER_MS));
        this.log?.warn(
          { upstream: what, attempt: attempt + 1, kind: failure.kind, status: failure.status, delayMs },
          'upstream request failed; retrying',
        );
        try {
          await this.sleep(delayMs, options.signal);
        } catch {
          throw new UpstreamError('timeout', `${what}: aborted by the caller`);
        }
      }
    }
  }

  private async attempt(
    url: string,
    what: string,
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<unknown> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json', 'odata-maxversion': '4.0' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const aborted = (): AttemptError =>
      callerSignal?.aborted
        ? new AttemptError('timeout', `${what}: aborted by the caller`, undefined, false)
        : new AttemptError('timeout', `${what}: no answer within ${timeoutMs} ms`);

    let response: Response;
    try {
      response = await this.fetchImpl(url, { headers, signal });
    } catch (error) {
      if (signal.aborted) throw aborted();
      throw new AttemptError('unavailable', `${what}: ${networkCode(error)}`);
    }
    if (!response.ok) {
      // Release the connection; the body of an error answer is not needed.
      await response.body?.cancel().catch(() => {});
      const status = response.status;
      if (status === 404) throw new AttemptError('not_found', `${what}: not found (404)`, 404);
      const transient = status >= 500 || status === 408 || status === 429;
      throw new AttemptError(
        'unavailable',
        `${what}: upstream answered ${status}`,
        status,
        transient,
        retryAfterMs(response.headers.get('retry-after')),
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw aborted();
      throw new AttemptError('unavailable', `${what}: ${networkCode(error)} while reading the body`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new AttemptError(
        'parse_failed',
        `${what}: malformed JSON (${(error as Error).message})`,
        response.status,
      );
    }
  }
}
