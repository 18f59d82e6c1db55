/**
 * The guard's opencode hooks (`opencode-ai`); `opencode.ts` is the plugin module that exports them.
 *
 * | opencode hook | sidecar event | answer back |
 * |---|---|---|
 * | `tool.execute.before` | `attempt` (agent: `opencode/<sessionID>`) | a refusal by throwing an error whose message is the reason (opencode gives it to the model as the call's error) |
 * | `tool.execute.after` | `tool_result` (its `output`) | a reminder the call's `attempt` returned, appended to `output.output` under a line marking it as the guard's |
 * | `chat.message` (a user's message) | `prompt` | none |
 * | `event` `session.deleted` | `dispose` | none |
 *
 * opencode's plugin hooks offer no message of its own for a plugin to add to the running turn
 * (`experimental.chat.messages.transform` rewrites the whole history on every request), so the
 * reminder goes with the tool's result. A subagent (the `task` tool) runs in a child session
 * with its own `sessionID`, so its chain never mixes with its parent's.
 */
import { sharedGuard } from "./client.js";
/** The line that marks what follows in a tool's output as the guard's, not the tool's. */
export const MARK = "[repeat-guard]";
const agentOf = (sessionID) => `opencode/${sessionID}`;
/** The hooks of the guard, on `guard` (the process's one guard by default). */
export function hooks(guard = sharedGuard()) {
    const pending = new Map();
    return {
        "tool.execute.before": async (input, output) => {
            const verdict = await guard.attempt(agentOf(input.sessionID), input.tool, output.args);
            if (!verdict.admit) {
                const texts = verdict.reminders.map((r) => `\n\n${MARK}\n${r.text}`).join("");
                throw new Error(`${verdict.reason ?? ""}${texts}`);
            }
            if (verdict.reminders.length > 0)
                pending.set(input.callID, verdict.reminders);
        },
        "tool.execute.after": async (input, output) => {
            guard.result(agentOf(input.sessionID), input.tool, input.args, output.output);
            const reminders = pending.get(input.callID);
            if (reminders === undefined)
                return;
            pending.delete(input.callID);
            for (const reminder of reminders)
                output.output += `\n\n${MARK}\n${reminder.text}`;
        },
        "chat.message": async (input) => {
            guard.prompt(agentOf(input.sessionID));
        },
        event: async ({ event }) => {
            if (event.type !== "session.deleted")
                return;
            const info = event.properties?.info;
            if (typeof info?.id === "string")
                guard.dispose(agentOf(info.id));
        },
    };
}
