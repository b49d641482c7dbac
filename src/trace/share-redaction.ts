import { createRedactor } from '../telemetry/redact.js';

/** What `shareRedactor` returns: the same redaction for a string and for any JSON-like value. */
export interface ShareRedactor {
  /** `text` with every secret removed (`[redacted]`). */
  text(text: string): string;
  /** A copy of `value` with every string in it (not its keys) passed through `text`; other values kept. */
  value<T>(value: T): T;
}

const walk = (value: unknown, visit: (text: string) => string, depth: number): unknown => {
  if (typeof value === 'string') return visit(value);
  if (typeof value !== 'object' || value === null || depth > 200) return value;
  if (Array.isArray(value)) return value.map((item) => walk(item, visit, depth + 1));
  if (value instanceof Uint8Array || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: walk(item, visit, depth + 1), enumerable: true, writable: true, configurable: true });
  return out;
};

/**
 * The redaction for what users share — `rein trace` (its report, `--out`, `--eval`, `--json`), `rein show`, the viewer's
 * export: the OpenTelemetry redactor (`createRedactor`) after it has read every string of `sources` (a session's
 * records, the output itself), so a secret found anywhere in them — a secret-named `.env` value a tool read, a key,
 * a URL's password — is removed wherever it recurs, the model's own sentences included, however early they came.
 * `secrets` are removed too (the credential-named variables of the environment). The stored log is never changed:
 * this is for copies that leave rein. One function for every exporter, so what one hides the others hide.
 */
export const shareRedactor = (sources: Iterable<unknown>, options: { secrets?: readonly string[] } = {}): ShareRedactor => {
  const redact = createRedactor(options.secrets ?? []);
  // First read everything, so the values it learns cover strings seen before the one they were found in.
  for (const source of sources) walk(source, redact, 0);
  return { text: redact, value: <T>(value: T): T => walk(value, redact, 0) as T };
};
