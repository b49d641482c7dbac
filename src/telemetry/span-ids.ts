import { createHash } from 'node:crypto';

/** What a span stands for: an agent (by actor path), a model call (by effect id) or a tool call (by call id). */
export type SpanSubject = 'agent' | 'chat' | 'tool';

const digest = (text: string, bytes: number): string => {
  const hex = createHash('sha256').update(text).digest('hex').slice(0, bytes * 2);
  // An all-zero id is invalid in OpenTelemetry; the chance is 2^-64, but an id must never be invalid.
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
};

/**
 * The trace id of a session branch (32 hex digits): a digest of its stream name, so every export of the stream,
 * live or from the log, in any process, names the same trace. A fork is its own stream and its own trace.
 */
export const traceIdOf = (stream: string): string => digest(`rein/trace\u0000${stream}`, 16);

/** MurmurHash3's 32-bit body over a string's UTF-16 code units, from state `hash` (the finalisation is separate). */
const murmurBody = (text: string, hash: number): number => {
  let state = hash;
  for (let index = 0; index < text.length; index++) {
    let block = Math.imul(text.charCodeAt(index), 0xcc9e2d51);
    block = Math.imul((block << 15) | (block >>> 17), 0x1b873593);
    state ^= block;
    state = (Math.imul((state << 13) | (state >>> 19), 5) + 0xe6546b64) | 0;
  }
  return state;
};

const murmurFinal = (state: number, length: number): number => {
  let hash = state ^ length;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
};

const seeds = [0x9747b28c, 0x5bd1e995] as const;
let cached: { stream: string; prefix: string; states: [number, number] } | undefined;

/**
 * The span id (16 hex digits) of one agent, model call or tool call of a stream: two seeded MurmurHash3 values of
 * the stream and the subject's id in the log (actor path, effect id, call id), which are unique within a stream.
 * Not cryptographic (an id needs no secrecy), and cheap enough for every step of a live export: the stream's part
 * of the hash is computed once.
 */
export const spanIdOf = (stream: string, subject: SpanSubject, key: string): string => {
  if (cached?.stream !== stream) {
    const prefix = `rein/span\u0000${stream}\u0000`;
    cached = { stream, prefix, states: [murmurBody(prefix, seeds[0]), murmurBody(prefix, seeds[1])] };
  }
  const rest = `${subject}\u0000${key}`;
  const length = cached.prefix.length + rest.length;
  const high = murmurFinal(murmurBody(rest, cached.states[0]), length);
  const low = murmurFinal(murmurBody(rest, cached.states[1]), length);
  const hex = high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
  return hex === '0000000000000000' ? '0000000000000001' : hex;
};
