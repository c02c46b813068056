// The usage reporter of a CI-runner platform: every `intervalSeconds` it bills each running
// runner for the whole seconds it ran since its last report, all runners in one batch debit
// (`POST /v1/debits`). Each report's idempotency key is (runner, interval), so a report that
// is retried — by the client after a lost answer, or here after a failed call — is charged
// once. A debit answer that shows the account suspended (or refuses the debit) stops the
// runners of that account.

import type { Holdfast, Schemas } from "@holdfast/client";

export interface RunningRunner {
  jobId: string;
  accountId: string;
  meter: string;
  /** When the runner started, in ms since the epoch (local clock: only differences matter). */
  startedAtMs: number;
}

/** One report as sent and answered: what the tests and the operator can check against the ledger. */
export interface Report {
  jobId: string;
  idempotencyKey: string;
  seconds: number;
  /** 201 charged, 200 a replay of an earlier charge, else the refusal's status. */
  status: number;
  code?: string;
  entryId?: string;
}

export interface ReporterOptions {
  /** A client with a `service` key (debits). */
  hf: Holdfast;
  /** Seconds between reports (default 5). */
  intervalSeconds?: number;
  /** Called once per runner the reporter wants stopped, with the reason (an API code). */
  onStop: (jobId: string, reason: string) => void;
  /** A batch call that failed as a whole (kept and sent again at the next report). */
  onError?: (error: unknown) => void;
}

const BATCH_LIMIT = 1000;

/** A report's debit, with its seconds kept apart (they are in `usage` too). */
type PendingItem = Schemas["DebitItem"] & { seconds: number };

interface Tracked extends RunningRunner {
  billedSeconds: number;
  interval: number; // index of the next report of this runner
  pending?: PendingItem; // sent, answer not known: send again as it is
  stopped: boolean; // asked to stop (once)
  refused: boolean; // a debit was refused: nothing more is sent for it
  endedAtMs?: number; // set when the runner ended: nothing after it is billed
}

export class UsageReporter {
  readonly reports: Report[] = [];
  private readonly runners = new Map<string, Tracked>();
  private queue: Promise<void> = Promise.resolve(); // reports run one at a time
  private timer: NodeJS.Timeout | undefined;
  private readonly options: ReporterOptions;

  constructor(options: ReporterOptions) {
    this.options = options;
  }

  /** Starts the periodic reports. */
  start(): void {
    const everyMs = (this.options.intervalSeconds ?? 5) * 1000;
    this.timer = setInterval(() => void this.report(), everyMs);
  }

  /** Stops the periodic reports (runners still tracked are not billed further). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.queue;
  }

  track(runner: RunningRunner): void {
    this.runners.set(runner.jobId, { ...runner, billedSeconds: 0, interval: 0, stopped: false, refused: false });
  }

  /** Bills what is left of a runner that ended (the started second counts whole), then forgets it. */
  finish(jobId: string): Promise<void> {
    return this.serially(async () => {
      const runner = this.runners.get(jobId);
      if (!runner) return;
      runner.endedAtMs = Date.now();
      await this.send([runner], Math.ceil); // a report still pending goes first, as it was…
      if (!runner.pending) await this.send([runner], Math.ceil); // …then the seconds after it
      if (runner.pending) this.options.onError?.(new Error(`${jobId}: last ${runner.pending.seconds} s not reported`));
      this.runners.delete(jobId);
    });
  }

  /** One report of every running runner (whole seconds only; the rest goes in the next one). */
  report(): Promise<void> {
    return this.serially(() => this.send([...this.runners.values()], Math.floor));
  }

  private serially(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Reports `runners`, at most 1,000 per call (the batch limit of `POST /v1/debits`). */
  private async send(runners: Tracked[], round: (seconds: number) => number): Promise<void> {
    const items = runners.flatMap((runner) => {
      const item = runner.pending ?? this.nextItem(runner, round);
      return item ? [{ runner, item }] : [];
    });
    items.forEach(({ runner, item }) => (runner.pending = item));
    for (let start = 0; start < items.length; start += BATCH_LIMIT) {
      await this.sendBatch(items.slice(start, start + BATCH_LIMIT));
    }
  }

  private async sendBatch(items: { runner: Tracked; item: PendingItem }[]): Promise<void> {
    let answer: Schemas["DebitBatchResults"];
    try {
      answer = await this.options.hf.debitBatch(items.map(({ item: { seconds: _, ...debit } }) => debit));
    } catch (error) {
      this.options.onError?.(error); // kept as pending: the same keys go again next time
      return;
    }
    answer.results.forEach((result, i) => {
      const sent = items[i];
      if (sent) this.settle(sent.runner, sent.item, result);
    });
  }

  /**
   * The debit for the seconds not billed yet, keyed by (runner, interval); none under a second
   * or after a refusal. A runner stopped for its account's suspension is still billed up to its
   * stop: the overdraft buffer is there for those last seconds.
   */
  private nextItem(runner: Tracked, round: (seconds: number) => number): PendingItem | undefined {
    const seconds = round(((runner.endedAtMs ?? Date.now()) - runner.startedAtMs) / 1000) - runner.billedSeconds;
    if (seconds < 1 || runner.refused) return undefined;
    return {
      account_id: runner.accountId,
      usage: { meter: runner.meter, seconds },
      idempotency_key: `${runner.jobId}:${runner.interval}`,
      job_ref: runner.jobId,
      seconds,
    };
  }

  private settle(runner: Tracked, item: PendingItem, result: Schemas["DebitItemResult"]): void {
    runner.pending = undefined;
    runner.interval += 1;
    const { seconds, idempotency_key: idempotencyKey } = item;
    const report: Report = { jobId: runner.jobId, idempotencyKey, seconds, status: result.status };
    if (result.entry) report.entryId = result.entry.entry_id;
    if (result.error) report.code = result.error.code;
    this.reports.push(report);
    if (result.status === 200 || result.status === 201) {
      runner.billedSeconds += seconds;
      if (result.account?.suspended_at) this.stopAccount(runner.accountId, "account_suspended");
    } else {
      // Refused (402 past the buffer, 403 banned, 409 the job's lease is gone, …): not billed, stop.
      runner.refused = true;
      this.stopRunner(runner, result.error?.code ?? `http_${result.status}`);
    }
  }

  private stopAccount(accountId: string, reason: string): void {
    for (const runner of this.runners.values()) {
      if (runner.accountId === accountId) this.stopRunner(runner, reason);
    }
  }

  private stopRunner(runner: Tracked, reason: string): void {
    if (runner.stopped) return;
    runner.stopped = true;
    this.options.onStop(runner.jobId, reason);
  }
}
