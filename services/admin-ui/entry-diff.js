// A readable comparison of two states of an entry: field by field, each as text lines (a block
// is one line per text it holds), lines removed and added marked by a sign and a colour.
import { el } from './common.js';
import { typeLabel } from './entry-blocks.js';

/** A block as text lines: its type, then each of its values (nested values as JSON). */
function blockLines(block, index) {
  if (!block || typeof block !== 'object') return [`${index + 1}. ${String(block)}`];
  const { type, ...rest } = block;
  const lines = [`${index + 1}. ${typeLabel(String(type ?? 'block'))}`];
  for (const [key, value] of Object.entries(rest)) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    for (const line of text.split('\n')) lines.push(`   ${key}: ${line}`);
  }
  return lines;
}

/** The fields compared, each as lines of text. */
export function entryLines(state) {
  const fields = state.fields ?? {};
  return [
    ['Title', [state.title ?? '']],
    ['Slug', [state.slug ?? '']],
    ['Excerpt', (state.excerpt ?? '').split('\n')],
    ['Blocks', (state.blocks?.blocks ?? []).flatMap(blockLines)],
    [
      'Fields',
      Object.keys(fields)
        .sort()
        .map((key) => `${key}: ${JSON.stringify(fields[key])}`),
    ],
  ];
}

/** Longest common subsequence of two line arrays → `[sign, line]` with ' ', '-' or '+'. */
export function lineDiff(before, after) {
  const n = before.length;
  const m = after.length;
  const table = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) table[i][j] = before[i] === after[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  }
  const out = [];
  let i = 0;
  let j = 0;
  // On a tie the removed lines come before the added ones that replace them, as a unified diff shows them.
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push([' ', before[i]]);
      i++;
      j++;
    } else if (i < n && (j === m || table[i + 1][j] >= table[i][j + 1])) out.push(['-', before[i++]]);
    else out.push(['+', after[j++]]);
  }
  return out;
}

/** The diff of `before` → `after` as DOM: one block per changed field, unchanged fields named. */
export function renderDiff(before, after, labels) {
  const left = new Map(entryLines(before));
  const nodes = [];
  const same = [];
  for (const [field, lines] of entryLines(after)) {
    const old = left.get(field);
    if (JSON.stringify(old) === JSON.stringify(lines)) {
      same.push(field);
      continue;
    }
    const rows = lineDiff(old, lines).map(([sign, line]) =>
      el(
        'div',
        { className: sign === '+' ? 'ins' : sign === '-' ? 'del' : 'same' },
        el('span', { className: 'sign', 'aria-hidden': 'true' }, sign),
        el('span', { className: 'visually-hidden' }, sign === '+' ? `only in ${labels.after}: ` : sign === '-' ? `only in ${labels.before}: ` : ''),
        line || ' ',
      ),
    );
    nodes.push(el('h4', {}, field), el('div', { className: 'diff' }, ...rows));
  }
  if (same.length) nodes.push(el('p', { className: 'muted small' }, `Unchanged: ${same.join(', ')}.`));
  if (!nodes.length) nodes.push(el('p', {}, 'No differences.'));
  return nodes;
}

/** Side by side: one row per compared field, both versions as text (for the conflict panel). */
export function compareRows(mine, theirs) {
  const other = new Map(entryLines(theirs));
  return entryLines(mine).map(([field, lines]) => {
    const their = other.get(field);
    const differs = JSON.stringify(lines) !== JSON.stringify(their);
    return el(
      'tr',
      { className: differs ? 'differs' : '' },
      el('th', { scope: 'row' }, differs ? `${field} (differs)` : field),
      el('td', {}, el('pre', { className: 'text' }, lines.join('\n'))),
      el('td', {}, el('pre', { className: 'text' }, their.join('\n'))),
    );
  });
}
