import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProviderFromSettings } from '../../src/providers/provider-factory.js';
import { FallbackConfig, loadWorkspaceConfig, parseFallbackFlag, resolveProviderSettings, type ProviderSources } from '../../src/providers/provider-settings.js';
import { makeTempDir } from '../support/temp-dir.js';

const workspace = '/work/space';
const resolveWith = (sources: Partial<ProviderSources>) => resolveProviderSettings({ workspace, cwd: '/cwd', ...sources });
const usage = (sources: Partial<ProviderSources>) => {
  try {
    resolveWith(sources);
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return 'no error';
};

describe('what a workspace file alone may decide about a key (trial 6 F1)', () => {
  it('sends a key only to the vendor host or this machine, and reads only a variable ending in _API_KEY; flags and REIN_BASE_URL confirm another host', () => {
    const env = { OPENAI_API_KEY: 'sk-1', AWS_SECRET_ACCESS_KEY: 'aws', EVIL_API_KEY: 'e' };
    expect(usage({ file: { provider: 'openai', model: 'm', baseUrl: 'https://collector.example/v1' }, env })).toBe('USAGE');
    expect(usage({ file: { provider: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' }, env })).toBe('USAGE');
    expect(usage({ file: { provider: 'openai', model: 'm', fallbacks: [{ provider: 'anthropic', model: 'b', baseUrl: 'https://collector.example' }] }, env })).toBe('USAGE');
    expect(resolveWith({ file: { provider: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'EVIL_API_KEY' }, env })).toMatchObject({ apiKey: 'e' });
    expect(resolveWith({ file: { provider: 'openai', model: 'm', baseUrl: 'https://api.openai.com/v1' }, env })).toMatchObject({ apiKey: 'sk-1' });
    expect(resolveWith({ file: { provider: 'openai', model: 'm', baseUrl: 'https://collector.example/v1' }, env: { ...env, REIN_BASE_URL: 'https://collector.example/v1' } })).toMatchObject({ baseUrl: 'https://collector.example/v1', apiKey: 'sk-1' });
    expect(resolveWith({ file: { provider: 'openai', model: 'm' }, flags: { baseUrl: 'https://proxy.example/v1' }, env })).toMatchObject({ baseUrl: 'https://proxy.example/v1' });
    fc.assert(fc.property(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,20}$/), (name) => {
      expect(usage({ file: { provider: 'openai', model: 'm', apiKeyEnv: name }, env: { [name]: 'v', OPENAI_API_KEY: 'sk' } }) === 'USAGE').toBe(!name.endsWith('_API_KEY'));
    }));
  });
});

describe('provider settings precedence: flags > session > environment > file > defaults', () => {
  it('takes each field from the highest layer that sets it', () => {
    const file = { provider: 'anthropic' as const, model: 'file-model', baseUrl: 'http://localhost:1' };
    const env = { REIN_PROVIDER: 'openai', REIN_MODEL: 'env-model', REIN_BASE_URL: 'http://env:2/v1' };
    expect(resolveWith({ file })).toMatchObject({ provider: 'anthropic', model: 'file-model', baseUrl: 'http://localhost:1' });
    expect(resolveWith({ file, env })).toMatchObject({ provider: 'openai', model: 'env-model', baseUrl: 'http://env:2/v1' });
    expect(resolveWith({ file, env, flags: { model: 'flag-model' } })).toMatchObject({ provider: 'openai', model: 'flag-model', baseUrl: 'http://env:2/v1' });
    expect(resolveWith({ file, env, flags: { provider: 'anthropic', baseUrl: 'http://flag:3' } })).toMatchObject({ provider: 'anthropic', model: 'env-model', baseUrl: 'http://flag:3' });
  });

  it('defaults the base URL to the vendor endpoint, which then needs the key from the environment', () => {
    expect(usage({ flags: { provider: 'openai', model: 'gpt-4.1' } })).toBe('USAGE');
    expect(resolveWith({ flags: { provider: 'openai', model: 'gpt-4.1' }, env: { OPENAI_API_KEY: 'sk-1' } })).toEqual({ provider: 'openai', model: 'gpt-4.1', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-1', apiKeyEnv: 'OPENAI_API_KEY', modelOptions: {} });
    expect(resolveWith({ flags: { provider: 'anthropic', model: 'claude' }, env: { ANTHROPIC_API_KEY: 'k' } })).toMatchObject({ baseUrl: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY' });
    expect(resolveWith({ flags: { provider: 'openai', model: 'qwen', baseUrl: 'http://127.0.0.1:11434/v1' } })).not.toHaveProperty('apiKey');
    expect(resolveWith({ flags: { provider: 'openai', model: 'm', baseUrl: 'http://x/v1' }, env: { MY_API_KEY: 'k2' }, file: { apiKeyEnv: 'MY_API_KEY' } })).toMatchObject({ apiKey: 'k2', apiKeyEnv: 'MY_API_KEY' });
  });

  it('refuses a missing or unknown provider, a missing model, a bad URL, misplaced --script or --from', () => {
    expect(usage({})).toBe('USAGE');
    expect(usage({ flags: { provider: 'gemini' } })).toBe('USAGE');
    expect(usage({ env: { REIN_PROVIDER: 'nope' } })).toBe('USAGE');
    expect(usage({ flags: { provider: 'openai', baseUrl: 'http://x/v1' } })).toBe('USAGE');
    expect(usage({ flags: { provider: 'openai', model: 'm', baseUrl: 'not a url' } })).toBe('USAGE');
    expect(usage({ flags: { provider: 'openai', model: 'm', baseUrl: 'ftp://x' } })).toBe('USAGE');
    // Credentials in the URL are refused before anything is sent or recorded (trial 5 E40).
    expect(usage({ flags: { provider: 'openai', model: 'm', baseUrl: 'http://u:sk-PASS@127.0.0.1:1/v1' } })).toBe('USAGE');
    expect(usage({ flags: { provider: 'openai', model: 'm', baseUrl: 'http://x/v1', script: 's.json' } })).toBe('USAGE');
    expect(usage({ flags: { provider: 'recorded' } })).toBe('USAGE');
    expect(usage({ flags: { provider: 'scripted' } })).toBe('USAGE');
  });

  it('--script selects the scripted provider (relative to cwd); the file\'s script is relative to the workspace', () => {
    expect(resolveWith({ flags: { script: 'plan.json' }, env: { REIN_PROVIDER: 'openai' } })).toMatchObject({ provider: 'scripted', script: '/cwd/plan.json' });
    expect(resolveWith({ file: { provider: 'scripted', script: 'plan.json' } })).toMatchObject({ script: '/work/space/plan.json' });
    expect(resolveWith({ flags: { from: 's-1' } })).toMatchObject({ provider: 'recorded', from: 's-1' });
  });

  it('on resume the session\'s own provider beats the environment, and flags beat the session', () => {
    const session = { name: 'openai', model: 'session-model', source: 'http://127.0.0.1:9/v1' };
    const env = { REIN_PROVIDER: 'anthropic', REIN_MODEL: 'env-model', ANTHROPIC_API_KEY: 'k' };
    expect(resolveWith({ session, env })).toMatchObject({ provider: 'openai', model: 'session-model', baseUrl: 'http://127.0.0.1:9/v1' });
    expect(resolveWith({ session, env, flags: { model: 'flag-model' } })).toMatchObject({ provider: 'openai', model: 'flag-model' });
    expect(resolveWith({ session, env, flags: { provider: 'anthropic', baseUrl: 'http://a:1' } })).toMatchObject({ provider: 'anthropic', model: 'env-model' });
    expect(resolveWith({ session: { name: 'scripted', model: 'script', source: 'rel.json' } })).toMatchObject({ provider: 'scripted', script: '/cwd/rel.json' });
  });

  it('reads file options into model options', () => {
    expect(resolveWith({ file: { provider: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:9/v1', temperature: 0.2, maxOutputTokens: 900, idleTimeoutMs: 5000 } })).toMatchObject({ modelOptions: { temperature: 0.2, maxOutputTokens: 900 }, idleTimeoutMs: 5000 });
  });
});

describe('rein.config.json', () => {
  let directory: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    directory = await makeTempDir('rein-config-');
  });
  afterEach(() => directory.remove());

  const write = (value: string) => writeFile(join(directory.path, 'rein.config.json'), value);
  const codeOf = async () => loadWorkspaceConfig(directory.path).then(() => 'ok', (error: { code?: string }) => error.code);

  it('is optional, and parsed when present', async () => {
    expect(await loadWorkspaceConfig(directory.path)).toBeUndefined();
    await write('{ "provider": "openai", "model": "qwen2.5-coder", "baseUrl": "http://127.0.0.1:11434/v1" }');
    expect(await loadWorkspaceConfig(directory.path)).toEqual({ provider: 'openai', model: 'qwen2.5-coder', baseUrl: 'http://127.0.0.1:11434/v1' });
  });

  it('refuses broken JSON, unknown fields and API keys', async () => {
    await write('{ nope');
    expect(await codeOf()).toBe('CONFIG_INVALID');
    await write('{ "provider": "openai", "colour": "blue" }');
    expect(await codeOf()).toBe('CONFIG_INVALID');
    await write('{ "apiKey": "sk-live" }');
    expect(await codeOf()).toBe('CONFIG_INVALID');
    await write('{ "provider": "mistral" }');
    expect(await codeOf()).toBe('CONFIG_INVALID');
  });
});

describe('createProviderFromSettings', () => {
  it('builds each provider; the endpoint it records carries no credentials', async () => {
    const openai = await createProviderFromSettings({ provider: 'openai', model: 'm', baseUrl: 'https://user:pw@host.example/v1?key=1', apiKey: 'sk-x', modelOptions: {} });
    expect(openai.provider).toMatchObject({ name: 'openai', model: 'm', source: 'https://host.example/v1' });
    const anthropic = await createProviderFromSettings({ provider: 'anthropic', model: 'c', baseUrl: 'https://api.anthropic.com', modelOptions: {} });
    expect(anthropic.provider).toMatchObject({ name: 'anthropic', model: 'c', source: 'https://api.anthropic.com' });
    await expect(createProviderFromSettings({ provider: 'scripted', script: '/no/such/script.json', modelOptions: {} })).rejects.toMatchObject({ code: 'SCRIPT_INVALID' });
    await expect(createProviderFromSettings({ provider: 'recorded', from: 's-1', modelOptions: {} })).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('the fallback chain', () => {
  const primary = { provider: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:1/v1' };

  it('comes from repeated --fallback flags, which replace the file\'s, each resolved like a provider of its own', () => {
    const file = { fallbacks: [{ provider: 'anthropic' as const, model: 'from-file', baseUrl: 'http://127.0.0.1:3' }] };
    expect(resolveWith({ flags: primary, file }).fallbacks).toEqual([{ provider: 'anthropic', model: 'from-file', baseUrl: 'http://127.0.0.1:3', apiKeyEnv: 'ANTHROPIC_API_KEY', modelOptions: {} }]);
    const flagged = resolveWith({ flags: primary, file, fallbackFlags: ['anthropic:claude-x', 'openai:llama@http://127.0.0.1:11434/v1'], env: { ANTHROPIC_API_KEY: 'k' } });
    expect(flagged.fallbacks).toEqual([
      { provider: 'anthropic', model: 'claude-x', baseUrl: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY', apiKey: 'k', modelOptions: {} },
      { provider: 'openai', model: 'llama', baseUrl: 'http://127.0.0.1:11434/v1', apiKeyEnv: 'OPENAI_API_KEY', modelOptions: {} },
    ]);
    expect(resolveWith({ flags: primary })).not.toHaveProperty('fallbacks');
  });

  it('a resumed session keeps the chain it recorded (over the file\'s, taking a matching link\'s key variable from it) unless the flags name one', () => {
    const session = { name: 'openai', model: 'm', source: 'http://127.0.0.1:1/v1', fallbacks: [{ name: 'anthropic', model: 'b', source: 'http://127.0.0.1:2' }, { name: 'scripted', source: 'x.json' }] };
    expect(resolveWith({ session }).fallbacks).toEqual([expect.objectContaining({ provider: 'anthropic', model: 'b', baseUrl: 'http://127.0.0.1:2', apiKeyEnv: 'ANTHROPIC_API_KEY' })]);
    const file = { fallbacks: [{ provider: 'anthropic' as const, model: 'b', apiKeyEnv: 'SPARE_API_KEY' }, { provider: 'openai' as const, model: 'other', baseUrl: 'http://127.0.0.1:5/v1' }] };
    expect(resolveWith({ session, file, env: { SPARE_API_KEY: 'k' } }).fallbacks).toEqual([expect.objectContaining({ provider: 'anthropic', model: 'b', apiKeyEnv: 'SPARE_API_KEY', apiKey: 'k' })]);
    expect(resolveWith({ session, file, fallbackFlags: ['openai:c@http://127.0.0.1:4/v1'] }).fallbacks).toEqual([expect.objectContaining({ provider: 'openai', model: 'c' })]);
    // A session resumed on another provider does not inherit the chain recorded for the first one.
    expect(resolveWith({ session, flags: { provider: 'anthropic', model: 'z', baseUrl: 'http://127.0.0.1:6' } })).not.toHaveProperty('fallbacks');
  });

  it('the file\'s chain backs only a remote provider: scripted runs never need the fallbacks\' keys', () => {
    const file = { fallbacks: [{ provider: 'anthropic' as const, model: 'claude-x' }] };
    expect(resolveWith({ flags: { script: 's.json' }, file })).not.toHaveProperty('fallbacks');
    expect(usage({ flags: { provider: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:1/v1' }, file })).toBe('USAGE');
  });

  it('noFallbacks (--no-fallback) drops every chain: the file\'s, the recorded one and the flags\'', () => {
    const file = { fallbacks: [{ provider: 'anthropic' as const, model: 'claude-x' }] };
    const session = { name: 'openai', model: 'm', source: 'http://127.0.0.1:1/v1', fallbacks: [{ name: 'anthropic', model: 'b', source: 'http://127.0.0.1:2' }] };
    expect(resolveWith({ flags: primary, file, noFallbacks: true })).not.toHaveProperty('fallbacks');
    expect(resolveWith({ session, noFallbacks: true })).not.toHaveProperty('fallbacks');
  });

  it('a model id may hold an @: only a trailing @<url> is the endpoint', () => {
    expect(parseFallbackFlag('anthropic:claude-sonnet-4-5@20250929')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5@20250929' });
    expect(parseFallbackFlag('openai:org/m@v2@http://127.0.0.1:8/v1')).toEqual({ provider: 'openai', model: 'org/m@v2', baseUrl: 'http://127.0.0.1:8/v1' });
  });

  it('refuses a malformed link, a missing key for a vendor endpoint, more than four links, and fallbacks for the recorded provider', () => {
    for (const link of ['gemini:pro', 'openai', 'openai:', 'anthropic:m@not a url', 'openai:m@ftp://x', 'openai:m@http://[bad']) expect(usage({ flags: primary, fallbackFlags: [link] }), link).toBe('USAGE');
    expect(usage({ flags: primary, fallbackFlags: ['anthropic:claude-x'] })).toBe('USAGE');
    expect(usage({ flags: primary, fallbackFlags: Array.from({ length: 5 }, (_, index) => `openai:m${index}@http://127.0.0.1:9/v1`) })).toBe('USAGE');
    expect(usage({ flags: { provider: 'recorded', from: 's-1' }, fallbackFlags: ['openai:m@http://127.0.0.1:9/v1'] })).toBe('USAGE');
  });

  it('the config file validates its chain strictly', async () => {
    const dir = await makeTempDir('rein-fallback-config-');
    try {
      await writeFile(join(dir.path, 'rein.config.json'), JSON.stringify({ provider: 'openai', fallbacks: [{ provider: 'anthropic', model: 'b', apiKeyEnv: 'SPARE_API_KEY' }] }));
      expect((await loadWorkspaceConfig(dir.path))?.fallbacks).toEqual([{ provider: 'anthropic', model: 'b', apiKeyEnv: 'SPARE_API_KEY' }]);
      await writeFile(join(dir.path, 'rein.config.json'), JSON.stringify({ fallbacks: [{ provider: 'scripted', model: 'b' }] }));
      await expect(loadWorkspaceConfig(dir.path)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      await writeFile(join(dir.path, 'rein.config.json'), JSON.stringify({ fallbacks: [{ provider: 'openai', model: 'b', apiKey: 'sk-no' }] }));
      await expect(loadWorkspaceConfig(dir.path)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    } finally {
      await dir.remove();
    }
  });

  it('is built into providers by the factory', async () => {
    const built = await createProviderFromSettings(resolveWith({ flags: primary, fallbackFlags: ['anthropic:b@http://127.0.0.1:2'] }));
    expect(built.fallbacks.map((provider) => [provider.name, provider.model])).toEqual([['anthropic', 'b']]);
  });

  it('any --fallback text either parses to a valid link or is a USAGE error, never anything else', () => {
    const near = fc.tuple(fc.constantFrom('openai', 'anthropic', 'gemini', '', 'OPENAI'), fc.constantFrom(':', '/', '', '::'), fc.string(), fc.option(fc.constantFrom('@http://127.0.0.1:1/v1', '@', '@ftp://x', '@ spaced'))).map(([name, separator, model, url]) => `${name}${separator}${model}${url ?? ''}`);
    fc.assert(
      fc.property(fc.oneof(fc.string(), near), (text) => {
        let parsed: unknown;
        try {
          parsed = parseFallbackFlag(text);
        } catch (error) {
          expect(error).toMatchObject({ code: 'USAGE' });
          return;
        }
        expect(FallbackConfig.safeParse(parsed).success).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
