/**
 * The active session's change set as the daemon lists it (`tether/listChanges`): every hunk
 * of every file, whatever its state, kept per file so that one file can be listed again
 * alone (after the user typed in it, or a `changes` update named it). What the editor
 * decorations, the CodeLenses, the hunk navigation and the Changes view's counts read.
 */
import { uriKey } from './uri';
import { ChangeListing, Hunk, HunkCounts, NotDone, Range } from './wire';

export interface FileHunks {
  uri: string;
  hunks: Hunk[];
}

export interface HunkRef {
  uri: string;
  hunk: Hunk;
}

export class HunkIndex {
  private files = new Map<string, FileHunks>();
  private session: string | null = null;

  get sessionId(): string | null {
    return this.session;
  }

  /** Another session (or none): forget everything; `listing` is the new session's whole set. */
  reset(sessionId: string | null, listing?: ChangeListing): void {
    this.session = sessionId;
    this.files = new Map();
    for (const file of listing?.files ?? []) this.files.set(uriKey(file.uri), { uri: file.uri, hunks: file.hunks });
  }

  /** `listing` is what `tether/listChanges` answered for the one file `uri` (all states). */
  replaceFile(uri: string, listing: ChangeListing): void {
    const key = uriKey(uri);
    const file = listing.files.find((f) => uriKey(f.uri) === key);
    if (file && file.hunks.length) this.files.set(key, { uri: file.uri, hunks: file.hunks });
    else this.files.delete(key);
  }

  /** Files with hunks, in the order the daemon listed them. */
  all(): FileHunks[] {
    return [...this.files.values()];
  }

  file(uri: string): FileHunks | undefined {
    return this.files.get(uriKey(uri));
  }

  has(uri: string): boolean {
    return this.files.has(uriKey(uri));
  }

  /** The hunks of `uri` the editor shows: pending ones that have a place in the file. */
  pending(uri: string): Hunk[] {
    return (this.file(uri)?.hunks ?? []).filter((h) => h.state === 'pending' && h.range !== undefined).sort((a, b) => a.range!.start.line - b.range!.start.line);
  }

  find(hunkId: string): HunkRef | undefined {
    for (const file of this.files.values()) {
      const hunk = file.hunks.find((h) => h.hunkId === hunkId);
      if (hunk) return { uri: file.uri, hunk };
    }
    return undefined;
  }

  /** Pending hunks whose lines were changed since (the user's edits, a later turn): no place
   * in the file, so not in `pending`; they can be kept as they are, not undone. */
  conflicts(uri: string): Hunk[] {
    return (this.file(uri)?.hunks ?? []).filter((h) => h.state === 'pending' && h.conflict);
  }

  /** Hunks of `uri` still to review: pending ones, in conflict or not (what file-level keep
   * and undo act on, and what keeps the review commands available in its editor). */
  reviewable(uri: string): Hunk[] {
    return (this.file(uri)?.hunks ?? []).filter((h) => h.state === 'pending');
  }

  /** The pending hunk on `line` (zero-based) of `uri`. */
  at(uri: string, line: number): Hunk | undefined {
    return this.pending(uri).find((h) => covers(h.range!, line));
  }

  /** The next (or previous) pending hunk from `line` of `uri`: in this file, then in the
   * files after (before) it, round to where it started. */
  step(uri: string, line: number, direction: 1 | -1): HunkRef | undefined {
    const here = this.pending(uri);
    const inFile = direction === 1 ? here.find((h) => h.range!.start.line > line) : [...here].reverse().find((h) => h.range!.start.line < line);
    if (inFile) return { uri, hunk: inFile };
    const files = this.all().filter((f) => this.pending(f.uri).length > 0 || uriKey(f.uri) === uriKey(uri));
    if (!files.some((f) => uriKey(f.uri) === uriKey(uri))) files.push({ uri, hunks: [] });
    const at = files.findIndex((f) => uriKey(f.uri) === uriKey(uri));
    for (let i = 1; i <= files.length; i++) {
      const file = files[(at + direction * i + files.length * 2) % files.length];
      const hunks = this.pending(file.uri);
      if (hunks.length) return { uri: file.uri, hunk: direction === 1 ? hunks[0] : hunks[hunks.length - 1] };
    }
    return undefined;
  }

