// The README's example runs as it is, and prints what the README says it prints.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { SERVE } from "./hosts.js";

const PACKAGE = resolve(import.meta.dirname, "../..");

test("the README's Node example prints the reminder the README shows", () => {
  const readme = readFileSync(join(PACKAGE, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```(\w*)\n([\s\S]*?)```/g)];
  const example = blocks.find(([, lang]) => lang === "js")![2]!;
  const shown = blocks[blocks.findIndex(([, lang]) => lang === "js") + 1]![2]!;
  const client = pathToFileURL(join(PACKAGE, "dist/src/client.js")).href;
  const dir = mkdtempSync(join(tmpdir(), "rg-js-"));
  const script = join(dir, "example.mjs");
  writeFileSync(script, example.replace('from "repeat-guard"', `from "${client}"`));
  const output = execFileSync(process.execPath, [script], {
    env: {
      ...process.env,
      PATH: `${dirname(SERVE)}:${process.env.PATH ?? ""}`,
      REPEAT_GUARD_STATE: join(dir, "state.sqlite3"),
    },
    encoding: "utf8",
  });
  assert.equal(output, shown);
});
