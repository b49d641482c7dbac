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

/**
 * Whether a value found under a secret's name is worth remembering as a secret everywhere else: 8 characters or more,
 * no white space, not only digits, and a digit or a mix of letter cases with another character — a password or a
 * key, not a word (`password: string`), a flag (`token=true`) or a reference (`apiKey: process.env.X`, `${TOKEN}`).
 */
export const secretLike = (value: string): boolean =>
  value.length >= 8 &&
  value.length <= 8_192 &&
  !/\s/.test(value) &&
  !/^\d+$/.test(value) &&
  !value.includes(redactedMarker) &&
  !/^(?:process\.env|os\.environ|\$|%|<|\{)/.test(value) &&
  (/\d/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value) && /[^A-Za-z]/.test(value)));

const redactAssignments = (text: string, found?: (secret: string) => void): string => {
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
    found?.(value);
    out += text.slice(from, start) + redactedMarker;
    from = end;
    assignment.lastIndex = Math.max(end, start + 1);
  }
  return from === 0 ? text : out + text.slice(from);
};

export const redactedMarker = '[redacted]';

/** The shortest text a credential shape can be (`key=abcd`). */
const shortestShape = 8;

/** What a matched shape teaches: the token (a bearer's without its scheme), and each line of a private key's body. */
const learnShape = (match: string, found: (secret: string) => void): void => {
  if (match.startsWith('-----BEGIN')) {
    for (const token of match.split(/[\s|]+/)) if (token.length >= 16 && /^[A-Za-z0-9+/=]+$/.test(token)) found(token);
    return;
  }
  found(match.replace(/^[Bb]earer\s+/, ''));
};

/**
 * Every credential shape in `text` replaced with `[redacted]` (no given secrets). Pure; `found` hears each secret
 * value it removed (a key, a URL's password, a secret-named pair's value), for a redactor that learns.
 */
export const redactCredentialShapes = (text: string, found?: (secret: string) => void): string => {
  if (text.length < shortestShape) return text;
  let result = text;
  credentialShapes.lastIndex = 0;
  if (credentialShapes.test(result)) result = result.replace(credentialShapes, (match) => (found && learnShape(match, found), redactedMarker));
  urlPassword.lastIndex = 0;
  if (urlPassword.test(result)) result = result.replace(urlPassword, (_, prefix: string, password: string) => (found?.(password), `${prefix}${redactedMarker}@`));
  return redactAssignments(result, found);
};

/** Whether `text` holds something credential-shaped (what `redactCredentialShapes` would remove). */
export const hasCredentialShape = (text: string): boolean => redactCredentialShapes(text) !== text;

/** The most secrets a redactor learns; past it, values found are still removed where they are found. */
const maxLearned = 2_000;

/**
 * A function that removes secrets from a string: every occurrence of each given secret (at least 4 characters;
 * shorter ones would redact ordinary words) and every credential-shaped token — known vendor key shapes, a URL's
 * password, the value of a pair whose name says secret. It learns: a value found once as a credential (a
 * secret-named `.env` value a tool read, a key) is then removed wherever it recurs — in the model's own sentences
 * too — in that string and every later one (with `learn: false`, only what it is given and what has a shape).
 */
export const createRedactor = (secrets: readonly string[] = [], options: { learn?: boolean } = {}): ((text: string) => string) => {
  const known = new Set(secrets.filter((secret) => typeof secret === 'string' && secret.length >= 4));
  let exact = [...known].sort((a, b) => b.length - a.length);
  // Names, ids and models repeat on every span: remember what short strings became (bounded; forgotten on learning).
  const seen = new Map<string, string>();
  let learnt = false;
  const learn =
    options.learn === false
      ? undefined
      : (value: string): void => {
          if (known.has(value) || known.size >= maxLearned || !secretLike(value)) return;
          known.add(value);
          exact = [...known].sort((a, b) => b.length - a.length);
          seen.clear();
          learnt = true;
        };
  const replaceExact = (text: string): string => {
    let result = text;
    for (const secret of exact) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
    return result;
  };
  const redact = (text: string): string => {
    learnt = false;
    const result = redactCredentialShapes(replaceExact(text), learn);
    // A value learnt from this very string may recur later in it.
    return learnt ? replaceExact(result) : result;
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
