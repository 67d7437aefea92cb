/**
 * Server→client messages the extension answers: session updates, permission questions and
 * save requests. Registered on an `RpcConnection`, so the protocol tests run exactly these
 * handlers against the real daemon with test doubles for the UI ports.
 */
import { CancelToken, Disposable, RpcConnection } from './rpc';
import {
  Methods,
  PermissionOutcome,
  PermissionRequestParams,
  SaveDocumentsParams,
  SessionUpdateParams,
} from './wire';

export interface ClientPorts {
  onSessionUpdate(params: SessionUpdateParams): void;
  /** Ask the user and resolve with their answer; a dismissed dialog is no answer (the
   * question stays open), only `token` (the daemon withdrew it) resolves `cancelled`. */
  askPermission(params: PermissionRequestParams, token: CancelToken): Promise<PermissionOutcome>;
  /** Save these documents (the agent just edited them); resolve once they are on disk. */
  saveDocuments(uris: string[]): Promise<void>;
}

export function registerClientHandlers(conn: RpcConnection, ports: ClientPorts): Disposable {
  const disposables = [
    conn.onNotification(Methods.sessionUpdate, (params) => {
      if (isSessionUpdate(params)) ports.onSessionUpdate(params);
    }),
    conn.onRequest(Methods.requestPermission, async (params, token): Promise<PermissionOutcome> => {
      if (!isPermissionRequest(params)) return { outcome: { outcome: 'cancelled' } };
      try {
        return await ports.askPermission(params, token);
      } catch {
        // A dialog that failed must not leave the turn hanging: treat it as no answer.
        return { outcome: { outcome: 'cancelled' } };
      }
    }),
    conn.onRequest(Methods.saveDocuments, async (params): Promise<null> => {
      const uris = (params as Partial<SaveDocumentsParams> | null)?.uris;
      if (Array.isArray(uris)) await ports.saveDocuments(uris.filter((u): u is string => typeof u === 'string'));
      return null;
    }),
  ];
  return { dispose: () => disposables.forEach((d) => d.dispose()) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isSessionUpdate(params: unknown): params is SessionUpdateParams {
  return (
    isObject(params) &&
    typeof params.sessionId === 'string' &&
    isObject(params.update) &&
    typeof params.update.kind === 'string'
  );
}

export function isPermissionRequest(params: unknown): params is PermissionRequestParams {
  return (
    isObject(params) &&
    typeof params.sessionId === 'string' &&
    isObject(params.toolCall) &&
    typeof params.toolCall.title === 'string' &&
    Array.isArray(params.options)
  );
}
