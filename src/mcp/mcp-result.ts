import type { ToolErrorCode } from '../../models/tool.records.js';
import type { ArtifactRef, BlobStore } from '../../stores/blob-store.js';
import type { ToolResult } from '../tools/tool.js';

/** A content block of a tool result as MCP defines it (text, image, audio, resource link, embedded resource). */
export type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name?: string; title?: string; description?: string; mimeType?: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: string; [key: string]: unknown };

/** A `tools/call` result. */
export interface McpCallResult {
  content?: McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
}

const binary = async (blobs: BlobStore, data: string, label: string, mimeType: string | undefined, artifacts: ArtifactRef[]): Promise<string> => {
  const bytes = Buffer.from(data, 'base64');
  const ref = await blobs.put(bytes);
  artifacts.push(ref);
  return `[${label}${mimeType ? ` ${mimeType}` : ''}, ${bytes.length} bytes: ${ref}]`;
};

/** One content block as observation text; binary payloads go to the blob store and are named by their artifact. */
const renderBlock = async (block: McpContent, blobs: BlobStore, artifacts: ArtifactRef[]): Promise<string> => {
  const value = block as Record<string, unknown>;
  if (block.type === 'text' && typeof value.text === 'string') return value.text;
  if ((block.type === 'image' || block.type === 'audio') && typeof value.data === 'string') return binary(blobs, value.data, block.type, typeof value.mimeType === 'string' ? value.mimeType : undefined, artifacts);
  if (block.type === 'resource_link' && typeof value.uri === 'string') {
    const name = typeof value.title === 'string' ? value.title : typeof value.name === 'string' ? value.name : '';
    const mime = typeof value.mimeType === 'string' ? ` (${value.mimeType})` : '';
    const description = typeof value.description === 'string' ? ` — ${value.description}` : '';
    return `[resource link: ${name ? `${name} ` : ''}<${value.uri}>${mime}${description}]`;
  }
  if (block.type === 'resource' && typeof value.resource === 'object' && value.resource !== null) {
    const resource = value.resource as { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
    const head = `[resource <${String(resource.uri)}>${typeof resource.mimeType === 'string' ? ` (${resource.mimeType})` : ''}]`;
    if (typeof resource.text === 'string') return `${head}\n${resource.text}`;
    if (typeof resource.blob === 'string') return `${head} ${await binary(blobs, resource.blob, 'blob', typeof resource.mimeType === 'string' ? resource.mimeType : undefined, artifacts)}`;
    return head;
  }
  return `[${String(block.type)} content: ${JSON.stringify(block).slice(0, 500)}]`;
};

/**
 * An MCP tool result as rein's tool result: text blocks as they are, images, audio and binary resources stored as
 * artifacts and named, resource links as one line each, structured content as JSON (unless a text block already
 * holds exactly it). A result with `isError` is the model-visible failure `ExecutionFailed` with that text. The
 * pipeline then applies the observation budget (a large text goes to an artifact).
 */
export const mapCallResult = async (result: McpCallResult, blobs: BlobStore): Promise<ToolResult> => {
  const artifacts: ArtifactRef[] = [];
  const parts: string[] = [];
  for (const block of result.content ?? []) parts.push(await renderBlock(block, blobs, artifacts));
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!parts.some((part) => part.trim() === json || safeEqualJson(part, result.structuredContent))) parts.push(`structured content: ${json}`);
  }
  const output = parts.length > 0 ? parts.join('\n') : '(the tool returned no content)';
  if (result.isError) return { ok: false, code: 'ExecutionFailed', message: output, ...(artifacts.length > 0 ? { artifacts } : {}) };
  return { ok: true, output, ...(artifacts.length > 0 ? { artifacts } : {}) };
};

const safeEqualJson = (text: string, value: unknown): boolean => {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
};

/** How a thrown error of an MCP request reaches the model: its failure class and a message without secrets. */
export const failureOfError = (error: unknown, server: string): { code: ToolErrorCode; message: string } => {
  const value = error as { name?: unknown; code?: unknown; message?: unknown; status?: unknown };
  const message = typeof value?.message === 'string' ? value.message : String(error);
  const status = typeof value?.status === 'number' ? value.status : undefined;
  if (value?.name === 'AbortError') return { code: 'Cancelled', message: 'the call was cancelled' };
  if (value?.code === 'REQUEST_TIMEOUT') return { code: 'Timeout', message: `the MCP server ${server} did not answer in time: ${message}` };
  if (value?.code === 'NOT_CONNECTED' || value?.code === 'CONNECTION_CLOSED' || value?.code === 'SEND_FAILED') return { code: 'Unavailable', message: `the MCP server ${server} is not connected: ${message}` };
  if (status !== undefined) {
    if (status >= 500 || status === 0) return { code: 'Unavailable', message: `the MCP server ${server} answered HTTP ${status}: ${message}` };
    if (status === 401 || status === 403) return { code: 'Denied', message: `the MCP server ${server} refused the request (HTTP ${status}): check its credentials` };
    return { code: 'ExecutionFailed', message: `the MCP server ${server} answered HTTP ${status}: ${message}` };
  }
  if (typeof value?.code === 'number') return { code: 'ExecutionFailed', message: `the MCP server ${server} returned error ${value.code}: ${message}` };
  if (/ECONNREFUSED|ECONNRESET|EPIPE|fetch failed|socket hang up/i.test(message)) return { code: 'Unavailable', message: `the MCP server ${server} cannot be reached: ${message}` };
  return { code: 'ExecutionFailed', message: `the MCP server ${server} failed: ${message}` };
};
