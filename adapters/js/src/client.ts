/**
 * The one client the host plugins share: a `repeat-guard serve` sidecar per process, spoken to
 * in JSON lines. Every decision is the sidecar's (the Python core's); this module only carries
 * events there and answers back, and fails open: when the command is missing, dies or does
 * not answer in time, the call proceeds and one line says why.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** A reminder as the sidecar answers it. */
export interface Reminder {
  agent: string;
  tool: string;
  count: number;
  form: string;
  summary: string;
  text: string;
}

/** The answer to a call before it runs: whether it may run, why not, and what fired. */
export interface Verdict {
  admit: boolean;
  reason?: string;
  reminders: Reminder[];
}

export interface GuardOptions {
  /** The sidecar's command line; default `repeat-guard serve --state` (the hook's store). */
  command?: readonly string[];
  /** Milliseconds to wait for one answer before the call proceeds without it. */
  timeoutMs?: number;
  /** Where the one line about a failure goes; default stderr. */
  log?: (line: string) => void;
  /** The sidecar's working directory, where it finds `.repeat-guard.toml`. */
  cwd?: string;
}

export const DEFAULT_COMMAND: readonly string[] = ["repeat-guard", "serve", "--state"];
export const DEFAULT_TIMEOUT_MS = 2000;
/** What a call gets when the sidecar cannot answer: it proceeds, unreminded. */
export const PROCEED: Verdict = Object.freeze({ admit: true, reminders: [] });

type Answer = Record<string, unknown>;

/** How a question is settled: its answer, or none (`died`: the sidecar died first). */
type Settle = (answer: Answer | undefined, died?: boolean) => void;

/** One sidecar process and the answers it owes, in order. */
class Sidecar {
  private readonly waiting: Settle[] = [];
  private buffer = "";
  alive = true;

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly died: (why: string) => void,
  ) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.read(chunk));
    child.on("error", (error) => this.end(`cannot run the sidecar: ${error.message}`));
    child.on("exit", (code, signal) => this.end(`the sidecar exited (${signal ?? code})`));
    child.stdin.on("error", () => undefined); // a dead reader: "exit" says so
    // Never keep the host alive: a call waiting for its answer holds a timer instead.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
  }

  send(line: string, settle: Settle): void {
    this.waiting.push(settle);
    this.child.stdin.write(line + "\n");
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let end = this.buffer.indexOf("\n");
    while (end >= 0) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 1);
      this.waiting.shift()?.(parse(line));
      end = this.buffer.indexOf("\n");
    }
  }

  end(why: string, died = true): void {
    if (!this.alive) return;
    this.alive = false;
    this.died(why);
    for (const settle of this.waiting.splice(0)) settle(undefined, died);
  }

  kill(): void {
    this.child.kill();
  }
}

function parse(line: string): Answer | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? (value as Answer) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The guard for one host process. `attempt` asks before a call runs and counts it; `result`,
 * `prompt` and `dispose` report and never wait. One sidecar is started on first use, kept, and
 * started again once if it dies; after that every call proceeds unguarded.
 */
export class Guard {
  private sidecar: Sidecar | undefined;
  private starts = 0;
  private readonly command: readonly string[];
  private readonly timeoutMs: number;
  private readonly log: (line: string) => void;
  private readonly cwd: string | undefined;

  constructor(options: GuardOptions = {}) {
    this.command = options.command ?? DEFAULT_COMMAND;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.log = options.log ?? ((line) => process.stderr.write(line + "\n"));
    this.cwd = options.cwd;
  }

  /** Ask whether `tool(args)` of `agent` may run, and count it: the sidecar's `attempt`. */
  async attempt(agent: string, tool: string, args: unknown): Promise<Verdict> {
    const answer = await this.ask({ type: "attempt", agent, tool, arguments: args ?? {} });
    if (answer === undefined) return PROCEED;
    const reminders = Array.isArray(answer.reminders) ? (answer.reminders as Reminder[]) : [];
    if (answer.admit === false) {
      return { admit: false, reason: String(answer.reason), reminders };
    }
    return { admit: true, reminders };
  }

  /** Report what a call returned (read only under `progress = "result"`). */
  result(agent: string, tool: string, args: unknown, result: unknown): void {
    void this.ask({ type: "tool_result", agent, tool, arguments: args ?? {}, result: result ?? null });
  }

  /** A user's message: `agent`'s chain starts over. */
  prompt(agent: string): void {
    void this.ask({ type: "prompt", agent });
  }

  /** `agent` is gone (a subagent ended): its chain is dropped. */
  dispose(agent: string): void {
    void this.ask({ type: "dispose", agent });
  }

  /** Stop the sidecar (it also ends by itself when this process exits). */
  close(): void {
    this.sidecar?.kill();
    this.sidecar = undefined;
  }

  private ask(event: Answer, again = true): Promise<Answer | undefined> {
    const sidecar = this.running();
    if (sidecar === undefined) return Promise.resolve(undefined);
    let line: string;
    try {
      line = JSON.stringify(event);
    } catch (error) {
      this.log(`repeat-guard: call not checked: its arguments are not JSON (${String(error)})`);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // Its later answers would no longer match their questions: it is stopped.
        sidecar.kill();
        sidecar.end(`no answer within ${this.timeoutMs} ms`, false);
      }, this.timeoutMs);
      sidecar.send(line, (answer, died) => {
        clearTimeout(timer);
        if (died && again) {
          // Asked of a sidecar that died before answering: asked once of the next one.
          resolve(this.ask(event, false));
        } else if (answer !== undefined && typeof answer.error === "string") {
          this.log(`repeat-guard: ${answer.error}; the call proceeds`);
          resolve(undefined);
        } else {
          resolve(answer);
        }
      });
    });
  }

  private running(): Sidecar | undefined {
    if (this.sidecar?.alive) return this.sidecar;
    if (this.starts >= 2) return undefined;
    this.starts += 1;
    const [program, ...args] = this.command;
    const child = spawn(program ?? "repeat-guard", args, {
      cwd: this.cwd,
      stdio: ["pipe", "pipe", "inherit"],
    }) as unknown as ChildProcessWithoutNullStreams;
    const sidecar = new Sidecar(child, (why) => {
      const after = this.starts >= 2 ? "calls proceed unguarded" : "it will be started again";
      this.log(`repeat-guard: ${why}; ${after}`);
    });
    this.sidecar = sidecar;
    return sidecar;
  }
}

let shared: Guard | undefined;

/** The process's one guard, made on first use with `options`. */
export function sharedGuard(options?: GuardOptions): Guard {
  shared ??= new Guard(options);
  return shared;
}
