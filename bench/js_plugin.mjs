// One call through the pi extension, its client and the real sidecar, against the host's own
// plugin call with no guard (a handler that returns at once). Prints the samples as JSON.
// Usage: node bench/js_plugin.mjs PLUGINS_DIR REPEAT_GUARD STATE RUNS
import { performance } from "node:perf_hooks";

const [plugins, executable, state, runsText] = process.argv.slice(2);
const { Guard } = await import(`${plugins}/client.js`);
const { register } = await import(`${plugins}/pi.js`);

function host() {
  const handlers = new Map();
  const api = { on: (event, handler) => handlers.set(event, handler), sendMessage: () => {} };
  return { api, handlers };
}

const guarded = host();
const guard = new Guard({ command: [executable, "serve", "--state", state] });
register(guarded.api, guard);
const bare = host();
bare.api.on("tool_call", async () => undefined);

const ctx = { sessionManager: { getSessionId: () => "bench" } };
const runs = Number(runsText);
const samples = { guarded: [], bare: [] };
for (let i = 0; i < runs + 50; i++) {
  // A different command each time (no chain grows), as most calls in a session are.
  const event = { toolCallId: `t${i}`, toolName: "bash", input: { command: `ls ${i % 7}` } };
  for (const [name, side] of i % 2 ? [["guarded", guarded], ["bare", bare]] : [["bare", bare], ["guarded", guarded]]) {
    const start = performance.now();
    await side.handlers.get("tool_call")(event, ctx);
    const elapsed = performance.now() - start;
    if (i >= 50) samples[name].push(elapsed);
  }
}
guard.close();
process.stdout.write(JSON.stringify(samples));
