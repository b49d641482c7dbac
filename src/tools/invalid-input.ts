import type { ValidationIssue } from '../../models/tool.records.js';

const previewLength = 24;

/** A short, bounded description of one argument value: its type, its size, and for strings a short preview. */
export const summarizeValue = (value: unknown): string => {
  if (typeof value === 'string') {
    const preview = value.length > previewLength ? `${value.slice(0, previewLength)}…` : value;
    return `string, ${value.length} chars: ${JSON.stringify(preview)}`;
  }
  if (Array.isArray(value)) return `array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return `object with ${Object.keys(value as object).length} keys`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return typeof value;
};

/** Zod issues as bounded records: path, code and message, never the offending value. */
export const issuesOf = (issues: ReadonlyArray<{ path: readonly PropertyKey[]; code: string; message: string }>): ValidationIssue[] =>
  issues.map((issue) => ({ path: issue.path.map(String).join('.') || '(arguments)', code: issue.code, message: issue.message.slice(0, 200) }));

/**
 * The `InvalidInput` text the model reads: the tool, the problems, the field names it sent and a short summary of
 * each (length and a preview for strings). Large fields such as `content` never appear in full.
 */
export const invalidInputMessage = (tool: string, problems: readonly ValidationIssue[] | string, received: Readonly<Record<string, unknown>>): string => {
  const problemText = typeof problems === 'string' ? problems : problems.slice(0, 6).map((issue) => `${issue.path}: ${issue.message}`).join('; ') + (problems.length > 6 ? `; and ${problems.length - 6} more` : '');
  const names = Object.keys(received);
  const fields = names.slice(0, 10).map((name) => `${name.length > 40 ? `${name.slice(0, 40)}…` : name} (${summarizeValue(received[name])})`);
  const receivedText = names.length === 0 ? 'no fields' : fields.join(', ') + (names.length > 10 ? `, and ${names.length - 10} more` : '');
  return `${tool}: ${problemText}. Received ${receivedText}.`;
};
