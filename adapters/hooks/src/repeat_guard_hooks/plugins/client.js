/**
 * The one client the host plugins share: a `repeat-guard serve` sidecar per process, spoken to
 * in JSON lines. Every decision is the sidecar's (the Python core's); this module only carries
 * events there and answers back, and fails open: when the command is missing, dies or does
 * not answer in time, the call proceeds and one line says why.
 */
import { spawn } from "node:child_process";
export const DEFAULT_COMMAND = ["repeat-guard", "serve", "--state"];
export const DEFAULT_TIMEOUT_MS = 2000;
/** What a call gets when the sidecar cannot answer: it proceeds, unreminded. */
export const PROCEED = Object.freeze({ admit: true, reminders: [] });
/** One sidecar process and the answers it owes, in order. */
class Sidecar {
    child;
    died;
    waiting = [];
    buffer = "";
    alive = true;
    constructor(child, died) {
        this.child = child;
        this.died = died;
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (chunk) => this.read(chunk));
        child.on("error", (error) => this.end(`cannot run the sidecar: ${error.message}`));
        child.on("exit", (code, signal) => this.end(`the sidecar exited (${signal ?? code})`));
        child.stdin.on("error", () => undefined); // a dead reader: "exit" says so
        // Never keep the host alive: a call waiting for its answer holds a timer instead.
        child.unref();
        for (const stream of [child.stdin, child.stdout, child.stderr]) {
            stream?.unref?.();
        }
    }
    send(line, settle) {
        this.waiting.push(settle);
        this.child.stdin.write(line + "\n");
    }
    read(chunk) {
        this.buffer += chunk;
        let end = this.buffer.indexOf("\n");
        while (end >= 0) {
            const line = this.buffer.slice(0, end);
            this.buffer = this.buffer.slice(end + 1);
            this.waiting.shift()?.(parse(line));
            end = this.buffer.indexOf("\n");
        }
    }
    end(why, died = true) {
        if (!this.alive)
            return;
        this.alive = false;
        this.died(why);
        for (const settle of this.waiting.splice(0))
            settle(undefined, died);
    }
    kill() {
        this.child.kill();
    }
}
function parse(line) {
    try {
        const value = JSON.parse(line);
        return typeof value === "object" && value !== null ? value : undefined;
    }
    catch {
        return undefined;
    }
}
/**
 * The guard for one host process. `attempt` asks before a call runs and counts it; `result`,
 * `prompt` and `dispose` report and never wait. One sidecar is started on first use, kept, and
 * started again once if it dies; after that every call proceeds unguarded.
 */
export class Guard {
    sidecar;
    starts = 0;
    command;
    timeoutMs;
    log;
    cwd;
    constructor(options = {}) {
        this.command = options.command ?? DEFAULT_COMMAND;
        this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
        this.log = options.log ?? ((line) => process.stderr.write(line + "\n"));
        this.cwd = options.cwd;
    }
    /** Ask whether `tool(args)` of `agent` may run, and count it: the sidecar's `attempt`. */
    async attempt(agent, tool, args) {
        const answer = await this.ask({ type: "attempt", agent, tool, arguments: args ?? {} });
        if (answer === undefined)
            return PROCEED;
        const reminders = Array.isArray(answer.reminders) ? answer.reminders : [];
        if (answer.admit === false) {
            return { admit: false, reason: String(answer.reason), reminders };
        }
        return { admit: true, reminders };
    }
    /** Report what a call returned (read only under `progress = "result"`). */
    result(agent, tool, args, result) {
        void this.ask({ type: "tool_result", agent, tool, arguments: args ?? {}, result: result ?? null });
    }
    /** A user's message: `agent`'s chain starts over. */
    prompt(agent) {
        void this.ask({ type: "prompt", agent });
    }
    /** `agent` is gone (a subagent ended): its chain is dropped. */
    dispose(agent) {
        void this.ask({ type: "dispose", agent });
    }
    /** Stop the sidecar (it also ends by itself when this process exits). */
    close() {
        this.sidecar?.kill();
        this.sidecar = undefined;
    }
    ask(event, again = true) {
        const sidecar = this.running();
        if (sidecar === undefined)
            return Promise.resolve(undefined);
        let line;
        try {
            line = JSON.stringify(event);
        }
        catch (error) {
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
                }
                else if (answer !== undefined && typeof answer.error === "string") {
                    this.log(`repeat-guard: ${answer.error}; the call proceeds`);
                    resolve(undefined);
                }
                else {
                    resolve(answer);
                }
            });
        });
    }
    running() {
        if (this.sidecar?.alive)
            return this.sidecar;
        if (this.starts >= 2)
            return undefined;
        this.starts += 1;
        const [program, ...args] = this.command;
        const child = spawn(program ?? "repeat-guard", args, {
            cwd: this.cwd,
            stdio: ["pipe", "pipe", "inherit"],
        });
        const sidecar = new Sidecar(child, (why) => {
            const after = this.starts >= 2 ? "calls proceed unguarded" : "it will be started again";
            this.log(`repeat-guard: ${why}; ${after}`);
        });
        this.sidecar = sidecar;
        return sidecar;
    }
}
let shared;
/** The process's one guard, made on first use with `options`. */
export function sharedGuard(options) {
    shared ??= new Guard(options);
    return shared;
}
