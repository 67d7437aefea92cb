/**
 * The session picker's entries: each workspace folder's sessions under its name (a
 * multi-root window has several), and a "New session" per folder. Pure: `pickers.ts`
 * turns these into QuickPick items.
 */
import { FolderSessions } from './session';

export type SessionEntry =
  | { type: 'folder'; label: string }
  | { type: 'new'; label: string; folderUri: string }
  | { type: 'session'; label: string; description: string; current: boolean; sessionId: string; folderUri: string };

export function sessionEntries(groups: FolderSessions[], currentId: string | null, now: number = Date.now()): SessionEntry[] {
  const multiRoot = groups.length > 1;
  const entries: SessionEntry[] = [];
  for (const { folder, sessions } of groups) {
    if (multiRoot) entries.push({ type: 'folder', label: folder.name });
    entries.push({ type: 'new', label: multiRoot ? `New session in ${folder.name}` : 'New session', folderUri: folder.uri });
    for (const s of sessions) {
      entries.push({
        type: 'session',
        label: s.title || '(untitled)',
        description: `${s.turns} turn${s.turns === 1 ? '' : 's'} · ${when(s.updatedAt, now)}`,
        current: s.sessionId === currentId,
        sessionId: s.sessionId,
        folderUri: folder.uri,
      });
    }
  }
  return entries;
}

export function when(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const minutes = Math.round((now - t) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 60 * 24) return `${Math.round(minutes / 60)} h ago`;
  return new Date(t).toLocaleDateString();
}
