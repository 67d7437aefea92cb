/** The webview side of the message pipe. */
import { FromWebview } from '../core/messages';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export const vscodeApi: VsCodeApi = acquireVsCodeApi();

export function send(message: FromWebview): void {
  vscodeApi.postMessage(message);
}