  /** Counts per turn, over every file. */
  countsByTurn(): Map<string, HunkCounts> {
    const counts = new Map<string, HunkCounts>();
    for (const file of this.files.values()) {
      for (const hunk of file.hunks) {
        let c = counts.get(hunk.turnId);
        if (!c) counts.set(hunk.turnId, (c = zero()));
        add(c, hunk);
      }
    }
    return counts;
  }

  /** The hunks of one turn, per file (files in listing order). */
  turnFiles(turnId: string): FileHunks[] {
    return this.all()
      .map((f) => ({ uri: f.uri, hunks: f.hunks.filter((h) => h.turnId === turnId) }))
      .filter((f) => f.hunks.length > 0);
  }
}

/** Each hunk counted once: a pending hunk in conflict counts as a conflict (not as pending
 * too); a kept one stays kept. (The daemon's own `counts` count conflicts inside pending and
 * kept: add them up here, not there.) */
export function countHunks(hunks: Hunk[]): HunkCounts {
  const c = zero();
  for (const hunk of hunks) add(c, hunk);
  return c;
}

/** "2 pending · 1 kept · 1 undone · 1 conflict": the counts that are not zero. */
export function countLabel(c: HunkCounts): string {
  const parts = [
    c.pending ? `${c.pending} pending` : '',
    c.kept ? `${c.kept} kept` : '',
    c.undone ? `${c.undone} undone` : '',
    c.conflicts ? `${c.conflicts} conflict${c.conflicts === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return parts.join(' · ');
}

/** The last line (zero-based) a range of whole lines covers; for an empty range (lines
 * removed), its start line. */
export function lastLine(range: Range): number {
  if (range.end.line > range.start.line && range.end.character === 0) return range.end.line - 1;
  return range.end.line;
}

export function covers(range: Range, line: number): boolean {
  return line >= range.start.line && line <= lastLine(range);
}

export function isEmpty(range: Range): boolean {
  return range.start.line === range.end.line && range.start.character === range.end.character;
}

/** "lines 5–7", "line 5", or where lines were removed (or added lines undone), "above
 * line 5" (one-based, as the editor shows them). */
export function linesLabel(range: Range | undefined): string {
  if (!range) return 'lines it changed';
  const first = range.start.line + 1;
  if (isEmpty(range)) return `above line ${first}`;
  const last = lastLine(range) + 1;
  return last === first ? `line ${first}` : `lines ${first}–${last}`;
}

/** The message for hunks the daemon did not keep or undo: each file and lines (as the
 * editor last showed them) and the daemon's reason. `where` names a file as the user
 * reads it (relative to the workspace). */
export function notDoneMessage(verb: 'keep' | 'undo', notDone: NotDone[], lastKnown: (hunkId: string) => Hunk | undefined, where: (uri: string) => string): string {
  const lines = notDone.map((n) => {
    const hunk = lastKnown(n.hunkId);
    const place = hunk?.range ? linesLabel(hunk.range) : hunk ? `the change "${hunk.summary}"` : `change ${n.hunkId}`;
    return `${where(n.uri)}, ${place}: ${n.reason}`;
  });
  const what = notDone.length === 1 ? 'the change in' : `${notDone.length} changes:`;
  return `Tether could not ${verb} ${what} ${lines.join('; ')}`;
}

function zero(): HunkCounts {
  return { pending: 0, kept: 0, undone: 0, conflicts: 0 };
}

function add(c: HunkCounts, hunk: Hunk): void {
  if (hunk.state === 'pending' && hunk.conflict) c.conflicts++;
  else c[hunk.state]++;
}
