import { createHash } from 'node:crypto';

/** One unit of a prompt as a provider caches it: a tool, a system block or a message's content block. */
export interface PromptBlock {
  /** The block's bytes as the provider compares them (cache markers removed). */
  text: string;
  /** The request marked a cache breakpoint on this block (Anthropic `cache_control`). */
  breakpoint: boolean;
}

const withoutMarker = (block: unknown): unknown => {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return block;
  const { cache_control: _marker, ...rest } = block as Record<string, unknown>;
  return rest;
};

const marked = (block: unknown): boolean => typeof block === 'object' && block !== null && 'cache_control' in block;

/**
 * A Messages API request body as the prompt the API caches, in its caching order: the tools, then the system blocks,
 * then every message's content blocks (each with its role). Breakpoints are where `cache_control` markers sit; the
 * markers themselves are not part of the bytes (moving a breakpoint does not change the prompt).
 */
export const anthropicPromptBlocks = (body: { tools?: unknown[]; system?: unknown; messages?: Array<{ role: string; content: unknown }> }): PromptBlock[] => {
  const blocks: PromptBlock[] = [];
  for (const tool of body.tools ?? []) blocks.push({ text: `tool:${JSON.stringify(withoutMarker(tool))}`, breakpoint: marked(tool) });
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : Array.isArray(body.system) ? body.system : [];
  for (const block of system) blocks.push({ text: `system:${JSON.stringify(withoutMarker(block))}`, breakpoint: marked(block) });
  for (const message of body.messages ?? []) {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : Array.isArray(message.content) ? message.content : [];
    for (const block of content) blocks.push({ text: `${message.role}:${JSON.stringify(withoutMarker(block))}`, breakpoint: marked(block) });
  }
  return blocks;
};

/**
 * A chat-completions request body as the prompt OpenAI caches: the tool definitions, then each message in order
 * (OpenAI caches the longest previously seen prefix of that sequence, with no markers).
 */
export const openAIPromptBlocks = (body: { tools?: unknown[]; messages?: unknown[] }): PromptBlock[] => [
  ...(body.tools ?? []).map((tool) => ({ text: `tool:${JSON.stringify(tool)}`, breakpoint: false })),
  ...(body.messages ?? []).map((message) => ({ text: `message:${JSON.stringify(message)}`, breakpoint: false })),
];

/** The bytes two prompts share from their start (block by block, then within the first differing block). */
export const sharedPrefixBytes = (previous: readonly PromptBlock[], next: readonly PromptBlock[]): number => {
  let bytes = 0;
  for (let index = 0; index < Math.min(previous.length, next.length); index++) {
    const left = previous[index]!.text;
    const right = next[index]!.text;
    if (left === right) {
      bytes += Buffer.byteLength(right);
      continue;
    }
    let same = 0;
    while (same < Math.min(left.length, right.length) && left.charCodeAt(same) === right.charCodeAt(same)) same++;
    return bytes + Buffer.byteLength(right.slice(0, same));
  }
  return bytes;
};

/** The bytes of a prompt. */
export const promptBytes = (blocks: readonly PromptBlock[]): number => blocks.reduce((sum, block) => sum + Buffer.byteLength(block.text), 0);

/** What a prompt cache reported for one request, in tokens (`uncached` is the rest of the input). */
export interface CacheUsage {
  read: number;
  written: number;
  uncached: number;
}

/** Tokens of a byte count, at the four bytes a token loopback stand-ins assume. */
const tokensOf = (bytes: number): number => Math.ceil(bytes / 4);

/**
 * Anthropic's prompt cache as its documentation describes it, for loopback stand-ins: a breakpoint caches the prefix
 * up to and including its block; a later request reads the longest cached prefix found at one of its breakpoints or
 * up to 20 blocks before one; what lies between that and the last breakpoint is written; prefixes below
 * `minimumTokens` (1,024 for most models) are not cached. Entries never expire here (the real cache keeps them five
 * minutes from their last use, which a scripted session never outlasts).
 */
export class AnthropicPromptCache {
  private readonly entries = new Set<string>();

  constructor(private readonly minimumTokens = 1_024) {}

  /** Account one request body: what it read from the cache, wrote to it and paid in full. */
  use(body: Parameters<typeof anthropicPromptBlocks>[0]): CacheUsage {
    const blocks = anthropicPromptBlocks(body);
    const digests: string[] = [];
    const ends: number[] = [];
    let hash = '';
    let bytes = 0;
    for (const block of blocks) {
      hash = createHash('sha256').update(hash).update(block.text).digest('hex');
      bytes += Buffer.byteLength(block.text);
      digests.push(hash);
      ends.push(bytes);
    }
    const total = tokensOf(bytes);
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []));
    let readAt = -1;
    for (const point of breakpoints) {
      for (let index = point; index >= Math.max(0, point - 20); index--) {
        if (this.entries.has(digests[index]!)) {
          readAt = Math.max(readAt, index);
          break;
        }
      }
    }
    const read = readAt < 0 ? 0 : tokensOf(ends[readAt]!);
    const last = breakpoints[breakpoints.length - 1];
    let writtenTo = readAt;
    for (const point of breakpoints) {
      if (tokensOf(ends[point]!) < this.minimumTokens) continue;
      this.entries.add(digests[point]!);
      writtenTo = Math.max(writtenTo, point);
    }
    const written = last === undefined || writtenTo <= readAt ? 0 : tokensOf(ends[writtenTo]!) - read;
    return { read, written, uncached: Math.max(0, total - read - written) };
  }
}

/**
 * OpenAI's automatic prompt cache as documented, for loopback stand-ins: a request of at least 1,024 tokens reads the
 * longest prefix it shares with an earlier request, in steps of 128 tokens from 1,024; nothing is marked.
 */
export class OpenAIPromptCache {
  private readonly seen: PromptBlock[][] = [];

  /** Account one request body: the tokens it read from the cache (`written` is always 0: OpenAI does not charge writes). */
  use(body: Parameters<typeof openAIPromptBlocks>[0]): CacheUsage {
    const blocks = openAIPromptBlocks(body);
    const total = tokensOf(promptBytes(blocks));
    let shared = 0;
    for (const earlier of this.seen.slice(-8)) shared = Math.max(shared, tokensOf(sharedPrefixBytes(earlier, blocks)));
    this.seen.push(blocks);
    const read = total < 1_024 || shared < 1_024 ? 0 : Math.min(total, 1_024 + Math.floor((shared - 1_024) / 128) * 128);
    return { read, written: 0, uncached: total - read };
  }
}
