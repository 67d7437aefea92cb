/**
 * The conversation: one element per `ChatItem`, rebuilt only when the item's signature
 * (its `rev` plus the outside facts it shows) changes. The agent's text and thoughts stream:
 * their elements stay, and only their last Markdown block is rendered again
 * (`core/streaming.ts`), so a long reply costs linear time and a selection in it survives.
 *
 * Scrolling follows the conversation like Copilot Chat's: a new prompt brings the view to
 * the bottom and it follows the reply from there; once the user scrolls up it stays where
 * they are, and a "New messages below" chip says that more arrived.
 */
import { CardQuestion, ChatItem, ChatState, ToolCard } from '../core/chatState';
import { formatTokens } from '../core/format';
import { renderMarkdown } from '../core/markdown';
import { StreamView } from './streamView';
import { RULES_FILE } from '../core/rules';
import { toolCardView } from '../core/toolView';
import { send } from './vscodeApi';
import { button, h, icon } from './dom';

/** How close to the bottom counts as "at the bottom" (px). */
const BOTTOM_SLACK = 40;

export class Transcript {
  private readonly nodes = new Map<string, { sig: string; el: HTMLElement }>();
  private readonly streams = new Map<string, { rev: number; view: StreamView }>();
  /** The view follows new content (the user has not scrolled up). */
  private following = true;
  /** The chip that brings a user who scrolled up back to the bottom. */
  readonly chip: HTMLButtonElement;
  /** Cards the user opened or closed by hand keep that state across re-renders. */
  private readonly toggled = new Map<string, boolean>();
  /** Feedback typed on a plan card, kept if the card is rebuilt before it is sent. */
  private readonly feedback = new Map<string, string>();

  constructor(readonly root: HTMLElement) {
    this.chip = button('New messages below: scroll to the end', { class: 'new-below', hidden: true }, icon('arrow-down'), ' New messages below');
    this.chip.addEventListener('click', () => this.follow());
    root.addEventListener('scroll', () => {
      this.following = this.atBottom();
      if (this.following) this.chip.hidden = true;
    });
  }

  /** Go to the bottom and follow from there (a prompt was sent, the chip was clicked). */
  follow(): void {
    this.following = true;
    this.chip.hidden = true;
    this.root.scrollTop = this.root.scrollHeight;
  }

  private atBottom(): boolean {
    return this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < BOTTOM_SLACK;
  }

  /** Another conversation (a new, resumed or reloaded session): item ids start over, so no
   * element of the old one may be reused. */
  reset(): void {
    this.nodes.clear();
    this.streams.clear();
    this.following = true;
    this.chip.hidden = true;
    this.toggled.clear();
    this.feedback.clear();
    this.root.replaceChildren();
  }

  render(state: ChatState): void {
    const wanted = new Set<string>();
    let previous: HTMLElement | null = null;
    let changed = false;
    let prompted = false;
    const last = state.items[state.items.length - 1];
    for (const item of state.items) {
      wanted.add(item.id);
      if (item.kind === 'agent' || item.kind === 'thought') {
        // A streamed item keeps its element; it is complete once something follows it.
        changed = this.stream(item, item !== last || !state.busy) || changed;
      }
      const sig = signature(item, state);
      let node = this.nodes.get(item.id);
      if (!node || node.sig !== sig) {
        if (!node && item.kind === 'user') prompted = true;
        const el = this.build(item, state);
        if (node) node.el.replaceWith(el);
        node = { sig, el };
        this.nodes.set(item.id, node);
        changed = true;
      }
      const expectedNext: ChildNode | null = previous ? previous.nextSibling : this.root.firstChild;
      if (expectedNext !== node.el) this.root.insertBefore(node.el, expectedNext);
      previous = node.el;
    }
    for (const [id, node] of this.nodes) {
      if (!wanted.has(id)) {
        node.el.remove();
        this.nodes.delete(id);
        this.streams.delete(id);
      }
    }
    if (state.items.length === 0) this.root.replaceChildren(emptyHint());
    else this.root.querySelector(':scope > .empty')?.remove();
    // A new prompt (sent here, or taken in from the queue) brings the view down to it.
    if (prompted) this.following = true;
    if (this.following) this.root.scrollTop = this.root.scrollHeight;
    else if (changed) {
      // A question waiting down there is worth saying so.
      const asking = state.items.some((i) => i.kind === 'tool' && i.question !== undefined);
      this.chip.replaceChildren(icon('arrow-down'), asking ? ' A question below' : ' New messages below');
      const label = `${asking ? 'Tether is asking a question below' : 'New messages below'}: scroll to the end`;
      this.chip.setAttribute('aria-label', label);
      this.chip.title = label;
      this.chip.hidden = false;
    }
  }

