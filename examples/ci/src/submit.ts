// Queues one build: `npm run submit -- ACCOUNT [METER] [BUILD_SECONDS]` (service key).

import { Holdfast, HoldfastError } from "@holdfast/client";

const [accountId, meter = "linux-2cpu", seconds = "30"] = process.argv.slice(2);
if (!accountId || !process.env.HOLDFAST_SERVICE_KEY) {
  console.error("usage: HOLDFAST_SERVICE_KEY=hf_… npm run submit -- ACCOUNT [METER] [BUILD_SECONDS]");
  process.exit(2);
}
const hf = new Holdfast({
  baseUrl: process.env.HOLDFAST_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.HOLDFAST_SERVICE_KEY,
});
try {
  const job = await hf.submitJob({ account_id: accountId, kind: "ci", payload: { meter, build_seconds: Number(seconds) } });
  console.log(`queued build ${job.job_id} for ${accountId} on ${meter} (${seconds} s)`);
} catch (error) {
  if (!(error instanceof HoldfastError)) throw error;
  console.error(`refused: ${error.code}: ${error.serverMessage}`); // account_suspended, busy, …
  process.exit(1);
}
