/**
 * What stands between the user and a first prompt, said in the chat itself with a button
 * that fixes it: no daemon, a daemon that is too old, no model, no API key. Pure: the
 * extension gathers the facts (the resolver's answer, `initialize`'s facts, the environment
 * it gives the daemon), this decides what to say.
 */
import { ServerCheck } from './capabilities';
import { Resolution } from './resolve';
import { StartupFacts } from './wire';

/** What a button of the set-up card does (each is a command of the extension). */
export const SETUP_ACTIONS = ['install', 'setPath', 'setApiKey', 'useLocalModel', 'showLog', 'restart'] as const;
export type SetupActionId = (typeof SETUP_ACTIONS)[number];

export interface SetupAction {
  id: SetupActionId;
  label: string;
}

export type SetupProblem = 'no_daemon' | 'bad_daemon' | 'daemon_down' | 'no_model' | 'no_key';

export interface SetupState {
  problem: SetupProblem;
  title: string;
  /** Plain text; `backticks` mark code. */
  detail: string;
  /** The first is the one to press. */
  actions: SetupAction[];
}

const INSTALL: SetupAction = { id: 'install', label: 'Install the Daemon' };
const SET_PATH: SetupAction = { id: 'setPath', label: 'Set Path…' };
const SHOW_LOG: SetupAction = { id: 'showLog', label: 'Show Log' };
const SET_KEY: SetupAction = { id: 'setApiKey', label: 'Set API Key' };
const LOCAL_MODEL: SetupAction = { id: 'useLocalModel', label: 'Use a Local Model…' };

/** The daemon could not be found. `canInstall`: this build of the extension carries it. */
export function missingDaemon(found: Extract<Resolution, { found: false }>, canInstall: boolean): SetupState {
  const install = canInstall ? [INSTALL] : [];
  const how = canInstall
    ? 'Install the Daemon puts the copy that comes with this extension into an environment of its own (it needs Python 3.11 or later, or uv, and takes a minute); or point `tether.path` at one you have.'
    : 'This build of the extension carries no daemon: install Tether with `uv tool install` or `pipx install`, or into a virtualenv, and point `tether.path` at its `tether`.';
  if (found.reason === 'setting_missing') {
    return { problem: 'no_daemon', title: 'The Tether daemon is not where tether.path says', detail: `${found.message} ${how}`, actions: [SET_PATH, ...install, SHOW_LOG] };
  }
  return {
    problem: 'no_daemon',
    title: 'Install the Tether daemon',
    detail: `Tether's agent runs in a small Python program, \`tether\`, which was not found (tether.path, the workspace's .venv, the extension's own environment, PATH and ~/.local/bin were searched). ${how}`,
    actions: [...install, SET_PATH, SHOW_LOG],
  };
}

/** The program found does not speak our protocol (too old, or not Tether at all). */
export function badDaemon(check: Extract<ServerCheck, { ok: false }>, canInstall: boolean): SetupState {
  const install = canInstall ? [{ ...INSTALL, label: 'Update the Daemon' }] : [];
  return { problem: 'bad_daemon', title: 'This Tether daemon cannot be used', detail: check.message, actions: [...install, SET_PATH, SHOW_LOG] };
}

/** The daemon keeps exiting and is no longer restarted. */
export function daemonDown(message: string): SetupState {
  return { problem: 'daemon_down', title: 'The Tether daemon stopped', detail: message, actions: [{ id: 'restart', label: 'Restart' }, SHOW_LOG] };
}

/** A running daemon: is there a model, and does it have its key? Null when all is set. */
export function modelSetup(facts: StartupFacts, env: Record<string, string | undefined>): SetupState | null {
  if (!facts.model) {
    return {
      problem: 'no_model',
      title: 'Choose a model',
      detail: 'Tether needs a model: an Anthropic API key, or a local model server (Ollama, LM Studio, vLLM, llama.cpp) set in `tether.model`.',
      actions: [SET_KEY, LOCAL_MODEL],
    };
  }
  if (needsAnthropicKey(facts.model) && !hasAnthropicKey(env)) {
    return {
      problem: 'no_key',
      title: 'Add your Anthropic API key',
      detail: `The model ${modelName(facts.model)} needs an Anthropic API key. VS Code keeps it in its secret storage and gives it only to the Tether daemon.`,
      actions: [SET_KEY, LOCAL_MODEL],
    };
  }
  return null;
}

/** Model specs without `openai:`, `ollama:` or `scripted:` are Anthropic models (as the daemon parses them). */
export function needsAnthropicKey(model: string): boolean {
  return !/^(openai|ollama|scripted):/.test(model);
}

export function hasAnthropicKey(env: Record<string, string | undefined>): boolean {
  return Boolean(env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim());
}

/** The model as the header shows it: `anthropic:claude-sonnet-4-6` → `claude-sonnet-4-6`,
 * `openai:qwen2.5-coder@http://…` or `ollama:qwen2.5-coder:14b@http://…` → the model,
 * `scripted:/x/turns.json` → `turns.json`. */
export function modelName(model: string): string {
  const [kind, ...rest] = model.split(':');
  const body = rest.join(':');
  if (kind === 'anthropic') return body;
  if (kind === 'openai' || kind === 'ollama') return body.replace(/@.*$/, '');
  if (kind === 'scripted') return `scripted ${body.slice(body.lastIndexOf('/') + 1)}`;
  return model;
}
