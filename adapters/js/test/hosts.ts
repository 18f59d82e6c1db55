// What the host tests share: the real sidecar and a store of their own.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { Guard } from "../src/client.js";

/** The real sidecar, from the workspace's venv (made by `make install`). */
export const SERVE = resolve(import.meta.dirname, "../../../../.venv/bin/repeat-guard");

export function store(): string {
  return join(mkdtempSync(join(tmpdir(), "rg-js-")), "state.sqlite3");
}

/** A guard on the real sidecar with a fresh store and `flags`; its log lines in `lines`. */
export function realGuard(flags: string[] = [], lines: string[] = []): Guard {
  return new Guard({
    command: [SERVE, "serve", "--state", store(), ...flags],
    log: (line) => lines.push(line),
  });
}
