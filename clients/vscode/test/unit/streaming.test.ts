/**
 * A streamed reply is rendered in time linear in its length: the work (characters handed to
 * the Markdown parser and renderer, highlighting included) is counted, not timed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockStarts, renderMarkdown } from '../../src/core/markdown';
import { MarkdownEngine, StreamingMarkdown } from '../../src/core/streaming';

/** markdown-it itself, counting the characters it is given. */
function countingEngine(): MarkdownEngine & { work: number } {
  const engine = {
    work: 0,
    render(text: string) {
      engine.work += text.length;
      return renderMarkdown(text);
    },
    blockStarts(text: string) {
      engine.work += text.length;
      return blockStarts(text);
    },
  };
  return engine;
}

/** Replies of `lines` lines, of the shapes that are hard for a streaming renderer. */
const REPLIES: Record<string, (lines: number) => string> = {
  'prose, lists, code and tables': (lines) => {
    const out: string[] = [];
    for (let i = 0; out.length < lines; i++) {
      switch (i % 4) {
        case 0:
          out.push(`Paragraph ${i} explains a step of the change in a sentence of ordinary length.`, '');
          break;
        case 1:
          out.push('```python', `def step_${i}(values):`, `    return sum(values) / len(values)  # ${i}`, '```', '');
          break;
        case 2:
          out.push(`- item ${i}`, `- item ${i + 1}`, '');
          break;
        default:
          out.push('| name | before | after |', '|---|---|---|', `| mean${i} | 2.0 | 3.0 |`, '');
      }
    }
    return out.slice(0, lines).join('\n');
  },
  'one long code block': (lines) => ['```python', ...Array.from({ length: lines - 2 }, (_, i) => `x_${i} = compute(${i}, "text")  # line ${i}`), '```'].join('\n'),
  'one long list': (lines) => Array.from({ length: lines }, (_, i) => `- entry ${i}: something the agent found`).join('\n'),
  'one long table': (lines) => ['| file | line | problem |', '|---|---|---|', ...Array.from({ length: lines - 2 }, (_, i) => `| src/m${i}.py | ${i} | unused import |`)].join('\n'),
};

/** Stream `text` a line at a time (each line one update, as frames would see it), or `step`
 * characters at a time. */
function stream(text: string, step?: number): { work: number; html: string } {
  const engine = countingEngine();
  const s = new StreamingMarkdown(engine);
  let stable = '';
  let tail = '';
  let raw = '';
  const apply = (step: ReturnType<StreamingMarkdown['update']>) => {
    if (step.reset) stable = tail = raw = '';
    stable += step.append;
    if (step.tail !== undefined) {
      tail = step.tail;
      raw = '';
    }
    raw += step.raw;
  };
  if (step) {
    for (let i = step; i < text.length + step; i += step) apply(s.update(text.slice(0, i)));
  } else {
    const lines = text.split('\n');
    let sofar = '';
    for (let i = 0; i < lines.length; i++) {
      sofar += (i ? '\n' : '') + lines[i];
      apply(s.update(sofar));
    }
  }
  apply(s.finish());
  assert.equal(raw, '', 'finished: nothing is left unrendered');
  return { work: engine.work, html: stable + tail };
}

/** What the webview did before: the whole reply rendered again on every update. */
function wholeEachTime(text: string): number {
  let work = 0;
  const lines = text.split('\n');
  for (let i = 1; i <= lines.length; i++) work += lines.slice(0, i).join('\n').length;
  return work;
}

describe('a streamed reply', () => {
  for (const [shape, make] of Object.entries(REPLIES)) {
    it(`of 2,000 lines (${shape}) costs work linear in its length`, () => {
      const half = make(1000);
      const full = make(2000);
      const a = stream(half).work;
      const b = stream(full).work;
      const perChar = b / full.length;
      console.log(`${shape}: ${full.length} chars, work ${b} (${perChar.toFixed(1)} per char); 1,000 lines ${a}; ratio ${(b / a).toFixed(2)}; whole reply each update: ${wholeEachTime(full)}`);
      // Twice the length, about twice the work (a quadratic renderer would do four times).
      assert.ok(b / a < 2.5, `doubling the reply multiplied the work by ${(b / a).toFixed(2)}`);
      assert.ok(perChar < 60, `${perChar.toFixed(1)} units of work per character`);
      // The measure tells the two apart: rendering the whole reply each time is quadratic.
      assert.ok(wholeEachTime(full) / wholeEachTime(half) > 3.5);
    });
  }

  it('renders to the same HTML as the whole reply at once, block for block', () => {
    const text = REPLIES['prose, lists, code and tables'](200);
    const html = stream(text).html;
    const norm = (s: string) => s.replace(/\s+/g, ' ');
    // Separately rendered blocks join to the same document.
    assert.equal(norm(html), norm(renderMarkdown(text)));
  });

  it('renders what markdown-it renders for the whole, whatever the chunks: lists, setext headings, fences with blank lines, later link definitions', () => {
    const docs = [
      '- a\n\n- b\n\n- c\n\nafter',
      '1. one\n2. two\n\n   continued para of two\n3. three',
      'Title\n=====\n\ntext',
      'para line one\nline two\n---\nmore',
      '> quote\n> more\n\nafter quote',
      '```python\ndef f():\n\n    return 1\n```\n\ntext after',
      '| a | b |\n|---|---|\n| 1 | 2 |\n\nend',
      'Text with [ref][1].\n\n[1]: http://x.org',
      '    indented code\n\n    more code\n\npara',
      '* a\n  * nested\n\n    deep para\n* b',
      '~~~\nfence\n~~~\n\n```\nunclosed',
    ];
    const norm = (s: string) => s.replace(/\s+/g, ' ');
    for (const doc of docs) {
      for (const step of [1, 3, 7]) assert.equal(norm(stream(doc, step).html), norm(renderMarkdown(doc)), `${JSON.stringify(doc)} in steps of ${step}`);
    }
  });

  it('a text that does not continue the last one starts over', () => {
    const s = new StreamingMarkdown(countingEngine());
    s.update('Hello **world**');
    const step = s.update('Something else');
    assert.equal(step.reset, true);
    assert.match(step.tail ?? '', /Something else/);
  });
});
