import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import type { Guard, Reminder } from "../src/client.js";
import plugin, {
  MARK,
  register,
  shared,
  type BeforeToolCallResult,
  type HookContext,
  type OpenClawApi,
  type ResultEvent,
  type ToolResult,
} from "../src/openclaw.js";
import { realGuard } from "./hosts.js";

type Before = (
  event: { toolName: string; params: Record<string, unknown>; toolCallId?: string },
  ctx: HookContext,
) => Promise<BeforeToolCallResult | undefined>;
type Middleware = (event: ResultEvent, ctx: HookContext) => { result: ToolResult } | undefined;

/** OpenClaw's plugin API as the guard uses it, holding what was registered. */
class Api {
  before: Before | undefined;
  prompt: ((event: unknown, ctx: HookContext) => void) | undefined;
  middleware: Middleware | undefined;
  runtimes: string[] = [];

  get api(): OpenClawApi {
    return {
      on: (hook: string, handler: unknown) => {
        if (hook === "before_tool_call") this.before = handler as Before;
        else this.prompt = handler as (event: unknown, ctx: HookContext) => void;
      },
      registerAgentToolResultMiddleware: (handler, options) => {
        this.middleware = handler;
        this.runtimes = options.runtimes;
      },
    } as OpenClawApi;
  }
}

const PARAMS = { command: "ls" };
const RESULT: ToolResult = { content: [{ type: "text", text: "a" }], details: {} };

function registered(guard: Guard): Api {
  const api = new Api();
  register(api.api, { guard, pending: new Map<string, Reminder[]>() });
  return api;
}

async function call(api: Api, id: string | undefined, ctx: HookContext = { sessionId: "s1" }) {
  const verdict = await api.before!({ toolName: "exec", params: PARAMS, ...(id ? { toolCallId: id } : {}) }, ctx);
  if (verdict !== undefined) return verdict;
  const result = { toolCallId: id ?? "none", toolName: "exec", args: PARAMS, result: RESULT };
  return api.middleware!(result, ctx)?.result;
}

test("the third identical call's result carries the reminder, once, under the guard's mark", async () => {
  const guard = realGuard();
  const api = registered(guard);
  assert.deepEqual(api.runtimes, ["openclaw"]);
  assert.equal(await call(api, "1"), undefined);
  assert.equal(await call(api, "2"), undefined);
  const third = (await call(api, "3")) as ToolResult;
  assert.equal(third.content[0]?.text, "a");
  assert.ok(third.content[1]?.text?.startsWith(`\n${MARK}\n<system-reminder>\nYou are repeating`));
  assert.deepEqual(third.details, {});
  assert.equal(await call(api, "4"), undefined); // delivered once
  guard.close();
});

test("a prompt starts over; sessions are apart; a call without an id is counted, not reminded", async () => {
  const guard = realGuard(["--thresholds", "2"]);
  const api = registered(guard);
  await call(api, "1");
  api.prompt!({}, { sessionId: "s1" });
  assert.equal(await call(api, "2"), undefined);
  assert.equal(await call(api, "3", { sessionKey: "agent:main:x" }), undefined);
  assert.equal(await call(api, "4", {}), undefined);
  assert.equal(await call(api, undefined), undefined);
  assert.ok(await call(api, "5", { sessionKey: "agent:main:x" }));
  guard.close();
});

test("a call past denyAt is blocked with the reason and the reminder", async () => {
  const config = join(mkdtempSync(join(tmpdir(), "rg-js-")), "guard.toml");
  writeFileSync(config, "denyAt = 3\nthresholds = [3]\n");
  const guard = realGuard(["--config", config]);
  const api = registered(guard);
  await call(api, "1");
  await call(api, "2");
  const refused = (await call(api, "3")) as BeforeToolCallResult;
  assert.equal(refused.block, true);
  assert.match(refused.blockReason, /^refused: this would be the 3rd identical call to `exec`/);
  assert.ok(refused.blockReason.includes(`\n\n${MARK}\n<system-reminder>`));
  guard.close();
});

test("the plugin entry registers on the process's guard, shared by every load", () => {
  assert.equal(plugin.id, "repeat-guard");
  assert.equal(shared(), shared());
  const api = new Api();
  plugin.register(api.api);
  assert.ok(api.before && api.prompt && api.middleware);
});
