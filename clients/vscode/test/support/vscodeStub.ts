/**
 * A stand-in for the `vscode` module, enough for the glue modules under unit test. Importing
 * this file first makes `require('vscode')` resolve to `stub`; tests script its answers.
 */
import Module = require('module');
import { fileURLToPath, pathToFileURL } from 'url';

export class Uri {
  private constructor(readonly scheme: string, readonly path: string, private readonly text: string, readonly query = '') {}
  static parse(text: string): Uri {
    const u = new URL(text);
    return new Uri(u.protocol.replace(/:$/, ''), decodeURIComponent(u.pathname), text, u.search.replace(/^\?/, ''));
  }
  static file(path: string): Uri {
    return Uri.parse(pathToFileURL(path).toString());
  }
  static from(parts: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path, `${parts.scheme}:${parts.path}${parts.query ? `?${parts.query}` : ''}`, parts.query);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return Uri.parse(`${base.toString().replace(/\/$/, '')}/${parts.join('/')}`);
  }
  get fsPath(): string {
    return fileURLToPath(this.text);
  }
  toString(): string {
    return this.text;
  }
}

export interface StubDocument {
  uri: Uri;
  isDirty: boolean;
  isUntitled: boolean;
  saves: number;
  save(): Promise<boolean>;
}

export function document(uri: string, isDirty = true): StubDocument {
  const doc: StubDocument = {
    uri: Uri.parse(uri),
    isDirty,
    isUntitled: false,
    saves: 0,
    save: async () => {
      doc.saves++;
      doc.isDirty = false;
      return true;
    },
  };
  return doc;
}

type Listener<T> = (e: T) => void;

export const calls: { method: string; args: unknown[] }[] = [];
/** What the next `showWarningMessage` calls answer, in order (undefined: dismissed). */
export const warningAnswers: (string | undefined)[] = [];
/** What the next `showInformationMessage` calls answer, in order. */
export const infoAnswers: (string | undefined)[] = [];
const diagnosticsListeners: Listener<{ uris: Uri[] }>[] = [];
export const diagnostics = new Map<string, unknown[]>();
export const documents: StubDocument[] = [];
export const statusItems: Record<string, unknown>[] = [];
const providers = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();

export function fireDiagnostics(uris: string[]): void {
  for (const l of diagnosticsListeners) l({ uris: uris.map((u) => Uri.parse(u)) });
}

export function readVirtual(uri: Uri): string {
  return providers.get(uri.scheme)!.provideTextDocumentContent(uri);
}

const disposable = { dispose() {} };

/** Commands registered through the stub, by id. */
export const commands = new Map<string, (...args: unknown[]) => unknown>();
/** Files `workspace.fs.readFile` reads, by URI. */
export const disk = new Map<string, string>();

class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return disposable;
  };
  fire(value: T): void {
    this.listeners.forEach((l) => l(value));
  }
  dispose(): void {}
}

class TreeItem {
  description?: string;
  tooltip?: string;
  resourceUri?: Uri;
  command?: unknown;
  contextValue?: string;
  iconPath?: unknown;
  constructor(readonly label: string, readonly collapsibleState = 0) {}
}

class TabInputTextDiff {
  constructor(readonly original: Uri, readonly modified: Uri) {}
}
/** Editor tabs: `vscode.diff` opens one, `tabGroups.close` closes them. */
export const tabs: { label: string; input: unknown }[] = [];

/** `workspace.workspaceFolders`, as a test sets it. */
export const workspaceFolders: { uri: Uri; name: string }[] = [];

/** The code action providers registered through the stub. */
export const codeActionProviders: { provideCodeActions(doc: unknown, range: unknown, context: { diagnostics: unknown[] }): unknown[] }[] = [];
/** A text editor as the hunk review uses it: its decorations, by type, and its cursor. */
export interface StubEditor {
  document: { uri: Uri };
  selection: { active: { line: number } };
  decorations: Map<unknown, { range: unknown; hoverMessage?: unknown }[]>;
  setDecorations(type: unknown, options: { range: unknown; hoverMessage?: unknown }[]): void;
  revealRange(): void;
}

export function textEditor(uri: string, line = 0): StubEditor {
  const e: StubEditor = {
    document: { uri: Uri.parse(uri) },
    selection: { active: { line } },
    decorations: new Map(),
    setDecorations: (type, options) => void e.decorations.set(type, options),
    revealRange: () => undefined,
  };
  return e;
}

/** What `window.activeTextEditor` is. */
export const editor: { active?: { document: { uri: Uri } } & Partial<StubEditor> } = {};
/** `window.visibleTextEditors`. */
export const visibleEditors: StubEditor[] = [];
/** The CodeLens providers registered through the stub. */
export const codeLensProviders: { provideCodeLenses(doc: { uri: Uri }): { range: unknown; command?: { title: string; command: string; arguments?: unknown[] } }[] }[] = [];

