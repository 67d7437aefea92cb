/**
 * What the agent changed, per turn: the files, their text before the turn first touched
 * them and after its last edit. Feeds the "Review changes" view, its diffs and "Undo turn",
 * and the set of touched files whose diagnostics are forwarded to the daemon.
 */
import { promptText } from './promptText';
import { Disposable } from './rpc';
import { uriKey } from './uri';
import { spliceRegion, wholeTexts } from './diffRegion';
import { HistoryEntry, SessionUpdate, ToolContent, ToolKind } from './wire';

type DiffContent = Extract<ToolContent, { type: 'diff' }>;

export { promptText };

export interface FileChange {
  uri: string;
  /** Text before this turn first changed the file; null when the turn created it. */
  before: string | null;
  after: string;
  /** Set when `before` and `after` are only the region of a big file that starts at this
   * zero-based line: the daemon sent a region and the whole file was not at hand. */
  line?: number;
}

export interface TurnChanges {
  sessionId: string;
  turnId: string;
  /** The user's prompt, for the view's label. */
  prompt: string;
  files: FileChange[];
  finished: boolean;
  /** The daemon can undo it (it holds the turn's checkpoint). */
  rewindable: boolean;
}

const EDITING_KINDS: ReadonlySet<ToolKind> = new Set(['edit', 'delete', 'move']);

export class ChangeTracker {
  /** `openText` gives a file's text as the editor has it now (undefined when it does not
   * have it): a big file's diff is a region, put back into the file to get whole texts. */
  constructor(private readonly openText: (uri: string) => string | undefined = () => undefined) {}

  private readonly turns: TurnChanges[] = [];
  /** Keys (`uriKey`) of files the agent wrote or is about to write: their diagnostics go to the daemon. */
  readonly touched = new Set<string>();
  private readonly listeners: (() => void)[] = [];
  private readonly touchListeners: ((uri: string) => void)[] = [];

  /** The turns' changes changed; dispose the result to stop listening. */
  onDidChange(listener: () => void): Disposable {
    return subscribe(this.listeners, listener);
  }

  /** A file became touched (first time): `uri` as the daemon or the edit named it. */
  onDidTouch(listener: (uri: string) => void): Disposable {
    return subscribe(this.touchListeners, listener);
  }

  /** Feed one live `tether/sessionUpdate`. */
  apply(sessionId: string, turnId: string, update: SessionUpdate): void {
    this.feed(sessionId, turnId, update, true);
  }

  /** A session loaded from the daemon (resumed, or the one a reloaded window had open):
   * its turns' changes come from the history; only `rewindable` turns can be undone. */
  load(sessionId: string, history: HistoryEntry[], rewindable: string[] | undefined): void {
    for (let i = this.turns.length - 1; i >= 0; i--) if (this.turns[i].sessionId === sessionId) this.turns.splice(i, 1);
    for (const entry of history) {
      const { turnId, ...update } = entry;
      this.feed(sessionId, turnId, update, false);
    }
    for (const turn of this.turns) {
      if (turn.sessionId !== sessionId) continue;
      turn.finished = true;
      // An older daemon does not say; then only turns seen live here can be undone.
      turn.rewindable = rewindable?.includes(turn.turnId) ?? false;
    }
    this.changed();
  }

  private feed(sessionId: string, turnId: string, update: SessionUpdate, live: boolean): void {
    switch (update.kind) {
      case 'user_message':
        this.turn(sessionId, turnId, promptText(update.content));
        return;
      case 'tool_call':
        if (live && EDITING_KINDS.has(update.toolKind)) {
          // Announced before the edit is applied, so diagnostics caused by it are not missed.
          for (const location of update.locations ?? []) this.touch(location.uri);
        }
        return;
      case 'tool_call_update':
        for (const content of update.content ?? []) {
          if (content.type === 'diff') this.record(sessionId, turnId, content, live);
        }
        return;
      case 'turn_end': {
        const turn = this.find(sessionId, turnId);
        if (turn && live) {
          turn.finished = true;
          this.changed();
        }
        return;
      }
      default:
        return;
    }
  }