  /** Bring a streamed item's element up to date. True when it changed. */
  private stream(item: Extract<ChatItem, { kind: 'agent' | 'thought' }>, complete: boolean): boolean {
    let entry = this.streams.get(item.id);
    if (!entry) {
      entry = { rev: -1, view: new StreamView(item.kind === 'agent' ? 'markdown msg agent' : 'markdown thought-body') };
      this.streams.set(item.id, entry);
    }
    const changed = entry.rev !== item.rev;
    if (changed) {
      entry.rev = item.rev;
      entry.view.update(item.text);
    }
    if (complete) entry.view.finish();
    return changed;
  }

  private build(item: ChatItem, state: ChatState): HTMLElement {
    switch (item.kind) {
      case 'user':
        return userMessage(item, state);
      case 'agent':
        return this.streams.get(item.id)!.view.el;
      case 'thought': {
        const el = h('details', { class: 'msg thought' }, h('summary', {}, icon('lightbulb'), ' Thinking'));
        el.append(this.streams.get(item.id)!.view.el);
        return el;
      }
      case 'tool':
        return this.toolCard(item);
      case 'notice':
        return h('div', { class: `notice ${item.level}`, role: item.level === 'error' ? 'alert' : undefined }, icon(item.level === 'info' ? 'info' : item.level), ' ', item.message);
      case 'compaction':
        return h('div', { class: 'meta' }, icon('fold'), ` Context compacted (${item.trigger}): ${formatTokens(item.tokensBefore)} → ${formatTokens(item.tokensAfter)} tokens`);
      case 'turn_end':
        return turnEnd(item, state);
    }
  }

  private toolCard(card: ToolCard): HTMLElement {
    const view = toolCardView(card);
    const open = this.toggled.get(card.id) ?? view.expanded;
    const body = h('div', { class: 'tool-body' });
    if (view.plan !== undefined) body.append(markdown('plan-text', view.plan));
    if (view.command !== undefined) body.append(h('pre', { class: 'cmd', 'aria-label': 'Command' }, `$ ${view.command}`));
    if (view.output !== undefined) {
      body.append(h('pre', { class: 'out', 'aria-label': 'Output', tabindex: '0' }, view.output || '(no output)'));
      if (view.exitCode !== undefined && view.exitCode !== null) {
        body.append(h('div', { class: `exit ${view.exitCode === 0 ? 'ok' : 'bad'}` }, `exit code ${view.exitCode}`));
      }
    }
    for (const d of view.diffs) {
      body.append(
        button(`Open diff of ${d.name}`, { class: 'link diff', 'data-tool': card.toolCallId, 'data-uri': d.uri },
          icon('diff'), ` ${d.name} `, h('span', { class: 'added' }, `+${d.added}`), ' ', h('span', { class: 'removed' }, `−${d.removed}`)),
      );
    }
    if (view.text) body.append(h('pre', { class: 'text', tabindex: '0' }, view.text));
    if (view.savedUserEdits) {
      body.append(
        h('div', { class: 'saved-user-edits', role: 'note' }, icon('save'), ` Saved with your unsaved changes to ${view.savedUserEdits.join(', ')}: the edit is saved right away, and the whole file with it.`),
      );
    }
    if (card.question && view.status === 'awaiting') body.append(this.questionBox(card, card.question));
    else if (view.plan !== undefined && card.answered) body.append(h('div', { class: 'answer' }, icon('comment'), ` You answered: ${card.answered.label}`, card.answered.feedback ? h('blockquote', {}, card.answered.feedback) : null));
    const loc = card.locations[0];
    const title = h('span', { class: 'tool-title', title: view.title }, view.title);
    const summary = h(
      'summary',
      { 'aria-label': `${view.title}: ${view.statusLabel}${view.summary ? `, ${view.summary}` : ''}` },
      icon(view.icon),
      h('span', { class: 'tool-head' }, title, h('span', { class: 'tool-status' }, view.statusLabel, view.summary ? h('span', { class: 'tool-summary' }, ` · ${view.summary}`) : null)),
    );
    const kind = view.plan !== undefined ? 'plan' : card.toolKind;
    // Nothing to unfold (a finished Read says how much it read in its title line): no toggle.
    const empty = body.childElementCount === 0;
    const el = h('details', { class: `tool status-${view.status}${empty ? ' no-body' : ''}`, 'data-kind': kind, 'data-call': card.toolCallId, open: (open && !empty) || undefined }, summary, body);

    if (loc) {
      const openFile = button(`Open ${loc.uri}`, { class: 'icon-button open-file' }, icon('go-to-file'));
      openFile.addEventListener('click', (e) => {
        e.preventDefault(); // not a toggle of the card
        e.stopPropagation();
        send({ type: 'openFile', uri: loc.uri, line: loc.line });
      });
      summary.append(openFile);
    }
    // Only the user's own clicks count ('toggle' also fires for the initial `open`).
    summary.addEventListener('click', (e) => (empty ? e.preventDefault() : this.toggled.set(card.id, !el.open)));
    return el;
  }