export const stub = {
  Uri,
  CodeActionKind: { QuickFix: 'quickfix' },
  CodeAction: class {
    diagnostics?: unknown[];
    command?: { command: string; title: string; arguments: unknown[] };
    constructor(readonly title: string, readonly kind: string) {}
  },
  EventEmitter,
  TreeItem,
  CodeLens: class {
    constructor(readonly range: unknown, readonly command?: unknown) {}
  },
  MarkdownString: class {
    value: string;
    constructor(value = '') {
      this.value = value;
    }
    appendText(text: string) {
      this.value += text;
      return this;
    }
    appendCodeblock(code: string, language: string) {
      this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`;
      return this;
    }
  },
  Position: class {
    constructor(readonly line: number, readonly character: number) {}
  },
  Selection: class {
    constructor(readonly anchor: { line: number }, readonly active: { line: number }) {}
  },
  OverviewRulerLane: { Left: 1, Center: 2, Right: 4, Full: 7 },
  TextEditorRevealType: { Default: 0, InCenter: 1, InCenterIfOutsideViewport: 2, AtTop: 3 },
  TabInputTextDiff,
  Range: class {
    constructor(readonly startLine: number, readonly startCharacter: number, readonly endLine: number, readonly endCharacter: number) {}
  },
  Disposable: {
    from: (...items: { dispose(): unknown }[]) => ({ dispose: () => items.forEach((d) => d.dispose()) }),
  },
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  ThemeIcon: class {
    constructor(readonly id: string) {}
  },
  StatusBarAlignment: { Left: 1, Right: 2 },
  ThemeColor: class {
    constructor(readonly id: string) {}
  },
  window: {
    createStatusBarItem: (id: string) => {
      const item: Record<string, unknown> = { id, show() {}, dispose() {} };
      statusItems.push(item);
      return item;
    },
    showWarningMessage: async (...args: unknown[]) => {
      calls.push({ method: 'showWarningMessage', args });
      return warningAnswers.shift();
    },
    showInformationMessage: async (...args: unknown[]) => {
      calls.push({ method: 'showInformationMessage', args });
      return infoAnswers.shift();
    },
    showErrorMessage: async (...args: unknown[]) => void calls.push({ method: 'showErrorMessage', args }),
    createTreeView: (id: string) => {
      calls.push({ method: 'createTreeView', args: [id] });
      return disposable;
    },
    registerWebviewViewProvider: (id: string) => {
      calls.push({ method: 'registerWebviewViewProvider', args: [id] });
      return disposable;
    },
    createOutputChannel: (name: string) => {
      calls.push({ method: 'createOutputChannel', args: [name] });
      return { info() {}, warn() {}, error() {}, show() {}, dispose() {} };
    },
    tabGroups: {
      get all() {
        return [{ tabs }];
      },
      close: async (closing: (typeof tabs)[number][]) => {
        calls.push({ method: 'closeTabs', args: closing.map((t) => t.label) });
        for (const t of closing) tabs.splice(tabs.indexOf(t), 1);
        return true;
      },
    },
    showTextDocument: async (...args: unknown[]) => void calls.push({ method: 'showTextDocument', args }),
    get activeTextEditor() {
      return editor.active;
    },
    get visibleTextEditors() {
      return visibleEditors;
    },
    createTextEditorDecorationType: (options: unknown) => ({ options, dispose() {} }),
    onDidChangeVisibleTextEditors: () => disposable,
    onDidChangeActiveTextEditor: () => disposable,
  },
  workspace: {
    get textDocuments() {
      return documents;
    },
    get workspaceFolders() {
      return workspaceFolders;
    },
    openTextDocument: async (uri: Uri) => {
      const doc = document(uri.toString(), false);
      documents.push(doc);
      return doc;
    },
    asRelativePath: (uri: Uri) => uri.path.replace(/^\/w\//, ''),
    fs: {
      readFile: async (uri: Uri) => {
        const text = disk.get(uri.toString());
        if (text === undefined) throw new Error(`no such file: ${uri}`);
        return new TextEncoder().encode(text);
      },
    },
    onDidChangeTextDocument: () => disposable,
    registerTextDocumentContentProvider: (scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) => {
      providers.set(scheme, provider);
      return disposable;
    },
  },
  languages: {
    registerCodeActionsProvider: (_selector: unknown, provider: (typeof codeActionProviders)[number]) => {
      codeActionProviders.push(provider);
      return disposable;
    },
    registerCodeLensProvider: (_selector: unknown, provider: (typeof codeLensProviders)[number]) => {
      codeLensProviders.push(provider);
      return disposable;
    },
    onDidChangeDiagnostics: (listener: Listener<{ uris: Uri[] }>) => {
      diagnosticsListeners.push(listener);
      return disposable;
    },
    getDiagnostics: (uri: Uri) => diagnostics.get(uri.toString()) ?? [],
  },
  commands: {
    executeCommand: async (...args: unknown[]) => {
      calls.push({ method: 'executeCommand', args });
      if (args[0] === 'vscode.diff') tabs.push({ label: String(args[3]), input: new TabInputTextDiff(args[1] as Uri, args[2] as Uri) });
    },
    registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
      commands.set(id, fn);
      return disposable;
    },
  },
};

const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const original = loader._load;
loader._load = function (request: string, parent: unknown, isMain: boolean) {
  return request === 'vscode' ? stub : original.call(this, request, parent, isMain);
};
