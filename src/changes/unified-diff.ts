/** Edit operations of a line diff: keep a line of both, delete one of the old, insert one of the new. */
type Operation = { kind: ' ' | '-' | '+'; line: string };

/** Beyond this many differences a diff gives up on alignment and replaces the whole text (bounded time and memory). */
const maxDifferences = 4_000;

/**
 * The shortest edit script from `before` to `after` (Myers' O((N+M)·D) algorithm, with the V arrays of each round
 * kept for the backtrack), or a replacement of everything when more than `maxDifferences` lines differ.
 */
const editScript = (before: readonly string[], after: readonly string[]): Operation[] => {
  const n = before.length;
  const m = after.length;
  const max = Math.min(n + m, maxDifferences);
  const offset = max + 1;
  const trace: Int32Array[] = [];
  let v = new Int32Array(2 * max + 3);
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && before[x] === after[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return [...before.map((line) => ({ kind: '-' as const, line })), ...after.map((line) => ({ kind: '+' as const, line }))];
  const operations: Operation[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const previous = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && previous[offset + k - 1]! < previous[offset + k + 1]!);
    const fromK = down ? k + 1 : k - 1;
    const fromX = previous[offset + fromK]!;
    const fromY = fromX - fromK;
    while (x > fromX && y > fromY) {
      operations.push({ kind: ' ', line: before[x - 1]! });
      x--;
      y--;
    }
    operations.push(down ? { kind: '+', line: after[fromY]! } : { kind: '-', line: before[fromX]! });
    x = fromX;
    y = fromY;
  }
  while (x > 0 && y > 0) {
    operations.push({ kind: ' ', line: before[x - 1]! });
    x--;
    y--;
  }
  return operations.reverse();
};

const splitLines = (text: string): { lines: string[]; newlineAtEnd: boolean } => {
  if (text === '') return { lines: [], newlineAtEnd: true };
  const newlineAtEnd = text.endsWith('\n');
  const lines = (newlineAtEnd ? text.slice(0, -1) : text).split('\n');
  return { lines, newlineAtEnd };
};

/**
 * The hunks of a unified diff (`@@ -a,b +c,d @@` with `context` lines around each change) from `before` to `after`;
 * empty when the texts are equal. A last line without a newline is marked `\ No newline at end of file`.
 */
export const unifiedHunks = (before: string, after: string, context = 3): string[] => {
  if (before === after) return [];
  const old = splitLines(before);
  const next = splitLines(after);
  // The last line of a text without a final newline differs from the same line with one.
  if (!old.newlineAtEnd && old.lines.length > 0) old.lines[old.lines.length - 1] += '\0';
  if (!next.newlineAtEnd && next.lines.length > 0) next.lines[next.lines.length - 1] += '\0';
  const operations = editScript(old.lines, next.lines);
  const hunks: string[] = [];
  let index = 0;
  let oldLine = 1;
  let newLine = 1;
  const positions = operations.map((operation) => {
    const at = { oldLine, newLine };
    if (operation.kind !== '+') oldLine++;
    if (operation.kind !== '-') newLine++;
    return at;
  });
  while (index < operations.length) {
    while (index < operations.length && operations[index]!.kind === ' ') index++;
    if (index >= operations.length) break;
    const start = Math.max(0, index - context);
    let end = index;
    let lastChange = index;
    while (end < operations.length) {
      if (operations[end]!.kind !== ' ') lastChange = end;
      else if (end - lastChange > context * 2) break;
      end++;
    }
    end = Math.min(operations.length, lastChange + context + 1);
    const slice = operations.slice(start, end);
    const first = positions[start]!;
    const oldCount = slice.filter((operation) => operation.kind !== '+').length;
    const newCount = slice.filter((operation) => operation.kind !== '-').length;
    const lines = slice.map((operation) => (operation.line.endsWith('\0') ? `${operation.kind}${operation.line.slice(0, -1)}\n\\ No newline at end of file` : `${operation.kind}${operation.line}`));
    hunks.push(`@@ -${oldCount === 0 ? first.oldLine - 1 : first.oldLine},${oldCount} +${newCount === 0 ? first.newLine - 1 : first.newLine},${newCount} @@\n${lines.join('\n')}`);
    index = end;
  }
  return hunks;
};

/** Lines added and removed between two texts (for a diff stat). */
export const lineCounts = (before: string, after: string): { added: number; removed: number } => {
  if (before === after) return { added: 0, removed: 0 };
  const old = splitLines(before).lines;
  const next = splitLines(after).lines;
  let added = 0;
  let removed = 0;
  for (const operation of editScript(old, next)) {
    if (operation.kind === '+') added++;
    else if (operation.kind === '-') removed++;
  }
  return { added, removed };
};
