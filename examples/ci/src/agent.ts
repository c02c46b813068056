// The runner agent: `slots` runners, each a worker loop on the `runners` lane. A leased job
// is a build; while it runs the reporter bills its seconds. A build ends when it is done
// (the job succeeds), when the reporter stops it because its account is suspended or its
// usage refused (the job fails with that reason), or when a user cancels it (cooperative
// cancel: the job ends `canceled`). Either way its last seconds are reported first.

import { setTimeout as sleep } from "node:timers/promises";
import { CancelRequested, type HandlerResult, Holdfast, type JobContext, runWorker } from "@holdfast/client";
import { UsageReporter } from "./reporter.ts";

export interface AgentConfig {
  /** The holdfast server, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Leases, heartbeats and finishes the builds. */
  workerKey: string;
  /** Sends the usage debits. */
  serviceKey: string;
  /** Where the usage debits go, when not `baseUrl` (a proxy in the end-to-end test). */
  usageUrl?: string;
  slots?: number;
  reportEverySeconds?: number;
  leaseSeconds?: number;
  lane?: string;
  log?: (line: string) => void;
}

/** What a build job's payload says: the meter it runs on and, in this simulation, how long it takes. */
interface BuildPayload {
  meter: string;
  build_seconds: number;
}

export interface Agent {
  reporter: UsageReporter;
  /** Stops leasing, lets running builds end, sends their last reports. */
  stop(): Promise<void>;
}

export function startAgent(config: AgentConfig): Agent {
  const log = config.log ?? ((line: string) => console.log(line));
  const worker = new Holdfast({ baseUrl: config.baseUrl, apiKey: config.workerKey });
  const service = new Holdfast({ baseUrl: config.usageUrl ?? config.baseUrl, apiKey: config.serviceKey });
  const stops = new Map<string, AbortController>(); // job id → stops its build
  const reporter = new UsageReporter({
    hf: service,
    intervalSeconds: config.reportEverySeconds ?? 5,
    onStop: (jobId, reason) => stops.get(jobId)?.abort(new BuildStopped(reason)),
    onError: (error) => log(`usage report failed, will resend: ${String(error)}`),
  });
  reporter.start();
  const shutdown = new AbortController();
  const handler = (context: JobContext) => runBuild(context, reporter, stops, log);
  const loops = Array.from({ length: config.slots ?? 2 }, (_, slot) =>
    runWorker(worker, {
      lane: config.lane ?? "runners",
      workerId: `runner-${process.pid}-${slot}`,
      leaseSeconds: config.leaseSeconds ?? 30,
      waitMs: 1000,
      handler,
      signal: shutdown.signal,
      onLeaseLost: (job) => log(`${job.job_id}: lease lost, build abandoned`),
      onError: (error) => log(`runner ${slot}: ${String(error)}`),
    }),
  );
  return {
    reporter,
    stop: async () => {
      shutdown.abort();
      await Promise.all(loops);
      await reporter.stop();
    },
  };
}

/** The job's payload as a build; throws (the job fails, nothing billed) when it is not one. */
function buildPayload(payload: unknown): BuildPayload {
  const { meter, build_seconds } = (payload ?? {}) as Partial<BuildPayload>;
  if (typeof meter !== "string" || typeof build_seconds !== "number" || !(build_seconds > 0)) {
    throw new Error('payload must be {"meter": "<a meter of the rate card>", "build_seconds": <positive number>}');
  }
  return { meter, build_seconds };
}

/** The reason a build was stopped by the reporter (an API code such as `account_suspended`). */
class BuildStopped extends Error {
  override name = "BuildStopped";
}

/** One build under the reporter's meter; throws (the job fails) when the reporter stopped it. */
async function runBuild(
  { job, signal }: JobContext,
  reporter: UsageReporter,
  stops: Map<string, AbortController>,
  log: (line: string) => void,
): Promise<HandlerResult> {
  const { meter, build_seconds } = buildPayload(job.payload);
  const stop = new AbortController();
  stops.set(job.job_id, stop);
  reporter.track({ jobId: job.job_id, accountId: job.account_id, meter, startedAtMs: Date.now() });
  log(`${job.job_id}: build started for ${job.account_id} on ${meter}`);
  try {
    // The build itself; a real runner would start its VM or container here and kill it on abort.
    await sleep(build_seconds * 1000, undefined, { signal: AbortSignal.any([signal, stop.signal]) }).catch(() => {});
  } finally {
    stops.delete(job.job_id);
    await reporter.finish(job.job_id); // the last seconds, whatever ended the build
  }
  if (stop.signal.aborted) {
    log(`${job.job_id}: stopped (${String(stop.signal.reason?.message)})`);
    throw new Error(`runner stopped: ${stop.signal.reason?.message}`);
  }
  if (signal.reason instanceof CancelRequested) log(`${job.job_id}: canceled by the user`);
  else log(`${job.job_id}: build finished`);
  return {}; // metered work holds nothing: there is nothing to capture
}
