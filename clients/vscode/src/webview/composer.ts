/**
 * The prompt box: text, `@file` suggestions (an ARIA combobox), attachment chips (files,
 * selections, images pasted or dropped in), and Send / Stop. Enter sends, Shift+Enter is a
 * new line, Escape closes suggestions or stops. While Tether cannot take a prompt (no daemon,
 * model or key) Send keeps the text where it is and points at the set-up card.
 */
import { Attachment, MAX_IMAGE_BYTES, insertMention, isImage, isImageType, mentionAtCaret } from '../core/mentions';
import { send } from './vscodeApi';
import { button, h, icon } from './dom';

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly chips = h('div', { class: 'chips', 'aria-label': 'Attached context' });
  private readonly list = h('ul', { id: 'suggest', role: 'listbox', 'aria-label': 'Files', hidden: true });
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private attachments: Attachment[] = [];
  private suggestions: string[] = [];
  private active = 0;
  private mention: { start: number; query: string } | null = null;
  private requestId = 0;
  private busy = false;
  private ready = false;

  /** `blocked`: Send was pressed while Tether cannot take the prompt. */
  constructor(private readonly blocked: () => void = () => {}) {
    this.input = h('textarea', {
      id: 'prompt',
      rows: '3',
      role: 'combobox',
      'aria-label': 'Message Tether',
      'aria-autocomplete': 'list',
      'aria-controls': 'suggest',
      'aria-expanded': 'false',
      placeholder: 'Ask Tether… (@ mentions a file)',
    });
    const addSelection = button('Add the editor selection to the prompt', { class: 'icon-button' }, icon('selection'), h('span', { class: 'label' }, ' Add selection'));
    addSelection.addEventListener('click', () => send({ type: 'addSelection' }));
    this.sendButton = button('Send (Enter)', { class: 'primary send' }, icon('send'), ' Send');
    this.stopButton = button('Stop the running turn (Escape)', { class: 'secondary stop', hidden: true }, icon('debug-stop'), ' Stop');
    this.sendButton.addEventListener('click', () => this.submit());
    this.stopButton.addEventListener('click', () => send({ type: 'stop' }));
    this.input.addEventListener('keydown', (e) => this.onKey(e));
    this.input.addEventListener('input', () => this.onInput());
    this.input.addEventListener('paste', (e) => {
      if (this.takeImages(e.clipboardData)) e.preventDefault();
    });
    this.list.addEventListener('mousedown', (e) => {
      const li = (e.target as HTMLElement).closest('li');
      if (!li) return;
      e.preventDefault();
      this.accept(Number(li.dataset.index));
    });
    this.el = h('div', { class: 'composer' }, this.chips, h('div', { class: 'input-wrap' }, this.input, this.list), h('div', { class: 'actions' }, addSelection, h('span', { class: 'spacer' }), this.stopButton, this.sendButton));
    // Images dropped anywhere on the prompt box (files from the OS or a browser).
    this.el.addEventListener('dragover', (e) => {
      if ([...(e.dataTransfer?.items ?? [])].some((i) => i.kind === 'file')) {
        e.preventDefault();
        this.el.classList.add('dropping');
      }
    });
    this.el.addEventListener('dragleave', () => this.el.classList.remove('dropping'));
    this.el.addEventListener('drop', (e) => {
      this.el.classList.remove('dropping');
      if (this.takeImages(e.dataTransfer)) e.preventDefault();
    });
  }

  /** Can a prompt be sent now? (Not: no daemon, model or key.) */
  setReady(ready: boolean): void {
    this.ready = ready;
  }

  /** A prompt that could not be sent comes back, unless something new was typed meanwhile. */
  restore(text: string, attachments: Attachment[]): void {
    if (!this.input.value.trim()) this.input.value = text;
    for (const a of attachments) this.attach(a);
    this.input.focus();
  }

  /** Images among `data`'s files become attachments; true when there were any. */
  private takeImages(data: DataTransfer | null): boolean {
    const files = [...(data?.files ?? [])].filter((f) => f.type.startsWith('image/'));
    for (const file of files) {
      if (!isImageType(file.type)) {
        send({ type: 'warn', message: `${file.name || 'the image'} is a ${file.type}; models take PNG, JPEG, GIF and WebP.` });
      } else if (file.size > MAX_IMAGE_BYTES) {
        send({ type: 'warn', message: `${file.name || 'the image'} is ${(file.size / 1048576).toFixed(1)} MB; images can be 5 MB at most.` });
      } else {
        const mimeType = file.type;
        const reader = new FileReader();
        reader.onload = () => {
          const data = String(reader.result).replace(/^data:[^,]*,/, '');
          this.attach({ image: { mimeType, data }, label: file.name && file.name !== 'image.png' ? file.name : `image ${this.attachments.filter(isImage).length + 1}` });
        };
        reader.readAsDataURL(file);
      }
    }
    return files.length > 0;
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.stopButton.hidden = !busy;
    // While a turn runs, a new prompt is queued by the daemon and joins at the next step.
    this.sendButton.lastChild!.textContent = busy ? ' Queue' : ' Send';
    this.sendButton.title = busy ? 'Queue this message for the running turn (Enter)' : 'Send (Enter)';
  }

  attach(a: Attachment): void {
    if (!this.attachments.some((x) => JSON.stringify(x) === JSON.stringify(a))) this.attachments.push(a);
    this.renderChips();
    this.input.focus();
  }

  showSuggestions(requestId: number, paths: string[]): void {
    if (requestId !== this.requestId || !this.mention) return;
    this.suggestions = paths;
    this.active = 0;
    this.renderList();
  }

  focus(): void {
    this.input.focus();
  }

  private submit(): void {
    const text = this.input.value;
    if (!text.trim() && this.attachments.length === 0) return;
    if (!this.ready) {
      this.blocked();
      return;
    }
    send({ type: 'prompt', text, attachments: this.attachments });
    this.input.value = '';
    this.attachments = [];
    this.renderChips();
    this.closeList();
  }

  private onKey(e: KeyboardEvent): void {
    const open = !this.list.hidden && this.suggestions.length > 0;
    if (open && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : -1) + this.suggestions.length) % this.suggestions.length;
      this.renderList();
    } else if (open && (e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
      e.preventDefault();
      this.accept(this.active);
    } else if (e.key === 'Escape') {
      if (open) this.closeList();
      else if (this.busy) send({ type: 'stop' });
      e.preventDefault();
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit();
    }
  }

  private onInput(): void {
    this.mention = mentionAtCaret(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (!this.mention) return this.closeList();
    send({ type: 'searchFiles', requestId: ++this.requestId, query: this.mention.query });
  }

  private accept(index: number): void {
    const path = this.suggestions[index];
    if (!path || !this.mention) return;
    const caret = this.input.selectionStart ?? this.input.value.length;
    const next = insertMention(this.input.value, this.mention.start, caret, path);
    this.input.value = next.text;
    this.input.setSelectionRange(next.caret, next.caret);
    this.closeList();
    this.input.focus();
  }

  private closeList(): void {
    this.mention = null;
    this.suggestions = [];
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
  }

  private renderList(): void {
    this.list.replaceChildren(
      ...this.suggestions.map((p, i) =>
        h('li', { id: `suggest-${i}`, role: 'option', 'aria-selected': String(i === this.active), 'data-index': String(i), class: i === this.active ? 'active' : undefined }, icon('file'), ` ${p}`),
      ),
    );
    const open = this.suggestions.length > 0;
    this.list.hidden = !open;
    this.input.setAttribute('aria-expanded', String(open));
    if (open) this.input.setAttribute('aria-activedescendant', `suggest-${this.active}`);
    this.list.querySelector('.active')?.scrollIntoView({ block: 'nearest' });
  }

  private renderChips(): void {
    this.chips.replaceChildren(
      ...this.attachments.map((a, i) => {
        const remove = button(`Remove ${a.label}`, { class: 'icon-button' }, icon('close'));
        remove.addEventListener('click', () => {
          this.attachments.splice(i, 1);
          this.renderChips();
        });
        if (isImage(a)) {
          return h('span', { class: 'chip image-chip' }, h('img', { class: 'chip-thumb', alt: '', src: `data:${a.image.mimeType};base64,${a.image.data}` }), ` ${a.label} `, remove);
        }
        return h('span', { class: 'chip' }, icon(a.range ? 'selection' : 'file'), ` ${a.label} `, remove);
      }),
    );
  }
}
