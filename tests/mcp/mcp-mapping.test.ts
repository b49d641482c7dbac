import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../stores/index.js';
import { expandVariables, parseMcpServers } from '../../src/mcp/mcp-config.js';
import { mcpToolName, vendorToolName } from '../../src/mcp/mcp-names.js';
import { failureOfError, mapCallResult } from '../../src/mcp/mcp-result.js';
import { annotationsOf, mcpToolOf } from '../../src/mcp/mcp-tool.js';
import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { propertyRuns } from '../support/temp-dir.js';

describe('MCP configuration', () => {
  it('takes the shapes other harnesses write, ignores their extra fields, and reports what it cannot use', () => {
    const parsed = parseMcpServers(
      {
        fs: { command: 'npx', args: ['-y', 'server-fs', '.'], env: { TOKEN: '${FS_TOKEN}' }, alwaysAllow: ['read'] },
        web: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${WEB}' } },
        old: { type: 'sse', url: 'https://example.com/sse' },
        off: { command: 'x', disabled: true },
        'bad name': { command: 'x' },
        nothing: { args: ['x'] },
        typeless: { url: 'http://127.0.0.1:9/mcp' },
      },
      { kind: 'project', file: '.mcp.json' },
    );
    expect(parsed.servers.map((spec) => spec.name)).toEqual(['fs', 'web']);
    expect(parsed.servers[0]!.origin).toEqual({ kind: 'project', file: '.mcp.json' });
    expect(parsed.problems.map((problem) => [problem.name, problem.reason.slice(0, 24)])).toEqual([
      ['old', 'the SSE transport is dep'],
      ['bad name', 'the name must match /^[A'],
      ['nothing', expect.any(String)],
      ['typeless', 'an entry with a "url" ne'],
    ]);
  });

  it('expands ${VAR} and ${VAR:-default}, and names the first unset variable instead of sending an empty value', () => {
    expect(expandVariables('Bearer ${A}-${B:-fallback}', { A: 'x' })).toEqual({ ok: true, value: 'Bearer x-fallback' });
    expect(expandVariables('${MISSING} and ${A}', { A: 'x' })).toEqual({ ok: false, missing: 'MISSING' });
  });

  it('never throws on arbitrary configuration values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed = parseMcpServers(value, { kind: 'host' });
        expect(parsed.servers.length + parsed.problems.length).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('MCP tool names', () => {
  it('keeps clean names, and shortens or cleans others stably with a suffix of the full name', () => {
    expect(mcpToolName('github', 'search_issues')).toBe('mcp__github__search_issues');
    expect(mcpToolName('my.server', 'get file')).toMatch(/^mcp__my_server__get_file_[0-9a-f]{6}$/);
    const long = mcpToolName('s', 'x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(mcpToolName('s', 'x'.repeat(100))).toBe(long);
  });

  it('always yields a vendor-valid name, and distinct originals stay distinct', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ minLength: 1, maxLength: 120 }), fc.string({ minLength: 1, maxLength: 120 }), (server, first, second) => {
        expect(mcpToolName(server, first)).toMatch(vendorToolName);
        if (first !== second) expect(mcpToolName(server, first)).not.toBe(mcpToolName(server, second));
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});

describe('MCP tools as rein tools', () => {
  const caller = { server: 'demo', call: async () => ({ content: [] }) };

  it('maps annotations to risk: read-only runs, destructive by default otherwise, open world unless said', () => {
    expect(annotationsOf({ readOnlyHint: true })).toMatchObject({ readOnly: true, destructive: false, openWorld: true });
    expect(annotationsOf({})).toMatchObject({ readOnly: false, destructive: true, requiresConfirmation: true });
    expect(annotationsOf({ destructiveHint: false, openWorldHint: false })).toMatchObject({ destructive: false, openWorld: false });
    const write = mcpToolOf({ name: 'put', inputSchema: { type: 'object' } }, caller);
    // Issue 25 §5: a tool that is not read-only changes something (`write`); `network` only when the server says open world.
    expect(write.ok && [write.definition.risk, write.definition.resumePolicy]).toEqual(['write', 'require-user-confirmation']);
    const fetcher = mcpToolOf({ name: 'fetch', inputSchema: { type: 'object' }, annotations: { openWorldHint: true } }, caller);
    expect(fetcher.ok && fetcher.definition.risk).toBe('network');
    const reader = mcpToolOf({ name: 'get', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }, caller);
    expect(reader.ok && reader.definition.risk).toBe('read');
  });

  it('validates arguments with the advertised JSON Schema (field paths kept), and reports a schema it cannot use', () => {
    const tool = mcpToolOf({ name: 'sum', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'array', items: { type: 'string' } } }, required: ['a'], additionalProperties: false } }, caller);
    if (!tool.ok) throw new Error('expected a tool');
    expect(tool.definition.parameters.safeParse({ a: 1, b: ['x'] }).success).toBe(true);
    const bad = tool.definition.parameters.safeParse({ a: 'one', b: ['x', 2], c: true });
    expect(bad.success ? [] : bad.error.issues.map((issue) => issue.path.join('.'))).toEqual(expect.arrayContaining(['a', 'b.1']));
    expect(mcpToolOf({ name: 'broken', inputSchema: { type: 'object', properties: { a: { type: 'strin' } } } }, caller)).toMatchObject({ ok: false, problem: { tool: 'broken' } });
    expect(mcpToolOf({ name: 'array', inputSchema: { type: 'array' } }, caller)).toMatchObject({ ok: false });
  });

  it('maps results: text, images and binary resources as artifacts, resource links, structured content, isError', async () => {
    const blobs = createMemoryEventStore().blobs;
    const image = Buffer.from('png bytes').toString('base64');
    const ok = await mapCallResult({ content: [{ type: 'text', text: 'hello' }, { type: 'image', data: image, mimeType: 'image/png' }, { type: 'resource_link', uri: 'file:///a.md', name: 'a.md', mimeType: 'text/markdown' }, { type: 'resource', resource: { uri: 'x://y', text: 'inline' } }], structuredContent: { n: 1 } }, blobs);
    expect(ok.ok && ok.output.split('\n')).toEqual(['hello', expect.stringMatching(/^\[image image\/png, 9 bytes: artifact:\/\/blake3\/[0-9a-f]{64}\]$/), '[resource link: a.md <file:///a.md> (text/markdown)]', '[resource <x://y>]', 'inline', 'structured content: {"n":1}']);
    expect(ok.ok && ok.artifacts).toHaveLength(1);
    expect(await mapCallResult({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } }, blobs)).toMatchObject({ ok: true, output: '{"n":1}' });
    expect(await mapCallResult({ content: [{ type: 'text', text: 'nope' }], isError: true }, blobs)).toMatchObject({ ok: false, code: 'ExecutionFailed', message: 'nope' });
  });

  it('maps protocol and transport errors to failure classes', () => {
    expect(failureOfError(Object.assign(new Error('timed out'), { code: 'REQUEST_TIMEOUT' }), 's').code).toBe('Timeout');
    expect(failureOfError(Object.assign(new Error('closed'), { code: 'CONNECTION_CLOSED' }), 's').code).toBe('Unavailable');
    expect(failureOfError(Object.assign(new Error('boom'), { status: 503 }), 's').code).toBe('Unavailable');
    expect(failureOfError(Object.assign(new Error('no'), { status: 401 }), 's').code).toBe('Denied');
    expect(failureOfError(Object.assign(new Error('invalid params'), { code: -32602 }), 's').code).toBe('ExecutionFailed');
    expect(failureOfError(new TypeError('fetch failed'), 's').code).toBe('Unavailable');
  });
});

