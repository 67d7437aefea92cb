/** A streamed Markdown text on the page (`core/streaming.ts` decides what to render). */
import { blockStarts, renderMarkdown } from '../core/markdown';
import { StreamStep, StreamingMarkdown } from '../core/streaming';
import { h } from './dom';

const ENGINE = { render: renderMarkdown, blockStarts };

/** A streamed Markdown text on the page: the final blocks (appended to, never rewritten),
 * the last block (rendered again as it grows), and text not rendered yet, shown as is. */
export class StreamView {
  readonly el: HTMLElement;
  private readonly final = h('div', { class: 'stream-final' });
  private readonly tail = h('div', { class: 'stream-tail' });
  private readonly raw = h('span', { class: 'stream-raw' });
  private readonly markdown = new StreamingMarkdown(ENGINE);

  constructor(cls: string) {
    this.el = h('div', { class: cls }, this.final, this.tail, this.raw);
  }

  update(text: string): void {
    this.apply(this.markdown.update(text));
  }

  finish(): void {
    this.apply(this.markdown.finish());
  }

  private apply(step: StreamStep): void {
    if (step.reset) this.final.replaceChildren();
    // markdown-it with html off: safe markup only.
    if (step.append) this.final.insertAdjacentHTML('beforeend', step.append);
    if (step.tail !== undefined) {
      this.tail.innerHTML = step.tail;
      this.raw.textContent = '';
    }
    if (step.raw) this.raw.append(step.raw);
  }
}
