import type { SpanAttributeValue, SpanAttributes } from './span-types.js';

/** Credential shapes no exported attribute may carry, whatever the options say (API keys, tokens, private keys). */
const credentialShapes = new RegExp(
  [
    String.raw`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
    String.raw`\bsk-[A-Za-z0-9_-]{16,}`,
    String.raw`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`,
    String.raw`\bgithub_pat_[A-Za-z0-9_]{20,}`,
    String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
    String.raw`\bxox[abprs]-[A-Za-z0-9-]{10,}`,
    String.raw`\bxapp-[A-Za-z0-9-]{10,}`,
    String.raw`\bAIza[0-9A-Za-z_-]{35}`,
    String.raw`\b[Bb]earer\s+[A-Za-z0-9._~+/-]{8,}=*`,
    // Stripe secret and restricted keys and webhook secrets (`sk_live_…`, `rk_test_…`, `whsec_…`).
    String.raw`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`,
    String.raw`\bwhsec_[A-Za-z0-9+/=]{16,}`,
    // GitLab, npm and Hugging Face tokens.
    String.raw`\bglpat-[A-Za-z0-9_-]{20,}`,
    String.raw`\bnpm_[A-Za-z0-9]{36}\b`,
    String.raw`\bhf_[A-Za-z0-9]{30,}`,
    // JSON Web Tokens (a header and a payload, both JSON objects in base64url, and a signature).
    String.raw`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
    // Webhook URLs whose path is the credential (Slack, Discord).
    String.raw`(?<=\bhooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_-]+`,
    String.raw`(?<=\bdiscord(?:app)?\.com/api/webhooks/)[0-9]+/[A-Za-z0-9_-]+`,
  ].join('|'),
  'g',
);

/** The password of a URL's userinfo (`postgres://user:password@host`): only the password goes. */
const urlPassword = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"'<>]*:)([^\s/@"'<>]+)@/gi;

/**
 * A `name = value` / `name: value` / `"name": "value"` pair (shell, .env, YAML, JSON, headers): its value goes when
 * the name says it holds a secret. The name's words (split at `_`, `-`, `.` and camel case) are checked one by one.
 */
// A name starts only where no name character precedes it: otherwise every position of a long run (a base64 blob)
// would start a scan to the run's end, quadratic in its length.
const assignment = /(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]*)(\\?["'])?[ \t]*(?:=>|:=|:|=)[ \t]*(\\?["'])?/g;
const secretWords = new Set(['key', 'apikey', 'token', 'secret', 'password', 'passwd', 'pwd', 'passphrase', 'credential', 'credentials', 'auth', 'authorization', 'cookie']);
const secretName = (name: string): boolean =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.-]+/)
    .some((word) => secretWords.has(word.toLowerCase()));
const authSchemes = /^(?:basic|bearer|token|digest|bot)$/i;

const redactAssignments = (text: string): string => {
  let out = '';
  let from = 0;
  assignment.lastIndex = 0;
  for (let match = assignment.exec(text); match !== null; match = assignment.exec(text)) {
    const start = match.index + match[0].length;
    if (!secretName(match[1]!)) continue;
    if (text.startsWith(redactedMarker, start)) continue;
    const quote = match[3];
    let end: number;
    if (quote) {
      end = text.indexOf(quote, start);
      if (end === -1) end = text.length;
    } else {
      end = start;
      while (end < text.length && !/[\s,;&}\])"'<>\\]/.test(text[end]!)) end++;
      // `Authorization: Basic dXNlcjpwYXNz`: the scheme and what follows it.
      if (authSchemes.test(text.slice(start, end)) && /^[ \t]+\S/.test(text.slice(end))) {
        end = text.slice(end).search(/\S/) + end;
        while (end < text.length && !/[\s,;&}\])"'<>\\]/.test(text[end]!)) end++;
      }
    }
    const value = text.slice(start, end);
    if (value.length < 4) continue;
    out += text.slice(from, start) + redactedMarker;
    from = end;
    assignment.lastIndex = Math.max(end, start + 1);
  }
  return from === 0 ? text : out + text.slice(from);
};

export const redactedMarker = '[redacted]';

/** The shortest text a credential shape can be (`key=abcd`). */
const shortestShape = 8;

/** Every credential shape in `text` replaced with `[redacted]` (no given secrets). Pure. */
export const redactCredentialShapes = (text: string): string => {
  if (text.length < shortestShape) return text;
  let result = text;
  credentialShapes.lastIndex = 0;
  if (credentialShapes.test(result)) result = result.replace(credentialShapes, redactedMarker);
  urlPassword.lastIndex = 0;
  if (urlPassword.test(result)) result = result.replace(urlPassword, `$1${redactedMarker}@`);
  return redactAssignments(result);
};

/** Whether `text` holds something credential-shaped (what `redactCredentialShapes` would remove). */
export const hasCredentialShape = (text: string): boolean => redactCredentialShapes(text) !== text;

/**
 * A function that removes secrets from a string: every occurrence of each given secret (at least 4 characters;
 * shorter ones would redact ordinary words) and every credential-shaped token — known vendor key shapes, a URL's
 * password, the value of a pair whose name says secret. Pure.
 */
export const createRedactor = (secrets: readonly string[] = []): ((text: string) => string) => {
  const exact = [...new Set(secrets.filter((secret) => typeof secret === 'string' && secret.length >= 4))].sort((a, b) => b.length - a.length);
  // Names, ids and models repeat on every span: remember what short strings became (bounded).
  const seen = new Map<string, string>();
  const redact = (text: string): string => {
    let result = text;
    for (const secret of exact) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
    return redactCredentialShapes(result);
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
