import { ContentBlock } from './wire';

/** The words of a prompt on one line (attachments and images left out). */
export function promptText(content: ContentBlock[]): string {
  return content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}
