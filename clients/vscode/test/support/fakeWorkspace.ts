/**
 * The editor side that vscode-languageclient and VS Code provide in the real extension:
 * open buffers with versions, `workspace/applyEdit` (refusing stale versions, as VS Code
 * does), didOpen/didChange to the daemon, and saving a buffer to disk. Test-only.
 */
import * as fs from 'fs';
import { fileURLToPath, pathToFileURL } from 'url';
import { MessageConnection } from 'vscode-jsonrpc/node';

interface Buffer {
  text: string;
  version: number;
}

interface TextEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

type DocumentChange =
  | { kind: 'create'; uri: string }
  | { textDocument: { uri: string; version: number | null }; edits: TextEdit[] };

export class FakeWorkspace {
  readonly buffers = new Map<string, Buffer>();
  /** Server→client traffic in order, e.g. `applyEdit file:///…`, `save file:///…`. */
  readonly events: string[] = [];
  /** Runs while a save is handled, before it is answered (a language server reacting to it). */
  onSave: ((uri: string) => Promise<void>) | undefined;

  constructor(private readonly conn: MessageConnection) {
    conn.onRequest('workspace/applyEdit', (params: { edit: { documentChanges?: DocumentChange[] } }) => this.applyEdit(params.edit.documentChanges ?? []));
  }

  open(file: string, text?: string): string {
    const uri = pathToFileURL(file).toString();
    const buffer = { text: text ?? fs.readFileSync(file, 'utf8'), version: 1 };
    this.buffers.set(uri, buffer);
    void this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: buffer.text } });
    return uri;
  }

  text(uri: string): string | undefined {
    return this.buffers.get(uri)?.text;
  }

  /** What `tether/saveDocuments` does in VS Code: write the buffer to its file. */
  async save(uris: string[]): Promise<void> {
    for (const uri of uris) {
      this.events.push(`save ${uri}`);
      const buffer = this.buffers.get(uri);
      if (buffer) fs.writeFileSync(fileURLToPath(uri), buffer.text);
      await this.onSave?.(uri);
    }
  }

  private applyEdit(changes: DocumentChange[]): { applied: boolean; failureReason?: string } {
    for (const change of changes) {
      if ('kind' in change) {
        this.events.push(`create ${change.uri}`);
        if (!this.buffers.has(change.uri)) this.buffers.set(change.uri, { text: '', version: 0 });
        continue;
      }
      const uri = change.textDocument.uri;
      this.events.push(`applyEdit ${uri}`);
      let buffer = this.buffers.get(uri);
      const version = change.textDocument.version;
      if (buffer && version !== null && buffer.version !== 0 && version !== buffer.version) {
        return { applied: false, failureReason: 'stale version' };
      }
      const opening = !buffer || buffer.version === 0;
      if (!buffer) {
        // VS Code opens a file that is not open yet in the background and edits that.
        const file = fileURLToPath(uri);
        buffer = { text: fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', version: 0 };
        this.buffers.set(uri, buffer);
      }
      buffer.text = applyEdits(buffer.text, change.edits);
      buffer.version++;
      if (opening) {
        void this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'text', version: buffer.version, text: buffer.text } });
      } else {
        void this.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: buffer.version }, contentChanges: [{ text: buffer.text }] });
      }
    }
    return { applied: true };
  }
}

/** Apply LSP text edits (UTF-16 positions, which is what JS string indices are). */
export function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const offset = (p: { line: number; character: number }) =>
    p.line >= starts.length ? text.length : Math.min(starts[p.line] + p.character, p.line + 1 < starts.length ? starts[p.line + 1] : text.length);
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
  return out;
}
