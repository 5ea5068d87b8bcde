// A real `irkit tcc serve` on loopback for the tests (SQLite in a temporary
// directory, or the PostgreSQL URL given), with the order saga's effects
// routed to workers.
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, mkdtempSync, openSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const EXAMPLES = join(ROOT, "examples/tcc/src");
export const IRKIT = process.env.IRKIT_BIN ?? join(ROOT, "target/release/irkit");
if (!existsSync(IRKIT)) throw new Error(`irkit not built: ${IRKIT} (cargo build --release -p irkit, or set IRKIT_BIN)`);

export const PROVIDERS = `
[[route]]
pattern = "inventory.*"
provider = "worker"

[[route]]
pattern = "payment.*"
provider = "worker"

[[route]]
pattern = "shipping.*"
provider = "worker"

[[route]]
pattern = "*"
provider = "echo"
`;

export async function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on("error", rej);
  });
}

export const firstLine = (stream) =>
  new Promise((res) => {
    const rl = createInterface({ input: stream });
    rl.once("line", (l) => {
      rl.close();
      res(l);
    });
  });

export class Server {
  /** `extra`: more `irkit tcc serve` flags; `database`: its store (default: SQLite in the directory). */
  static async create(extra = [], { database } = {}) {
    const s = new Server();
    s.dir = mkdtempSync(join(tmpdir(), "irkit-ts-"));
    s.database = database ?? join(s.dir, "host.db");
    s.port = await freePort();
    s.url = `http://127.0.0.1:${s.port}`;
    s.extra = extra;
    writeFileSync(join(s.dir, "providers.toml"), PROVIDERS);
    await s.start();
    return s;
  }

  async start() {
    const env = { ...process.env };
    delete env.IRKIT_TCC_TOKEN;
    delete env.TCC_CRASH_AT;
    this.proc = spawn(
      IRKIT,
      ["tcc", "serve", "--listen", `127.0.0.1:${this.port}`, "--database", this.database,
        "--providers", join(this.dir, "providers.toml"), ...this.extra],
      { stdio: ["ignore", "pipe", openSync(join(this.dir, "serve.log"), "a")], env },
    );
    const line = await firstLine(this.proc.stdout);
    if (!line.startsWith("listening on ")) throw new Error(`unexpected: ${line}`);
  }

  register(source, name) {
    execFileSync(IRKIT, ["tcc", "register", source, "--name", name, "--server", this.url], { stdio: "pipe" });
  }

  async kill() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGKILL");
      await exited;
    }
  }

  async stop() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      await exited;
    }
  }

  async close() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A server with the saga and the approval workflow registered. */
export async function exampleServer(extra = []) {
  const s = await Server.create(extra);
  s.register(join(EXAMPLES, "order_saga.ts"), "order_saga");
  s.register(join(EXAMPLES, "approval.ts"), "approval");
  return s;
}
