// The runner agent as a program: `npm start` (see README.md). Configured by the environment;
// stops cleanly on SIGINT / SIGTERM (running builds end, their last usage is reported).

import { startAgent } from "./agent.ts";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`ci-runner: set ${name} (see README.md)`);
    process.exit(2);
  }
  return value;
}

const agent = startAgent({
  baseUrl: process.env.HOLDFAST_URL ?? "http://127.0.0.1:8080",
  workerKey: required("HOLDFAST_WORKER_KEY"),
  serviceKey: required("HOLDFAST_SERVICE_KEY"),
  slots: Number(process.env.RUNNER_SLOTS ?? 2),
  reportEverySeconds: Number(process.env.REPORT_EVERY_SECONDS ?? 5),
});
console.log("ci-runner: waiting for builds on lane runners (Ctrl-C to stop)");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.log("ci-runner: stopping: running builds end, their usage is reported");
    void agent.stop().then(() => process.exit(0));
  });
}