describe('permission rules for MCP tools', () => {
  const tool = (name: string, hints: Parameters<typeof annotationsOf>[0]) => ({ name, risk: hints?.readOnlyHint ? ('read' as const) : ('network' as const), annotations: annotationsOf(hints) });
  const read = tool('mcp__fs__read_file', { readOnlyHint: true });
  const write = tool('mcp__fs__write_file', { destructiveHint: false });
  const remove = tool('mcp__fs__delete_file', {});

  it('read-only runs, others ask; globs in tool names approve and deny', () => {
    const policy = new PermissionPolicy();
    expect(policy.decide({ tool: read }).decision).toBe('allow');
    expect(policy.decide({ tool: write }).decision).toBe('ask');
    const approved = new PermissionPolicy({ rules: ['allow mcp__fs__*'] });
    expect(approved.decide({ tool: write }).decision).toBe('allow');
    const denied = new PermissionPolicy({ rules: ['deny mcp__*__delete*', 'allow mcp__fs__*'] });
    expect(denied.decide({ tool: remove }).decision).toBe('deny');
    expect(denied.visibility(remove)).toMatchObject({ visible: false });
    expect(denied.visibility(write)).toMatchObject({ visible: true });
  });

  it('a destructive tool is allowed only by a rule that names it, never by a glob', () => {
    expect(new PermissionPolicy({ rules: ['allow mcp__fs__*'] }).decide({ tool: remove })).toMatchObject({ decision: 'ask' });
    expect(new PermissionPolicy({ rules: ['allow mcp__fs__delete_file'] }).decide({ tool: remove })).toMatchObject({ decision: 'allow' });
  });
});
