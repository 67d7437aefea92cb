/**
 * The prompt box's text and attachments → the `ContentBlock[]` of `tether/prompt`.
 *
 * `@path` mentions name workspace files; each one that resolves becomes a `resource_link`
 * (the daemon reads the live buffer, unsaved text included). Selections added from the
 * editor arrive as attachments with a range.
 */
import { ContentBlock, Range } from './wire';

/** A file or a selection in it, or an image pasted or dropped into the prompt box. */
export type Attachment = FileAttachment | ImageAttachment;

export interface FileAttachment {
  uri: string;
  range?: Range;
  /** What the chip shows, e.g. `ops.py:12-14`. */
  label: string;
}

export interface ImageAttachment {
  image: { mimeType: ImageType; data: string };
  label: string;
}

/** The image types the models take. */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];
/** The largest image the Anthropic API accepts (5 MB), base64 makes it 4/3 bigger. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export function isImageType(type: string): type is ImageType {
  return (IMAGE_TYPES as readonly string[]).includes(type);
}

export function isImage(a: Attachment): a is ImageAttachment {
  return 'image' in a;
}

// `@` at the start or after whitespace, then a path; trailing punctuation is not part of it.
const MENTION = /(^|\s)@([^\s@]+)/g;
const TRAILING = /[.,;:!?)\]}'"]+$/;

export function findMentions(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const path = match[2].replace(TRAILING, '');
    if (path && !found.includes(path)) found.push(path);
  }
  return found;
}

/** Build the prompt. `resolve` maps a mentioned path to a file URI, or undefined. */
export function buildPrompt(
  text: string,
  attachments: Attachment[],
  resolve: (path: string) => string | undefined,
): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const trimmed = text.trim();
  if (trimmed) blocks.push({ type: 'text', text: trimmed });
  const seen = new Set<string>();
  for (const path of findMentions(trimmed)) {
    const uri = resolve(path);
    if (uri && !seen.has(uri)) {
      seen.add(uri);
      blocks.push({ type: 'resource_link', uri, name: path });
    }
  }
  for (const a of attachments) {
    if (isImage(a)) {
      blocks.push({ type: 'image', mimeType: a.image.mimeType, data: a.image.data });
      continue;
    }
    const key = a.range ? `${a.uri}#${rangeKey(a.range)}` : a.uri;
    if (seen.has(key)) continue;
    seen.add(key);
    blocks.push(a.range ? { type: 'resource_link', uri: a.uri, range: a.range, name: a.label } : { type: 'resource_link', uri: a.uri, name: a.label });
  }
  return blocks;
}

function rangeKey(r: Range): string {
  return `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
}

/** The `@query` being typed at the caret, for the file picker, or null. */
export function mentionAtCaret(text: string, caret: number): { start: number; query: string } | null {
  let i = caret;
  while (i > 0 && !/\s/.test(text[i - 1]) && text[i - 1] !== '@') i--;
  if (i === 0 || text[i - 1] !== '@') return null;
  const at = i - 1;
  if (at > 0 && !/\s/.test(text[at - 1])) return null; // an e-mail address, not a mention
  return { start: at, query: text.slice(i, caret) };
}

/** Replace the `@query` at `start` (up to the caret) with `@path `. */
export function insertMention(text: string, start: number, caret: number, path: string): { text: string; caret: number } {
  const inserted = `@${path} `;
  return { text: text.slice(0, start) + inserted + text.slice(caret), caret: start + inserted.length };
}

/** Label of an editor selection chip: `ops.py:12-14` (1-based lines). */
export function selectionLabel(fileName: string, range: Range): string {
  const first = range.start.line + 1;
  // A selection ending at column 0 does not include that line.
  const lastLine = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return first === lastLine ? `${fileName}:${first}` : `${fileName}:${first}-${lastLine}`;
}

/** A prompt built elsewhere (a quick fix) as the prompt box holds it: its words, and its
 * files and images as attachments. */
export function toComposer(blocks: ContentBlock[]): { text: string; attachments: Attachment[] } {
  const text: string[] = [];
  const attachments: Attachment[] = [];
  for (const b of blocks) {
    if (b.type === 'text') text.push(b.text);
    else if (b.type === 'resource_link') attachments.push({ uri: b.uri, ...(b.range ? { range: b.range } : {}), label: b.name ?? b.uri.slice(b.uri.lastIndexOf('/') + 1) });
    else if (isImageType(b.mimeType)) attachments.push({ image: { mimeType: b.mimeType, data: b.data }, label: 'image' });
  }
  return { text: text.join('\n'), attachments };
}
