import { describe, expect, it } from 'vitest';
import { LineSplitter, MAX_LINE_BYTES, OutputBudget } from '../../src/log/line-splitter.js';

const collect = (options?: ConstructorParameters<typeof LineSplitter>[1]) => {
  const lines: string[] = [];
  return { lines, splitter: new LineSplitter((l) => lines.push(l), options) };
};

describe('LineSplitter', () => {
  it('splits chunks into lines, keeps a partial line until completed, drops a CR before LF, and flushes the rest', () => {
    const { lines, splitter } = collect();
    splitter.push('one\r\ntw');
    splitter.push(Buffer.from('o\nthree'));
    expect(lines).toEqual(['one', 'two']);
    splitter.push('\n');
    splitter.push('last');
    splitter.flush();
    expect(lines).toEqual(['one', 'two', 'three', 'last']);
  });

  it('keeps a multi-byte character split across chunks whole', () => {
    const { lines, splitter } = collect();
    const bytes = Buffer.from('été €\n');
    for (const byte of bytes) splitter.push(Uint8Array.of(byte));
    expect(lines).toEqual(['été €']);
  });

  it('cuts one 64 MB line at 64 KiB and counts the rest, in 64 KiB chunks as a pipe delivers them', () => {
    const { lines, splitter } = collect();
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const total = 64 * 1024 * 1024;
    for (let sent = 0; sent < total; sent += chunk.length) splitter.push(chunk);
    splitter.push('\nafter\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`${'x'.repeat(MAX_LINE_BYTES)}… (${total - MAX_LINE_BYTES} more bytes)`);
    expect(lines[1]).toBe('after');
  });

  it('never cuts inside a character: its bytes are counted with the rest', () => {
    const { lines, splitter } = collect({ maxLineBytes: 10 });
    // 9 bytes of ASCII, then "€" (3 bytes) across the bound, then 2 more.
    splitter.push('123456789€ab\n');
    expect(lines).toEqual(['123456789… (5 more bytes)']);
    splitter.push('€€€€\n');
    expect(lines[1]).toBe('€€€… (3 more bytes)');
  });

  it('shows at most the budget of bytes shared by a step’s streams, says so once, and counts the rest', () => {
    const told: number[] = [];
    const budget = new OutputBudget(20, (max) => told.push(max));
    const out = collect({ budget });
    const err = collect({ budget });
    out.splitter.push('0123456789\n');
    err.splitter.push('abcdefghij\n');
    out.splitter.push('hidden line\n');
    err.splitter.push('more hidden\n');
    out.splitter.flush();
    err.splitter.flush();
    expect(out.lines).toEqual(['0123456789']);
    // 9 bytes of the second line fit; its last letter and newline did not.
    expect(err.lines).toEqual(['abcdefghi']);
    expect(told).toEqual([20]);
    expect(budget.hidden).toBe(2 + 12 + 12);
    expect(budget.exhausted).toBe(true);
  });
});
