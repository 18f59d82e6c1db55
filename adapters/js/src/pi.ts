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
import { sharedGuard, type Guard } from "./client.js";

/** The part of pi's `ExtensionContext` the guard reads. */
export interface PiContext {
  sessionManager: { getSessionId(): string };
}

/** The part of pi's `ExtensionAPI` the guard uses (checked against pi 0.73.1's `.d.ts`). */
export interface PiApi {
  on(
    event: "tool_call",
    handler: (
      event: { toolCallId: string; toolName: string; input: unknown },
      ctx: PiContext,
    ) => Promise<{ block: true; reason: string } | undefined>,
  ): void;
  on(
    event: "tool_result",
    handler: (
      event: { toolCallId: string; toolName: string; input: unknown; content: unknown },
      ctx: PiContext,
    ) => void,
  ): void;
  on(event: "input", handler: (event: { text: string }, ctx: PiContext) => void): void;
  sendMessage(
    message: { customType: string; content: string; display: boolean },
    options: { deliverAs: "steer" },
  ): void;
}

/** The custom message type pi shows the reminder under. */
export const MESSAGE_TYPE = "repeat-guard";

const agentOf = (ctx: PiContext): string => `pi/${ctx.sessionManager.getSessionId()}`;

/** Register the guard's handlers on `pi`; `guard` defaults to the process's one guard. */
export function register(pi: PiApi, guard: Guard = sharedGuard()): void {
  pi.on("tool_call", async (event, ctx) => {
    const verdict = await guard.attempt(agentOf(ctx), event.toolName, event.input);
    for (const reminder of verdict.reminders) {
      pi.sendMessage(
        { customType: MESSAGE_TYPE, content: reminder.text, display: true },
        { deliverAs: "steer" },
      );
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
export default function repeatGuard(pi: PiApi): void {
  register(pi);
}
