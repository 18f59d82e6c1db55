/**
 * The opencode plugin module: opencode calls every function a plugin module exports, so this
 * one exports the plugin alone (the hooks and their mapping: `opencode-hooks.ts`).
 */
import { sharedGuard } from "./client.js";
import { hooks } from "./opencode-hooks.js";
/** The plugin: the guard's hooks, its sidecar started in opencode's project directory. */
export const RepeatGuard = async (context) => hooks(sharedGuard(context.directory === undefined ? {} : { cwd: context.directory }));
