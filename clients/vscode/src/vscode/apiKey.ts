/**
 * The Anthropic API key in VS Code's secret storage ("Tether: Set API Key"), handed to the
 * daemon in its environment and never written to settings.json.
 */
import * as vscode from 'vscode';

export const API_KEY_SECRET = 'tether.anthropicApiKey';

export class ApiKey {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  /** Fires when the key is set or removed (in this window or another). */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((e) => {
      if (e.key === API_KEY_SECRET) listener();
    });
  }

  /** The daemon's share of the environment: the key, when one is stored. */
  async environment(): Promise<Record<string, string>> {
    const key = await this.secrets.get(API_KEY_SECRET);
    return key ? { ANTHROPIC_API_KEY: key } : {};
  }

  /** Ask for the key and store it (empty: remove it). False when the user cancelled. */
  async prompt(): Promise<boolean> {
    const stored = Boolean(await this.secrets.get(API_KEY_SECRET));
    const key = await vscode.window.showInputBox({
      title: 'Tether: Anthropic API Key',
      prompt: stored
        ? 'A key is stored. Enter a new one to replace it, or leave this empty to remove it.'
        : 'Kept in VS Code\'s secret storage and given only to the Tether daemon. Create one at console.anthropic.com.',
      placeHolder: 'sk-ant-…',
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => (/\s/.test(value.trim()) ? 'An API key has no spaces in it.' : undefined),
    });
    if (key === undefined) return false;
    if (!key.trim()) {
      if (!stored) return false;
      await this.secrets.delete(API_KEY_SECRET);
      void vscode.window.showInformationMessage('Tether: the stored API key was removed.');
      return true;
    }
    await this.secrets.store(API_KEY_SECRET, key.trim());
    return true;
  }
}
