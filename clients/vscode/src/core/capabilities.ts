/**
 * What the extension declares at `initialize` and what it checks in the answer.
 */
import { Mode, PROTOCOL_VERSION, StartupFacts } from './wire';

/** `capabilities.experimental.tether`: every rich feature the extension implements. */
export const TETHER_CLIENT_CAPABILITIES = {
  permissionRequest: true,
  sessionUpdates: true,
  saveDocuments: true,
  diagnostics: true,
} as const;

export interface LaunchSettings {
  model?: string;
  permissionMode?: Mode;
}

export function initializationOptions(settings: LaunchSettings): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (settings.model) options.model = settings.model;
  if (settings.permissionMode) options.permissionMode = settings.permissionMode;
  return options;
}

export type ServerCheck =
  | { ok: true; protocolVersion: number; warning?: string; facts: StartupFacts }
  | { ok: false; reason: 'not_tether' | 'too_old'; message: string };

/** Decide from an `InitializeResult` whether this daemon speaks a protocol we understand. */
export function checkServer(initializeResult: unknown, executable: string): ServerCheck {
  const tether = dig(initializeResult, ['capabilities', 'experimental', 'tether']);
  if (tether === undefined) {
    return {
      ok: false,
      reason: 'not_tether',
      message: `${executable} answered initialize but is not a Tether daemon (no capabilities.experimental.tether).`,
    };
  }
  const version = dig(tether, ['protocolVersion']);
  if (typeof version !== 'number' || version < PROTOCOL_VERSION) {
    const found = typeof version === 'number' ? `protocol ${version}` : 'no protocol version';
    return {
      ok: false,
      reason: 'too_old',
      message: `The Tether daemon at ${executable} is too old (${found}; this extension needs protocol ${PROTOCOL_VERSION}). Update it with "Tether: Install the Daemon", or point tether.path at a newer one.`,
    };
  }
  const facts = startupFacts(tether);
  if (version > PROTOCOL_VERSION) {
    // Newer daemons only add methods and fields within a version; a new version may not.
    return {
      ok: true,
      protocolVersion: version,
      warning: `The Tether daemon speaks protocol ${version}; this extension knows ${PROTOCOL_VERSION}. Update the extension if something misbehaves.`,
      facts,
    };
  }
  return { ok: true, protocolVersion: version, facts };
}

function startupFacts(tether: unknown): StartupFacts {
  const model = dig(tether, ['model']);
  const source = dig(tether, ['modelSource']);
  return { model: typeof model === 'string' && model ? model : null, modelSource: typeof source === 'string' ? source : null };
}

function dig(value: unknown, path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