  /** The open question on a card: Allow once · Always allow `<rule>` · Reject (with an
   * optional reason) · Always reject, what the rule means, and "Review diff" for an edit. A
   * plan has a feedback box and the daemon's answers. No button takes the focus by itself. */
  private questionBox(card: ToolCard, q: CardQuestion): HTMLElement {
    const box = h('div', { class: `question question-${q.kind}`, role: 'group', tabindex: '-1', 'aria-label': q.kind === 'plan' ? 'Plan approval' : `Permission: ${card.title}` });
    let feedback: HTMLTextAreaElement | HTMLInputElement | undefined;
    if (q.kind === 'plan') {
      feedback = h('textarea', { class: 'feedback', rows: '2', 'aria-label': 'Feedback on the plan', placeholder: 'Feedback (optional): what to change, what to keep in mind…' });
    } else if (q.choices.some((c) => c.kind === 'reject_once' || c.kind === 'reject_always')) {
      feedback = h('input', { type: 'text', class: 'reason', 'aria-label': 'Reason for rejecting (optional)', placeholder: 'Reason (optional), sent with Reject' });
    }
    if (feedback) {
      const input = feedback;
      input.value = this.feedback.get(card.id) ?? '';
      input.addEventListener('input', () => this.feedback.set(card.id, input.value));
    }
    const row = h('div', { class: 'choices' });
    const shownRule = new Set<string>();
    for (const c of q.choices) {
      const allow = c.kind === 'allow_once' || c.kind === 'allow_always';
      const name = c.rule && c.label.includes(c.rule) ? c.label.slice(0, c.label.indexOf(c.rule)).trim() : c.label;
      // The rule as it will be saved, once: an "Always reject" of the same rule says it already.
      const rule = c.rule && !shownRule.has(c.rule) ? h('code', { class: 'rule' }, c.rule) : null;
      if (c.rule) shownRule.add(c.rule);
      const b = button(c.meaning ? `${c.label}: ${c.meaning}` : c.label, { class: allow ? 'primary' : 'secondary', 'data-option': c.optionId, 'data-kind': c.kind }, name, rule);
      b.addEventListener('click', () => {
        const reason = q.kind === 'plan' || !allow ? feedback?.value.trim() || undefined : undefined;
        this.feedback.delete(card.id);
        send({ type: 'answerPermission', sessionId: q.sessionId, toolCallId: card.toolCallId, optionId: c.optionId, feedback: reason });
      });
      row.append(b);
    }
    if (q.kind === 'tool' && q.hasDiff) {
      const review = button('Review the proposed change in the diff editor', { class: 'link review-diff' }, icon('diff'), ' Review diff');
      review.addEventListener('click', () => send({ type: 'reviewPermission', sessionId: q.sessionId, toolCallId: card.toolCallId }));
      row.append(review);
    }
    if (q.kind === 'plan' && feedback) box.append(feedback);
    box.append(row);
    if (q.kind === 'tool' && feedback) box.append(feedback);
    const always = q.choices.find((c) => c.rule && c.meaning);
    if (always?.rule) {
      box.append(
        h('p', { class: 'rule-meaning' }, icon('info'), ' “Always” saves ', h('code', {}, always.rule), ` in ${RULES_FILE}: ${always.meaning}.`),
      );
    }
    return box;
  }

