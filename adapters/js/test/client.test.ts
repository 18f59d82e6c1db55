import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { Guard, PROCEED, sharedGuard } from "../src/client.js";
import { SERVE, store } from "./hosts.js";

function guard(command: string[], lines: string[] = [], timeoutMs = 5000): Guard {
  return new Guard({ command, timeoutMs, log: (line) => lines.push(line) });
}

test("the third identical call is reminded, gently, the fifth in detail", async () => {
  const g = guard([SERVE, "serve", "--state", store()]);
  const verdicts = [];
  for (let i = 0; i < 5; i++) verdicts.push(await g.attempt("a", "grep", { p: "x" }));
  assert.deepEqual(
    verdicts.map((v) => v.reminders.map((r) => [r.count, r.form])),
    [[], [], [[3, "gentle"]], [], [[5, "detailed"]]],
  );
  assert.ok(verdicts.every((v) => v.admit));
  assert.match(verdicts[2]!.reminders[0]!.text, /^<system-reminder>\nYou are repeating/);
  g.close();
});

test("a prompt starts the chain over, and agents are apart", async () => {
  const g = guard([SERVE, "serve", "--thresholds", "2"]);
  await g.attempt("a", "grep", {});
  g.prompt("a");
  g.result("a", "grep", {}, "out");
  assert.deepEqual((await g.attempt("a", "grep", {})).reminders, []);
  assert.deepEqual((await g.attempt("b", "grep", {})).reminders, []);
  assert.equal((await g.attempt("a", "grep", {})).reminders.length, 1);
  g.dispose("a");
  assert.deepEqual((await g.attempt("a", "grep", {})).reminders, []);
  g.close();
});

test("a configured limit refuses the call, with the reason", async () => {
  new Guard().close(); // never started: closing is harmless
  const dir = mkdtempSync(join(tmpdir(), "rg-js-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(join(dir, ".repeat-guard.toml"), "denyAt = 2\n");
  const limited = new Guard({ command: [SERVE, "serve", "--state", store()], cwd: dir });
  assert.equal((await limited.attempt("a", "ls", {})).admit, true);
  const refused = await limited.attempt("a", "ls", {});
  assert.equal(refused.admit, false);
  assert.match(refused.reason ?? "", /^refused: this would be the 2nd identical call to `ls`/);
  limited.close();
});

test("the chain outlives the sidecar through the store", async () => {
  const path = store();
  const first = guard([SERVE, "serve", "--state", path]);
  await first.attempt("a", "grep", {});
  await first.attempt("a", "grep", {});
  first.close();
  const second = guard([SERVE, "serve", "--state", path]);
  assert.equal((await second.attempt("a", "grep", {})).reminders[0]?.count, 3);
  second.close();
});

test("a missing command fails open, is tried once more, then left alone", async () => {
  const lines: string[] = [];
  const g = guard(["/nonexistent/repeat-guard", "serve"], lines);
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /cannot run the sidecar: spawn .* ENOENT; it will be started again/);
  assert.match(lines[1]!, /calls proceed unguarded$/);
});

test("a sidecar that dies is started again, once", async () => {
  const lines: string[] = [];
  // Answers one line, then exits.
  const once = ["sh", "-c", 'read line; echo \'{"admit": true, "reminders": []}\'; exit 3'];
  const g = guard(once, lines);
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  await new Promise((done) => setTimeout(done, 200));
  assert.match(lines[0]!, /the sidecar exited \(3\); it will be started again/);
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  await new Promise((done) => setTimeout(done, 200));
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  assert.equal(lines.length, 2);
});

test("a sidecar that does not answer in time is stopped and the call proceeds", async () => {
  const lines: string[] = [];
  const g = guard(["sleep", "30"], lines, 100);
  const started = Date.now();
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  assert.ok(Date.now() - started < 2000);
  assert.match(lines[0]!, /no answer within 100 ms; it will be started again/);
  g.close();
});

test("an error answer, an answer that is not JSON, and arguments that are not JSON", async () => {
  const lines: string[] = [];
  const g = guard([SERVE, "serve", "--state", "/dev/null/state"], lines);
  assert.deepEqual(await g.attempt("a", "grep", {}), PROCEED);
  assert.match(lines[0]!, /line 1: state store unusable: \w+; the call proceeds$/);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.deepEqual(await g.attempt("a", "grep", cyclic), PROCEED);
  assert.match(lines[1]!, /its arguments are not JSON/);
  g.close();
  const garbled = guard(["sh", "-c", "read line; echo nope; echo 7; sleep 5"]);
  assert.deepEqual(await garbled.attempt("a", "grep", {}), PROCEED);
  assert.deepEqual(await garbled.attempt("a", "grep", {}), PROCEED);
  garbled.close();
});

test("one guard per process", () => {
  assert.equal(sharedGuard(), sharedGuard({ timeoutMs: 1 }));
});

test("a question the sidecar died on is asked once of the next one", async () => {
  const lines: string[] = [];
  const flag = join(mkdtempSync(join(tmpdir(), "rg-js-")), "started");
  // The first sidecar dies on its first question; the second is the real one.
  const script = `if [ -e ${flag} ]; then exec ${SERVE} serve; fi; touch ${flag}; read line; exit 1`;
  const g = guard(["sh", "-c", script], lines);
  const verdict = await g.attempt("a", "grep", {});
  assert.deepEqual(verdict, { admit: true, reminders: [] });
  assert.notEqual(verdict, PROCEED); // answered, not failed open
  assert.match(lines[0]!, /the sidecar exited \(1\); it will be started again/);
  g.close();
});
