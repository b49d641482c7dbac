import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { hostAllowed, startAllowListProxy } from '../../src/policy/network-proxy.js';
import { broadHostReason, isThisMachineAddress, namesThisMachine } from '../../src/policy/host-addresses.js';
import { toolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { requireBubblewrap, requireSocat } from '../support/sandbox.js';

const sandboxed = await requireBubblewrap();
const bridged = requireSocat();
const curl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI) throw new Error('curl is required in CI (the network policy tests use it as the client) and is not installed');
    return false;
  }
})();

const parse = (observation: string): Record<string, any> => JSON.parse(observation.replace(/^(Timeout|Cancelled): /, '')) as Record<string, any>;

describe('host names on the allow-list', () => {
  it('match exactly and case-insensitively; *.domain covers subdomains only', () => {
    expect(hostAllowed('Registry.NPMJS.org', ['registry.npmjs.org'])).toBe(true);
    expect(hostAllowed('registry.npmjs.org.', ['registry.npmjs.org'])).toBe(true);
    expect(hostAllowed('evil-registry.npmjs.org', ['registry.npmjs.org'])).toBe(false);
    expect(hostAllowed('a.example.com', ['*.example.com'])).toBe(true);
    expect(hostAllowed('example.com', ['*.example.com'])).toBe(false);
    expect(hostAllowed('example.com.evil.net', ['*.example.com'])).toBe(false);
    expect(hostAllowed('127.0.0.1', ['localhost'])).toBe(false);
    expect(hostAllowed('[::1]', ['[::1]'])).toBe(true);
    expect(hostAllowed('', ['*'])).toBe(false);
  });
});

describe('addresses of this machine (trial 7 G6)', () => {
  it('loopback, link-local, unspecified, mapped forms and the interfaces\' own addresses are this machine; public ones are not', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '0.0.0.0', '169.254.169.254', '::1', '[::1]', '::', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '224.0.0.1']) expect(isThisMachineAddress(address), address).toBe(true);
    for (const address of ['203.0.113.7', '8.8.8.8', '2001:db8::1', '10.1.2.3']) expect(isThisMachineAddress(address), address).toBe(false);
    expect(namesThisMachine('localhost')).toBe(true);
    expect(namesThisMachine('api.localhost')).toBe(true);
    expect(namesThisMachine('registry.npmjs.org')).toBe(false);
    expect(broadHostReason('*.com')).toBe('every name under .com');
    expect(broadHostReason('192.168.1.1')).toBe('a private network address');
    expect(broadHostReason('*.example.com')).toBeUndefined();
  });
});

describe('the allow-list proxy checks the address a name resolves to, at connect time (trial 7 G6)', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_request, response) => response.end('loopback-service'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** Send `CONNECT host:port` to the proxy's socket and return its status line (and, once tunnelled, the server's answer). */
  const tunnel = (socketPath: string, target: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(socketPath, () => socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.startsWith('HTTP/1.1 200') && text.endsWith('\r\n\r\n')) socket.write(`GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });

  it('a name that resolves to loopback or to the metadata address is refused; an entry naming this machine is not', async () => {
    const names: Record<string, string[]> = { 'rebind.example': ['127.0.0.1'], 'metadata.example': ['169.254.169.254'], 'mapped.example': ['::ffff:127.0.0.1'] };
    const proxy = await startAllowListProxy({ allowedHosts: ['rebind.example', 'metadata.example', 'mapped.example', 'localhost', '127.0.0.1'], lookup: async (name) => names[name] ?? (await lookup(name, { all: true })).map((entry) => entry.address) });
    try {
      for (const name of Object.keys(names)) {
        const answer = await tunnel(proxy.socketPath, `${name}:${port}`);
        expect(answer, name).toMatch(/^HTTP\/1.1 403/);
        expect(answer).not.toContain('loopback-service');
      }
      expect(await tunnel(proxy.socketPath, `127.0.0.1:${port}`)).toContain('loopback-service');
      expect(await tunnel(proxy.socketPath, `localhost:${port}`)).toContain('loopback-service');
      expect(proxy.decisions.slice(0, 3)).toEqual(Object.entries(names).map(([host, [address]]) => ({ host, port, method: 'CONNECT', decision: 'refuse', reason: expect.stringContaining(`resolves to ${address}, an address of this machine`) })));
    } finally {
      await proxy.close();
    }
  });

  it.runIf(sandboxed && bridged && curl)('through bubblewrap: the host\'s own name, which resolves to this machine, does not reach its loopback', async () => {
    const name = hostname();
    const addresses = (await lookup(name, { all: true }).catch(() => [])).map((entry) => entry.address);
    expect(addresses.some(isThisMachineAddress), `${name} resolves to ${addresses.join(', ')}`).toBe(true);
    const dir = await makeTempDir('rein-network-rebind-');
    try {
      const harness = await toolHarness(dir.path, { sandbox: { network: 'allow-list', allowedHosts: [name], mode: 'required' } });
      const result = await harness.run('bash', { command: `curl -s --max-time 5 http://${name}:${port}/; echo; curl -s --max-time 5 -p http://${name}:${port}/` });
      const json = parse(result.observation);
      expect(json.stdout).not.toContain('loopback-service');
      expect(result.facts.filter((fact) => fact.type === 'network.decided').map((fact) => (fact.data as { decision: string }).decision)).toEqual(['refuse', 'refuse']);
    } finally {
      await dir.remove();
    }
  });
});

