import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { MARK, hooks, type AfterOutput } from "../src/opencode-hooks.js";
import { RepeatGuard } from "../src/opencode.js";
import { realGuard } from "./hosts.js";

const INPUT = { tool: "bash", sessionID: "s1", callID: "c" };
const ARGS = { command: "ls" };

async function call(h: ReturnType<typeof hooks>, callID: string, session = "s1"): Promise<string> {
  const input = { ...INPUT, sessionID: session, callID };
  await h["tool.execute.before"](input, { args: ARGS });
  const output: AfterOutput = { title: "ls", output: "a\n", metadata: {} };
  await h["tool.execute.after"]({ ...input, args: ARGS }, output);
  return output.output;
}

test("the third identical call's output carries the reminder under the guard's mark", async () => {
  const guard = realGuard();
  const h = hooks(guard);
  assert.equal(await call(h, "1"), "a\n");
  assert.equal(await call(h, "2"), "a\n");
  const third = await call(h, "3");
  assert.ok(third.startsWith(`a\n\n\n${MARK}\n<system-reminder>\nYou are repeating`));
  assert.equal(await call(h, "4"), "a\n"); // delivered once
  guard.close();
});

test("a user's message starts over; a deleted session is disposed; sessions are apart", async () => {
  const guard = realGuard(["--thresholds", "2"]);
  const h = hooks(guard);
  await call(h, "1");
  await h["chat.message"]({ sessionID: "s1" }, {});
  assert.equal(await call(h, "2"), "a\n");
  await h.event({ event: { type: "session.deleted", properties: { info: { id: "s1" } } } });
  await h.event({ event: { type: "session.deleted", properties: {} } });
  await h.event({ event: { type: "session.idle" } });
  assert.equal(await call(h, "3"), "a\n");
  assert.equal(await call(h, "4", "s2"), "a\n");
  assert.match(await call(h, "5"), /\[repeat-guard\]/);
  guard.close();
});

test("a call past denyAt is refused by throwing the reason, with the reminder", async () => {
  const config = join(mkdtempSync(join(tmpdir(), "rg-js-")), "guard.toml");
  writeFileSync(config, "denyAt = 3\nthresholds = [3]\n");
  const guard = realGuard(["--config", config]);
  const h = hooks(guard);
  await call(h, "1");
  await call(h, "2");
  await assert.rejects(h["tool.execute.before"](INPUT, { args: ARGS }), (error: Error) => {
    assert.match(error.message, /^refused: this would be the 3rd identical call to `bash`/);
    assert.ok(error.message.includes(`\n\n${MARK}\n<system-reminder>`));
    return true;
  });
  guard.close();
});

test("the plugin module's one export gives the hooks", async () => {
  const plugin = await RepeatGuard({ directory: tmpdir() });
  assert.deepEqual(Object.keys(plugin).sort(), [
    "chat.message",
    "event",
    "tool.execute.after",
    "tool.execute.before",
  ]);
  assert.equal(Object.keys(await RepeatGuard({})).length, 4);
});
