import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import repeatGuard, { MESSAGE_TYPE, register, type PiApi, type PiContext } from "../src/pi.js";
import { realGuard } from "./hosts.js";

type Handler = (event: never, ctx: PiContext) => unknown;

/** pi's extension API as pi 0.73.1 calls it: handlers by event, messages sent. */
class FakePi {
  readonly handlers = new Map<string, Handler>();
  readonly sent: Array<{ message: unknown; options: unknown }> = [];
  readonly api = {
    on: (event: string, handler: Handler) => this.handlers.set(event, handler),
    sendMessage: (message: unknown, options: unknown) => this.sent.push({ message, options }),
  } as unknown as PiApi;

  async emit(event: string, payload: object, session = "s1"): Promise<unknown> {
    const ctx: PiContext = { sessionManager: { getSessionId: () => session } };
    return this.handlers.get(event)!(payload as never, ctx);
  }
}

const CALL = { toolCallId: "t", toolName: "bash", input: { command: "ls" } };

test("the third identical call sends the reminder as its own steered message", async () => {
  const pi = new FakePi();
  const guard = realGuard();
  register(pi.api, guard);
  for (let i = 0; i < 3; i++) {
    assert.equal(await pi.emit("tool_call", CALL), undefined);
    await pi.emit("tool_result", { ...CALL, content: [{ type: "text", text: "a\n" }] });
  }
  assert.equal(pi.sent.length, 1);
  const { message, options } = pi.sent[0]!;
  assert.deepEqual(options, { deliverAs: "steer" });
  assert.equal((message as { customType: string }).customType, MESSAGE_TYPE);
  assert.match((message as { content: string }).content, /^<system-reminder>\nYou are repeating/);
  guard.close();
});

test("a prompt starts over; sessions are apart", async () => {
  const pi = new FakePi();
  const guard = realGuard(["--thresholds", "2"]);
  register(pi.api, guard);
  await pi.emit("tool_call", CALL);
  await pi.emit("input", { text: "again" });
  await pi.emit("tool_call", CALL);
  await pi.emit("tool_call", CALL, "s2");
  assert.equal(pi.sent.length, 0);
  await pi.emit("tool_call", CALL);
  assert.equal(pi.sent.length, 1);
  guard.close();
});

test("a call past denyAt is blocked with the reason", async () => {
  const pi = new FakePi();
  const config = join(mkdtempSync(join(tmpdir(), "rg-js-")), "guard.toml");
  writeFileSync(config, "denyAt = 2\n");
  const limited = realGuard(["--config", config]);
  register(pi.api, limited);
  assert.equal(await pi.emit("tool_call", CALL), undefined);
  const refused = (await pi.emit("tool_call", CALL)) as { block: boolean; reason: string };
  assert.equal(refused.block, true);
  assert.match(refused.reason, /^refused: this would be the 2nd identical call to `bash`/);
  limited.close();
});

test("the default export registers the process's one guard", () => {
  const pi = new FakePi();
  repeatGuard(pi.api);
  assert.deepEqual([...pi.handlers.keys()].sort(), ["input", "tool_call", "tool_result"]);
});