  /** An edit is arriving for `uri` (workspace/applyEdit). */
  touch(uri: string): void {
    const key = uriKey(uri);
    if (this.touched.has(key)) return;
    this.touched.add(key);
    for (const listener of this.touchListeners) listener(uri);
  }

  /** Newest first; only turns that changed files. */
  list(sessionId?: string): TurnChanges[] {
    return this.turns
      .filter((t) => t.files.length > 0 && (sessionId === undefined || t.sessionId === sessionId))
      .reverse();
  }

  /** Newest first: turns that changed files as this client saw them, and the turns `also`
   * names (those the daemon lists changes of, e.g. a file a shell command changed). */
  listWith(sessionId: string, also: ReadonlySet<string>): TurnChanges[] {
    return this.turns.filter((t) => t.sessionId === sessionId && (t.files.length > 0 || also.has(t.turnId))).reverse();
  }

  find(sessionId: string, turnId: string): TurnChanges | undefined {
    return this.turns.find((t) => t.sessionId === sessionId && t.turnId === turnId);
  }

  /** `tether/rewind` put files back as they were before `turnId`: forget it and later turns. */
  rewound(sessionId: string, turnId: string): void {
    const index = this.turns.findIndex((t) => t.sessionId === sessionId && t.turnId === turnId);
    if (index < 0) return;
    const later = this.turns.filter((t, i) => i >= index && t.sessionId === sessionId);
    for (const t of later) this.turns.splice(this.turns.indexOf(t), 1);
    this.changed();
  }

  private turn(sessionId: string, turnId: string, prompt: string): TurnChanges {
    let turn = this.find(sessionId, turnId);
    if (!turn) {
      turn = { sessionId, turnId, prompt, files: [], finished: false, rewindable: true };
      this.turns.push(turn);
    }
    return turn;
  }

  private record(sessionId: string, turnId: string, diff: DiffContent, live: boolean): void {
    const uri = diff.uri;
    // Diagnostics matter for files being edited now, not for the history of a resumed session.
    if (live) this.touch(uri);
    const turn = this.find(sessionId, turnId) ?? this.turn(sessionId, turnId, '');
    const index = turn.files.findIndex((f) => uriKey(f.uri) === uriKey(uri));
    const file = index >= 0 ? turn.files[index] : undefined;
    const change = this.merged(file, diff, live);
    if (file) turn.files[index] = change;
    else turn.files.push(change);
    if (live) this.changed();
  }

  /** The file's change once `diff` is added to what the turn did to it so far (`file`). */
  private merged(file: FileChange | undefined, diff: DiffContent, live: boolean): FileChange {
    const uri = file?.uri ?? diff.uri;
    // The turn's `before` is the text before its first edit of the file, when that is known.
    const keep = (before: string | null, after: string): FileChange =>
      file && file.line === undefined ? { uri, before: file.before, after } : { uri, before, after };
    if (diff.line === undefined) return keep(diff.oldText ?? null, diff.newText);
    const oldText = diff.oldText ?? '';
    // A region of a file whose whole texts are known: put it into the last known text.
    const at = file ? diff.line - (file.line ?? 0) : -1;
    const patched = file && at >= 0 ? spliceRegion(file.after, at, oldText, diff.newText) : undefined;
    if (file && patched !== undefined) return { ...file, after: patched };
    // Live, the editor holds the file as the edit left it.
    const whole = live ? wholeTexts(diff, this.openText(uri), 'new') : undefined;
    if (whole) return keep(whole.before, whole.after);
    // Only the region is known; a later region that does not fit in it replaces it.
    return { uri, before: oldText, after: diff.newText, line: diff.line };
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}


function subscribe<T>(listeners: T[], listener: T): Disposable {
  listeners.push(listener);
  return {
    dispose: () => {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    },
  };
}
