/**
 * The guard as an OpenClaw plugin (`openclaw`); its manifest is `openclaw.plugin.json` beside it.
 *
 * | OpenClaw hook | sidecar event | answer back |
 * |---|---|---|
 * | `before_tool_call` | `attempt` (agent: `openclaw/<sessionId>`) | a refusal as `{block: true, blockReason}` (OpenClaw gives the model the reason as the call's result) |
 * | tool-result middleware | `tool_result` (its `result`) | a reminder the call's `attempt` returned, appended to the result's `content` as a text part under a line marking it as the guard's |
 * | `before_prompt_build` (a user's prompt) | `prompt` | none |
 *
 * OpenClaw offers a plugin no message of its own inside a running turn
 * (`enqueueNextTurnInjection` waits for the next turn, and `tool_result_persist` rewrites only
 * the transcript, not what the model reads), so the reminder goes with the tool's result,
 * through the middleware that runs before the result is fed back to the model. That
 * middleware and `before_prompt_build` need the plugin enabled, with conversation access:
 * `repeat-guard install openclaw` writes both.
 */
import { sharedGuard } from "./client.js";
/** The line that marks what follows in a tool's result as the guard's, not the tool's. */
export const MARK = "[repeat-guard]";
const agentOf = (ctx) => `openclaw/${ctx.sessionId ?? ctx.sessionKey ?? "main"}`;
/**
 * The process's guard and pending reminders. OpenClaw loads the plugin module more than once in
 * one process (each load registers on its own API), and a call's `before_tool_call` and its
 * result may reach different loads: what they share lives on `globalThis`, made on first use.
 */
export function shared() {
    const scope = globalThis;
    scope[KEY] ??= { guard: sharedGuard(), pending: new Map() };
    return scope[KEY];
}
const KEY = "__repeatGuardOpenClaw";
/** Register the guard's hooks on `api`, with the process's guard by default. */
export function register(api, { guard, pending } = shared()) {
    api.on("before_tool_call", async (event, ctx) => {
        const verdict = await guard.attempt(agentOf(ctx), event.toolName, event.params);
        if (!verdict.admit) {
            const texts = verdict.reminders.map((r) => `\n\n${MARK}\n${r.text}`).join("");
            return { block: true, blockReason: `${verdict.reason ?? ""}${texts}` };
        }
        if (verdict.reminders.length > 0 && event.toolCallId !== undefined) {
            pending.set(event.toolCallId, verdict.reminders);
        }
        return undefined;
    });
    api.registerAgentToolResultMiddleware((event, ctx) => {
        guard.result(agentOf(ctx), event.toolName, event.args, event.result.content);
        const reminders = pending.get(event.toolCallId);
        if (reminders === undefined)
            return undefined;
        pending.delete(event.toolCallId);
        const added = reminders.map((r) => ({ type: "text", text: `\n${MARK}\n${r.text}` }));
        return { result: { ...event.result, content: [...event.result.content, ...added] } };
    }, { runtimes: ["openclaw"] });
    api.on("before_prompt_build", (_event, ctx) => {
        guard.prompt(agentOf(ctx));
    });
}
/** The plugin entry OpenClaw loads: its id (the manifest's) and `register`. */
export default {
    id: "repeat-guard",
    name: "repeat-guard",
    description: "Reminds the model when it repeats the exact same tool call.",
    register(api) {
        register(api);
    },
};
