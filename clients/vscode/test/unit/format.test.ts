import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyUsage } from '../../src/core/chatState';
import { basename, contextMeter, diffStat, formatCost, formatTokens, statusText, truncate } from '../../src/core/format';
import { rankPaths, score } from '../../src/core/fuzzy';
import { renderMarkdown } from '../../src/core/markdown';

describe('formatting', () => {
  it('formats tokens and cost compactly', () => {
    assert.deepEqual([0, 999, 1234, 45_600, 2_500_000].map(formatTokens), ['0', '999', '1.2k', '46k', '2.5M']);
    assert.deepEqual([undefined, 0, 0.0042, 1.5].map(formatCost), ['', '$0.00', '$0.0042', '$1.50']);
  });

  it('meters the context window and the cost so far', () => {
    assert.deepEqual(contextMeter(emptyUsage()), { fraction: null, label: '', detail: 'No usage yet' });
    const m = contextMeter({ ...emptyUsage(), contextTokens: 50_000, contextWindow: 200_000, sessionCostUsd: 0.5, turnCostUsd: 0.25 });
    assert.equal(m.fraction, 0.25);
    assert.equal(m.label, '50k / 200k (25%) · $0.75');
    assert.equal(m.detail, 'Context 50k of 200k tokens (25%), cost so far $0.75');
  });

  it('counts changed lines', () => {
    assert.deepEqual(diffStat('a\nb\nc', 'a\nx\nc'), { added: 1, removed: 1 });
    assert.deepEqual(diffStat(null, 'a\nb'), { added: 2, removed: 0 });
    assert.deepEqual(diffStat('a\nb', 'a\nb'), { added: 0, removed: 0 });
    assert.deepEqual(diffStat('a\nb\nc', ''), { added: 0, removed: 3 });
  });

  it('says idle, working with the current tool, or disconnected', () => {
    assert.equal(statusText({ busy: false, currentTool: null }, true), '$(hubot) Tether');
    assert.equal(statusText({ busy: true, currentTool: null }, true), '$(loading~spin) Tether: thinking');
    assert.equal(statusText({ busy: true, currentTool: 'Run the tests' }, true), '$(loading~spin) Tether: Run the tests');
    assert.equal(statusText({ busy: true, currentTool: 'x' }, false), '$(debug-disconnect) Tether');
    assert.equal(statusText({ busy: true, currentTool: 'Edit a.py', awaiting: 'Edit a.py' }, true), '$(shield) Tether: approve Edit a.py?');
    assert.equal(truncate('abcdef', 4), 'abc…');
    assert.equal(basename('file:///w/a%20b.py'), 'a b.py');
  });
});

describe('file picker ranking', () => {
  const paths = ['README.md', 'calc/ops.py', 'calc/__init__.py', 'tests/test_ops.py', 'docs/operations.md'];
  it('ranks name prefixes first, then substrings, then subsequences', () => {
    assert.deepEqual(rankPaths(paths, 'ops'), ['calc/ops.py', 'tests/test_ops.py', 'docs/operations.md']);
    assert.deepEqual(rankPaths(paths, 'op').slice(0, 2), ['calc/ops.py', 'docs/operations.md']);
    assert.equal(rankPaths(paths, 'cops')[0], 'calc/ops.py');
    assert.deepEqual(rankPaths(paths, 'xyz'), []);
    assert.equal(score('a', 'zz'), null);
    assert.equal(rankPaths(paths, '', 2).length, 2);
  });
});

describe('markdown', () => {
  it('renders markdown and never raw HTML or script links', () => {
    const html = renderMarkdown('**bold** `code` <img src=x onerror=alert(1)> [x](javascript:alert(1)) [ok](https://example.com)');
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<code>code<\/code>/);
    assert.doesNotMatch(html, /<img/);
    assert.doesNotMatch(html, /href="javascript/);
    assert.match(html, /<a href="https:\/\/example.com" data-link="">ok<\/a>/);
  });
  it('renders an unfinished stream without breaking', () => {
    assert.match(renderMarkdown('```py\nprint(1)'), /<pre><code class="language-py"><span class="hljs-built_in">print<\/span>\(<span class="hljs-number">1<\/span>\)<\/code><\/pre>/);
  });
  it('highlights known languages, escapes the rest, and gives every code block a Copy button', () => {
    const known = renderMarkdown('```python\ndef f(): return "<b>"\n```');
    assert.match(known, /<span class="code-lang">python<\/span><button type="button" class="copy" data-copy/);
    assert.match(known, /<span class="hljs-keyword">def<\/span>/);
    assert.match(known, /&lt;b&gt;/, 'code stays escaped');
    const unknown = renderMarkdown('```nosuchlang\n<script>x</script>\n```');
    assert.match(unknown, /<span class="code-lang">nosuchlang<\/span>/);
    assert.match(unknown, /&lt;script&gt;x&lt;\/script&gt;/);
    assert.doesNotMatch(unknown, /hljs-/);
    const plain = renderMarkdown('```\nls -la\n```');
    assert.match(plain, /<span class="code-lang">text<\/span>/);
    const label = renderMarkdown('```"><img src=x>\nx\n```');
    assert.doesNotMatch(label, /<img/, 'the language label is escaped');
  });
  it('renders tables (their borders come from chat.css)', () => {
    assert.match(renderMarkdown('| a | b |\n|---|---|\n| 1 | 2 |'), /<table>[\s\S]*<td>1<\/td>/);
  });
});
