import { DEFAULT_INHERITED_ENV_VARS } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { credentialLike, inheritedServerVariables, mcpServerEnvironment } from '../../src/mcp/project-mcp.js';

describe('what of the environment an MCP server receives', () => {
  it('the inherited list is the SDK\'s default environment (a new SDK that passes more must show up here)', () => {
    if (process.platform !== 'win32') expect([...inheritedServerVariables]).toEqual([...DEFAULT_INHERITED_ENV_VARS]);
  });

  it('names every ${VAR} by where it goes; an env entry overrides an inherited name; no value is read', () => {
    const spec = { name: 's', origin: { kind: 'project' as const }, config: { command: '${TOOL_BIN}', args: ['--key=${MY_SECRET:-x}'], env: { PATH: '/bin', LEVEL: '${OPENAI_API_KEY}', MODE: 'quiet' } } };
    expect(mcpServerEnvironment(spec, { HOME: '/h', PATH: '/usr/bin', USER: 'u', OPENAI_API_KEY: 'sk-x' })).toEqual({
      variables: [
        { name: 'TOOL_BIN', into: 'command', credential: false },
        { name: 'MY_SECRET', into: 'args', credential: true },
        { name: 'OPENAI_API_KEY', into: 'env LEVEL', credential: true },
      ],
      fixed: ['PATH', 'MODE'],
      inherited: ['HOME', 'USER'],
    });
  });

  it('flags credential-looking names', () => {
    for (const name of ['OPENAI_API_KEY', 'GITHUB_TOKEN', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'NPM_AUTH', 'GH_PAT']) expect(credentialLike(name), name).toBe(true);
    for (const name of ['HOME', 'PATH', 'DOCS_LEVEL', 'PATHEXT', 'LANG']) expect(credentialLike(name), name).toBe(false);
  });
});
