/** An in-memory RpcConnection: records what the client sends, lets a test play the server. */
import { CancelToken, Disposable, RpcConnection } from '../../src/core/rpc';

type Handler = (params: unknown, token: CancelToken) => unknown;

export class FakeRpc implements RpcConnection {
  readonly sent: { method: string; params: unknown }[] = [];
  readonly notifications = new Map<string, (params: unknown) => void>();
  readonly requests = new Map<string, Handler>();
  /** Answers for client→server requests, by method. */
  replies: Record<string, (params: unknown) => unknown> = {};

  sendRequest<R>(method: string, params: unknown): Promise<R> {
    this.sent.push({ method, params });
    const reply = this.replies[method];
    if (!reply) return Promise.reject(new Error(`no reply for ${method}`));
    return Promise.resolve().then(() => reply(params) as R);
  }

  async sendNotification(method: string, params: unknown): Promise<void> {
    this.sent.push({ method, params });
  }

  onNotification(method: string, handler: (params: unknown) => void): Disposable {
    this.notifications.set(method, handler);
    return { dispose: () => this.notifications.delete(method) };
  }

  onRequest(method: string, handler: Handler): Disposable {
    this.requests.set(method, handler);
    return { dispose: () => this.requests.delete(method) };
  }

  notify(method: string, params: unknown): void {
    this.notifications.get(method)?.(params);
  }

  async request(method: string, params: unknown, token: CancelToken = NEVER): Promise<unknown> {
    const handler = this.requests.get(method);
    if (!handler) throw new Error(`no handler for ${method}`);
    return handler(params, token);
  }
}

export const NEVER: CancelToken = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

export class TestToken implements CancelToken {
  isCancellationRequested = false;
  private listeners: (() => void)[] = [];
  onCancellationRequested(listener: () => void): Disposable {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }
  cancel(): void {
    this.isCancellationRequested = true;
    this.listeners.forEach((l) => l());
  }
}
