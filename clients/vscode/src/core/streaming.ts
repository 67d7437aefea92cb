/**
 * A reply that streams in, rendered in time linear in its length.
 *
 * The text is cut into Markdown blocks. Every block but the last is final once a later block
 * has begun: it is rendered once and its element never changes again (so the user's
 * selection in it survives, and no work is spent on it twice). Only the last block, the
 * tail, is rendered again as text arrives; once the tail is long (a big code block or
 * table), it is rendered again only each time it has grown by a quarter, and the text in
 * between is shown as it came (appended, never rewritten). Each character is thus rendered
 * a bounded number of times, whatever the shape of the reply.
 *
 * Pure: rendering and block detection are injected (markdown-it in the webview, a counting
 * stand-in in the tests).
 */

export interface MarkdownEngine {
  /** HTML for a piece of Markdown. */
  render(markdown: string): string;
  /** Offsets (in `markdown`) where its top-level blocks begin, in order. */
  blockStarts(markdown: string): number[];
}

/** What changed since the last update, for the page to apply. */
export interface StreamStep {
  /** The text did not continue the previous one: clear everything shown, then apply. */
  reset?: true;
  /** HTML of blocks that became final: append it after the earlier final blocks. */
  append: string;
  /** The tail's HTML, when it was rendered again (replaces the tail); undefined: unchanged. */
  tail?: string;
  /** Raw text to append after the tail (shown as is until the tail is rendered again). Empty
   * together with a `tail`: drop the raw text shown so far. */
  raw: string;
}

/** A tail up to this long is rendered again on every update (it reads formatted at once). */
export const SMALL_TAIL = 2000;
/** A longer tail is rendered again once it has grown by this factor. */
export const TAIL_GROWTH = 1.25;

/** A link reference definition line (CommonMark: up to three spaces, `[label]:`, a target). */
const REFERENCE = /^ {0,3}\[[^\]\n]+\]:[ \t]*\S/m;

export class StreamingMarkdown {
  private text = '';
  /** Offset where the tail starts: everything before it is final. */
  private stable = 0;
  /** How much of the tail (from `stable`) its current HTML covers. */
  private rendered = 0;
  /** `finish` ran and nothing came since. */
  private finished = false;

  constructor(private readonly engine: MarkdownEngine) {}

  /** The whole text so far (it only grows while a reply streams; anything else starts over). */
  update(text: string): StreamStep {
    if (!text.startsWith(this.text)) return this.restart(text);
    if (text.length === this.text.length) return { append: '', raw: '' };
    this.finished = false;
    const before = this.text.length;
    this.text = text;
    const tail = text.length - this.stable;
    if (tail <= SMALL_TAIL || tail >= this.rendered * TAIL_GROWTH) return this.renderTail();
    return { append: '', raw: text.slice(before) };
  }

  /** The reply is complete: whatever is shown raw gets rendered. A reply with link reference
   * definitions (`[1]: https://…`, which may serve links in blocks above them) is rendered
   * once more as a whole, so those links work. Idempotent. */
  finish(): StreamStep {
    if (this.finished) return { append: '', raw: '' };
    this.finished = true;
    if (this.stable > 0 && REFERENCE.test(this.text)) {
      this.stable = this.text.length;
      this.rendered = 0;
      return { reset: true, append: this.engine.render(this.text), tail: '', raw: '' };
    }
    if (this.stable + this.rendered === this.text.length) return { append: '', raw: '' };
    return this.renderTail();
  }

  private restart(text: string): StreamStep {
    this.finished = false;
    this.text = text;
    this.stable = 0;
    this.rendered = 0;
    return { ...this.renderTail(), reset: true };
  }

  /** Move the blocks of the tail that are final into the final part, render the rest. */
  private renderTail(): StreamStep {
    let tail = this.text.slice(this.stable);
    let append = '';
    const starts = this.engine.blockStarts(tail);
    const last = starts.length > 1 ? starts[starts.length - 1] : 0;
    if (last > 0) {
      append = this.engine.render(tail.slice(0, last));
      this.stable += last;
      tail = tail.slice(last);
    }
    this.rendered = tail.length;
    return { append, tail: this.engine.render(tail), raw: '' };
  }
}
