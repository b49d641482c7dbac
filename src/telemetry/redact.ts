import type { SpanAttributeValue, SpanAttributes } from './span-types.js';

/** Credential shapes no exported attribute may carry, whatever the options say (API keys, tokens, private keys). */
const credentialShapes = new RegExp(
  [
    String.raw`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
    String.raw`\bsk-[A-Za-z0-9_-]{16,}`,
    String.raw`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`,
    String.raw`\bgithub_pat_[A-Za-z0-9_]{20,}`,
    String.raw`\bAKIA[0-9A-Z]{16}\b`,
    String.raw`\bxox[abprs]-[A-Za-z0-9-]{10,}`,
    String.raw`\bAIza[0-9A-Za-z_-]{35}`,
    String.raw`\b[Bb]earer\s+[A-Za-z0-9._~+/-]{8,}=*`,
  ].join('|'),
  'g',
);

export const redactedMarker = '[redacted]';

/**
 * A function that removes secrets from a string: every occurrence of each given secret (at least 4 characters;
 * shorter ones would redact ordinary words) and every credential-shaped token. Pure.
 */
export const createRedactor = (secrets: readonly string[] = []): ((text: string) => string) => {
  const exact = [...new Set(secrets.filter((secret) => typeof secret === 'string' && secret.length >= 4))].sort((a, b) => b.length - a.length);
  // Names, ids and models repeat on every span: remember what short strings became (bounded).
  const seen = new Map<string, string>();
  const redact = (text: string): string => {
    let result = text;
    for (const secret of exact) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
    // Every credential shape is at least 15 characters long.
    if (result.length < 15) return result;
    credentialShapes.lastIndex = 0;
    return credentialShapes.test(result) ? result.replace(credentialShapes, redactedMarker) : result;
  };
  return (text) => {
    if (text.length > 200) return redact(text);
    let result = seen.get(text);
    if (result === undefined) {
      if (seen.size >= 4_096) seen.clear();
      result = redact(text);
      seen.set(text, result);
    }
    return result;
  };
};

const redactValue = (value: SpanAttributeValue, redact: (text: string) => string): SpanAttributeValue => {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value) && value.length > 0 && typeof value[0] === 'string') return (value as readonly string[]).map(redact);
  return value;
};

/** The attributes with every string (and string array element) passed through `redact`. */
export const redactAttributes = (attributes: SpanAttributes, redact: (text: string) => string): SpanAttributes => {
  const out: Record<string, SpanAttributeValue> = {};
  for (const [key, value] of Object.entries(attributes)) out[key] = redactValue(value, redact);
  return out;
};
