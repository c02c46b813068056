// A real `holdfast serve` for tests: a child process on a free 127.0.0.1 port with a fresh
// database (a temporary SQLite file, or a fresh PostgreSQL database when
// HOLDFAST_TEST_POSTGRES is set), its own admin key and a service and a worker key.

import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The repository root (this file is clients/typescript/test/support/server.ts). */
export const REPO = fileURLToPath(new URL("../../../../", import.meta.url));

/** The binary under test: $HOLDFAST_BIN, else the release build CI makes. */
export const HOLDFAST_BIN = process.env.HOLDFAST_BIN ?? join(REPO, "target/release/holdfast");

export interface TestServer {
  url: string;
  adminKey: string;
  serviceKey: string;
  workerKey: string;
  /** The server's log so far (stdout and stderr), for failure messages. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

export interface ServerOptions {
  /** Rate card TOML text; default: the built-in card. */
  rateCard?: string;
}

/** Starts a server and waits for `GET /healthz`; stop it with `stop()` (SIGTERM, then cleanup). */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), "holdfast-ts-"));
  const database = await freshDatabase(dir);
  const cardArgs: string[] = [];
  if (options.rateCard !== undefined) {
    await writeFile(join(dir, "rate-card.toml"), options.rateCard);
    cardArgs.push("--rate-card", join(dir, "rate-card.toml"));
  }
  const keyArgs = ["--database", database.url, ...cardArgs];
  await run(HOLDFAST_BIN, ["migrate", ...keyArgs]); // only migrate and serve create the schema
  const serviceKey = await createKey("service", keyArgs);
  const workerKey = await createKey("worker", keyArgs);
  const adminKey = `hf_${randomBytes(32).toString("hex")}`;
  const logPath = join(dir, "serve.log");
  const child = await spawnServe(keyArgs, adminKey, logPath);
  const cleanup = async () => {
    await rm(dir, { recursive: true, force: true });
    await database.drop();
  };
  return {
    url: child.url,
    adminKey,
    serviceKey,
    workerKey,
    log: () => readFile(logPath, "utf8"),
    stop: async () => {
      await child.stop();
      await cleanup();
    },
  };
}

async function createKey(role: string, args: string[]): Promise<string> {
  const { stdout } = await run(HOLDFAST_BIN, ["key", "create", "--role", role, ...args]);
  return stdout.trim();
}

/** Spawns `serve` on a free port (a port taken in between is retried) and waits for health. */
async function spawnServe(args: string[], adminKey: string, logPath: string) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const log = createWriteStream(logPath, { flags: "a" });
    const child = spawn(HOLDFAST_BIN, ["serve", "--listen", `127.0.0.1:${port}`, ...args], {
      env: { ...process.env, HOLDFAST_ADMIN_KEY: adminKey },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const stop = async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000); // SIGTERM ignored: do not hang
      await exited;
      clearTimeout(kill);
      log.end();
    };
    if (await healthy(url, exited)) return { url, stop };
    await stop();
    const text = await readFile(logPath, "utf8");
    const portTaken = text.includes("Address already in use");
    if (attempt >= 3 || !portTaken) throw new Error(`holdfast serve did not start:\n${text}`);
  }
}

/** Polls `GET /healthz` until 200 (true), the process exits (false), or 20 s pass (throws). */
async function healthy(url: string, exited: Promise<unknown>): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !gone) {
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return true;
    await delay(50);
  }
  if (gone) return false;
  throw new Error(`holdfast serve at ${url} not healthy within 20 s`);
}

interface Database {
  url: string;
  drop(): Promise<void>;
}

/** A temporary SQLite file in `dir`, or a new PostgreSQL database with a random name. */
async function freshDatabase(dir: string): Promise<Database> {
  const postgres = process.env.HOLDFAST_TEST_POSTGRES;
  if (!postgres) return { url: `sqlite://${join(dir, "holdfast.db")}`, drop: async () => {} };
  const name = `holdfast_ts_${randomBytes(6).toString("hex")}`;
  await run("psql", [postgres, "-v", "ON_ERROR_STOP=1", "-qc", `CREATE DATABASE ${name}`]);
  const base = new URL(postgres);
  base.pathname = `/${name}`;
  return {
    url: base.toString(),
    drop: async () => {
      await run("psql", [postgres, "-v", "ON_ERROR_STOP=1", "-qc", `DROP DATABASE ${name} WITH (FORCE)`]);
    },
  };
}

/** A port the OS says is free now (the caller retries if it is taken before use). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Calls `probe` every `everyMs` until it returns a value other than undefined/false, or throws at the deadline. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(everyMs);
  }
}

/** The built-in rate card's text (examples/default.toml), to extend in a test. */
export function defaultRateCard(): Promise<string> {
  return readFile(join(REPO, "examples/default.toml"), "utf8");
}