describe.runIf(curl)('the network policy of bash, against a loopback server the test starts', () => {
  let server: Server;
  let port: number;
  let dir: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    server = createServer((_request, response) => response.end('hello-from-loopback'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
    dir = await makeTempDir('rein-network-');
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await dir.remove();
  });

  const fetchWith = async (network: 'disabled' | 'allow-list' | 'allow-all', command: string, options: { mode?: 'auto' | 'off'; hosts?: string[] } = {}) => {
    const harness = await toolHarness(dir.path, { sandbox: { network, allowedHosts: options.hosts ?? [], mode: options.mode ?? 'auto' } });
    const result = await harness.run('bash', { command });
    return { json: parse(result.observation), facts: result.facts };
  };

  it('disabled: the server is unreachable, and no proxy is offered', async () => {
    const { json } = await fetchWith('disabled', `curl -s -S --max-time 5 http://127.0.0.1:${port}/; echo " proxy=[$HTTP_PROXY]"`);
    expect(json.stdout).not.toContain('hello-from-loopback');
    expect(json.stdout).toContain('proxy=[]');
    if (sandboxed) expect(json.sandbox.network).toBe('disabled, enforced (bubblewrap --unshare-net)');
  });

  it.runIf(bridged)('allow-list naming localhost: reachable by that name, refused by another, each decision recorded', async () => {
    const { json, facts } = await fetchWith('allow-list', `curl -s --max-time 5 http://localhost:${port}/; echo; curl -s --max-time 5 http://127.0.0.1:${port}/; echo; curl -s --max-time 5 -p http://localhost:${port}/tunnel; echo`, { hosts: ['localhost'] });
    const lines = json.stdout.split('\n').filter((line: string) => line !== '');
    expect(lines[0]).toBe('hello-from-loopback');
    expect(lines[1]).toContain('refused by the network allow-list');
    expect(lines[2]).toBe('hello-from-loopback');
    const decisions = facts.filter((fact) => fact.type === 'network.decided').map((fact) => fact.data);
    expect(decisions).toEqual([
      expect.objectContaining({ host: 'localhost', port, method: 'GET', decision: 'allow' }),
      expect.objectContaining({ host: '127.0.0.1', port, method: 'GET', decision: 'refuse', reason: 'not on the allow-list' }),
      expect.objectContaining({ host: 'localhost', port, method: 'CONNECT', decision: 'allow' }),
    ]);
    expect(json.network_connections).toEqual([`allowed GET localhost:${port}`, `refused GET 127.0.0.1:${port}`, `allowed CONNECT localhost:${port}`]);
    if (sandboxed) expect(json.sandbox.network).toBe('allow-list, enforced (bubblewrap --unshare-net + allow-list proxy)');
  });

  it.runIf(bridged)('allow-list: a direct connection that ignores the proxy finds no network; Node 20 fetch has none', async () => {
    const { json } = await fetchWith('allow-list', `curl -s --noproxy '*' --max-time 5 http://localhost:${port}/ || echo direct-failed; node -e "fetch('http://localhost:${port}/').then(() => console.log('fetched'), () => console.log('fetch-failed'))"`, { hosts: ['localhost'] });
    expect(json.stdout).toContain('direct-failed');
    expect(json.stdout).toContain('fetch-failed');
    expect(json.stdout).not.toContain('hello-from-loopback');
  });

  it.runIf(bridged)('allow-list without bubblewrap (mode off): unshare and the same bridge enforce it', async () => {
    const { json, facts } = await fetchWith('allow-list', `curl -s --max-time 5 http://localhost:${port}/; echo; curl -s --max-time 5 http://127.0.0.1:${port}/`, { hosts: ['localhost'], mode: 'off' });
    expect(json.sandbox.network).toContain('allow-list proxy');
    expect(json.stdout.split('\n')[0]).toBe('hello-from-loopback');
    expect(json.stdout).toContain('refused by the network allow-list');
    expect(facts.filter((fact) => fact.type === 'network.decided')).toHaveLength(2);
  });

  it('allow-all: the host network', async () => {
    const { json } = await fetchWith('allow-all', `curl -s --max-time 5 http://127.0.0.1:${port}/`);
    expect(json.stdout).toBe('hello-from-loopback');
  });
});
