/**
 * The guard as a pi extension (`@mariozechner/pi-coding-agent`).
 *
 * | pi event | sidecar event | answer back |
 * |---|---|---|
 * | `tool_call` | `attempt` (agent: `pi/<session id>`) | a refusal as `{block: true, reason}`; a reminder as its own message, `pi.sendMessage(..., {deliverAs: "steer"})`, which pi gives the model as a user message right after this batch of tool results |
 * | `tool_result` | `tool_result` (its `content`) | none |
 * | `input` (a user's prompt) | `prompt` | none |
 *
 * pi has no subagents, so nothing is disposed: a session that ends keeps its chain in the
 * store, and `pi --resume` finds it again.
 */
import { sharedGuard } from "./client.js";
/** The custom message type pi shows the reminder under. */
export const MESSAGE_TYPE = "repeat-guard";
const agentOf = (ctx) => `pi/${ctx.sessionManager.getSessionId()}`;
/** Register the guard's handlers on `pi`; `guard` defaults to the process's one guard. */
export function register(pi, guard = sharedGuard()) {
    pi.on("tool_call", async (event, ctx) => {
        const verdict = await guard.attempt(agentOf(ctx), event.toolName, event.input);
        for (const reminder of verdict.reminders) {
            pi.sendMessage({ customType: MESSAGE_TYPE, content: reminder.text, display: true }, { deliverAs: "steer" });
        }
        return verdict.admit ? undefined : { block: true, reason: verdict.reason ?? "" };
    });
    pi.on("tool_result", (event, ctx) => {
        guard.result(agentOf(ctx), event.toolName, event.input, event.content);
    });
    pi.on("input", (_event, ctx) => {
        guard.prompt(agentOf(ctx));
    });
}
/** pi loads an extension's default export and calls it with its API. */
export default function repeatGuard(pi) {
    register(pi);
}
