/** Lines that usually carry the fact a reader needs: failures, errors, assertions, expectations. */
export const keyLinePattern = /(\bnot ok\b|\bfail(?:ed|ure|ures|ing|s)?\b|\berror\b|\bERR!|\bassert(?:ion)?\w*|\bexpected\b|\bexception\b|\bpanic(?:ked)?\b|\btraceback\b|✖|✗)/i;

/** The key lines of a text, trimmed, de-duplicated, in order, at most `limit` of them. */
export const keyLines = (text: string, limit = 20): string[] => {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.length === 0 || !keyLinePattern.test(line) || seen.has(line)) continue;
    seen.add(line);
    found.push(line.length > 300 ? line.slice(0, 300) : line);
    if (found.length >= limit) break;
  }
  return found;
};

/** Collapse runs of whitespace, so a fact can be found in a text regardless of indentation and line breaks. */
export const normalizeSpace = (text: string): string => text.replace(/\s+/g, ' ').trim();