  /** Scroll to the card of `toolCallId` and focus its question (a group, not a button, so a
   * stray Enter answers nothing). */
  reveal(toolCallId: string): void {
    const card = this.root.querySelector<HTMLElement>(`.tool[data-call="${CSS.escape(toolCallId)}"]`);
    if (!card) return;
    card.scrollIntoView({ block: 'center' });
    (card.querySelector<HTMLElement>('.question') ?? card).focus({ preventScroll: true });
  }
}

function markdown(cls: string, text: string): HTMLElement {
  const el = h('div', { class: `markdown ${cls}` });
  el.innerHTML = renderMarkdown(text); // markdown-it with html off: safe markup only
  return el;
}

/** What an item's element depends on besides the item itself. A streamed item's element is
 * built once; its content follows the text (`StreamView`). */
function signature(item: ChatItem, state: ChatState): string {
  if (item.kind === 'user' || item.kind === 'turn_end') {
    return `${item.rev}:${state.busy}:${state.rewindable.includes(item.turnId)}`;
  }
  if (item.kind === 'agent' || item.kind === 'thought') return 'streamed';
  return String(item.rev);
}

function userMessage(item: Extract<ChatItem, { kind: 'user' }>, state: ChatState): HTMLElement {
  const el = h('div', { class: 'msg user' });
  const text = item.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n').trim();
  el.append(h('div', { class: 'user-text' }, text));
  const images = item.content.filter((c) => c.type === 'image');
  if (images.length) {
    el.append(h('div', { class: 'images' }, ...images.map((c) => (c.type === 'image' ? h('img', { class: 'thumb', alt: 'Attached image', src: `data:${c.mimeType};base64,${c.data}` }) : null))));
  }
  const links = item.content.filter((c) => c.type === 'resource_link');
  if (links.length) {
    el.append(
      h('div', { class: 'chips' }, ...links.map((c) => (c.type === 'resource_link' ? h('span', { class: 'chip' }, icon('file'), ` ${c.name ?? c.uri.slice(c.uri.lastIndexOf('/') + 1)}`) : null))),
    );
  }
  if (state.rewindable.includes(item.turnId) && !state.busy) {
    const undo = button('Undo this turn: restore the files it changed and continue from before it', { class: 'icon-button undo' }, icon('discard'));
    undo.addEventListener('click', () => send({ type: 'undoTurn', turnId: item.turnId }));
    el.append(undo);
  }
  return el;
}

function turnEnd(item: Extract<ChatItem, { kind: 'turn_end' }>, state: ChatState): HTMLElement {
  const changed = state.items.some((i) => i.kind === 'tool' && i.turnId === item.turnId && i.content.some((c) => c.type === 'diff'));
  const el = h('div', { class: `turn-end stop-${item.stopReason}` });
  if (item.stopReason === 'cancelled') el.append(icon('debug-stop'), ' Stopped');
  else if (item.stopReason === 'error') el.append(icon('error'), ` ${item.error?.message ?? 'The turn failed.'}`);
  else if (item.stopReason !== 'end_turn') el.append(icon('warning'), ` Turn ended: ${item.stopReason.replace(/_/g, ' ')}`);
  if (item.stopReason === 'error' || item.stopReason === 'cancelled') el.setAttribute('role', 'status');
  if (changed && state.rewindable.includes(item.turnId)) {
    const review = button('Review the changes of this turn', { class: 'link' }, icon('diff-multiple'), ' Review changes');
    review.addEventListener('click', () => send({ type: 'reviewTurn', turnId: item.turnId }));
    el.append(review);
  }
  return el;
}

function emptyHint(): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('p', {}, 'Ask Tether to explain, fix or build something.'),
    h('p', { class: 'hint' }, 'Type @ to mention a file, use “Add selection” for code from the editor. Enter sends, Shift+Enter adds a line, Escape stops a running turn.'),
  );
}
