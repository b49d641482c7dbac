import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { CapabilityDiff, CapabilityLoaded } from '../../models/capability.records.js';
import { blake3Text } from '../../machines/typestate/blake3.js';
import { createMemoryEventStore } from '../../stores/index.js';
import type { EventStore } from '../../stores/event-store.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { verifyRecords } from '../../src/host/replay.js';
import { discoverSkills } from '../../src/skills/skill-discovery.js';
import { parseSkillDocument } from '../../src/skills/skill-format.js';
import { skillIndexText } from '../../src/skills/skill.tool.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

const testFixBody = 'Reproduce the failure first. Read the failing test and the module under test. Make the smallest change, then run the smallest relevant test.';

const skill = (name: string, description: string, body: string, extra = '') => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}\n`;

const seed = async (workspace: string, home: string) => {
  await mkdir(join(workspace, '.agents/skills/test-fix'), { recursive: true });
  await writeFile(join(workspace, '.agents/skills/test-fix/SKILL.md'), skill('test-fix', 'Fix failing tests: reproduce, localize, minimal change, verify.', testFixBody, 'allowed-tools: Read Grep\nlicense: MIT\n'));
  await mkdir(join(workspace, '.claude/skills/code-review/references'), { recursive: true });
  await writeFile(join(workspace, '.claude/skills/code-review/SKILL.md'), skill('code-review', 'Review a diff for correctness and test gaps; findings first.', 'Read references/checklist.md before you start.'));
  await writeFile(join(workspace, '.claude/skills/code-review/references/checklist.md'), '- correctness\n- tests\n');
  await mkdir(join(workspace, '.agents/skills/broken'), { recursive: true });
  await writeFile(join(workspace, '.agents/skills/broken/SKILL.md'), skill('not-broken', 'A name that is not its folder.', 'x'));
  await mkdir(join(home, '.agents/skills/test-fix'), { recursive: true });
  await writeFile(join(home, '.agents/skills/test-fix/SKILL.md'), skill('test-fix', 'A user copy the project shadows.', 'user body'));
};

describe('Agent Skills', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let home: { path: string; remove: () => Promise<void> };
  let store: EventStore;
  let records: RecordEnvelope[] = [];

  beforeAll(async () => {
    workspace = await makeTempDir();
    home = await makeTempDir();
    await seed(workspace.path, home.path);
    store = createMemoryEventStore();
    const script = {
      turns: [
        { text: 'Loading the skill.', toolCalls: [{ name: 'skill', arguments: { name: 'test-fix' } }, { name: 'skill', arguments: { name: 'code-review', file: 'references/checklist.md' } }, { name: 'skill', arguments: { name: 'code-review', file: '../../../../etc/passwd' } }] },
        { text: 'Trying to write.', toolCalls: [{ name: 'write', arguments: { path: 'x.txt', content: 'x' } }, { name: 'grep', arguments: { pattern: 'x' } }] },
        { text: 'Done.' },
      ],
    };
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), skills: { home: home.path }, permissions: { approveAll: true } });
    const session = await rein.startSession({ task: 'fix the tests' });
    await session.whenQuiet();
    records = await store.read(session.id);
  });
  afterAll(async () => {
    await workspace.remove();
    await home.remove();
  });

  const settled = (index: number) => flattenRecords(records).filter((record) => record.type === 'tool.settled')[index]!.data as { name: string; status: string; errorCode?: string; observation: string };

  it('discovers project skills first, reports and skips a malformed one, and lets a project skill shadow the user\'s', async () => {
    const found = await discoverSkills({ workspace: workspace.path, options: { home: home.path }, known: (name) => ['read', 'grep'].includes(name) });
    expect(found.skills.map((entry) => [entry.name, entry.scope, entry.path])).toEqual([
      ['test-fix', 'project', '.agents/skills/test-fix/SKILL.md'],
      ['code-review', 'project', '.claude/skills/code-review/SKILL.md'],
    ]);
    expect(found.skills[0]!.allowedTools).toEqual(['read', 'grep']);
    expect(found.problems).toEqual([
      { source: '.agents/skills/broken/SKILL.md', reason: 'name "not-broken" must equal its folder\'s name "broken"' },
      { source: '~/.agents/skills/test-fix/SKILL.md', reason: 'skill "test-fix" is shadowed by .agents/skills/test-fix/SKILL.md' },
    ]);
  });

  it('keeps only the index resident: the first model input names the skills, never a body', async () => {
    const projected = flattenRecords(records).find((record) => record.type === 'context.projected')!;
    const input = Buffer.from(await store.readBlob(projected.stream, (projected.data as { input: string }).input as `artifact://${string}`)).toString('utf8');
    expect(input).toContain('test-fix: Fix failing tests');
    expect(input).toContain('code-review: Review a diff');
    expect(input).not.toContain(testFixBody);
    const catalog = flattenRecords(records).find((record) => record.type === 'capability.catalog')!.data as { skills: Array<{ name: string }>; problems: Array<{ source: string }> };
    expect(catalog.skills.map((entry) => entry.name)).toEqual(['test-fix', 'code-review']);
    expect(catalog.problems.map((problem) => problem.source)).toContain('.agents/skills/broken/SKILL.md');
  });

  it('loads a body on demand and records exactly what the model got, by digest; reads a skill file, never outside its folder', () => {
    const body = settled(0);
    expect(body.observation).toContain(testFixBody);
    const loaded = flattenRecords(records).filter((record) => record.type === 'capability.loaded').map((record) => record.data as CapabilityLoaded);
    expect(loaded[0]).toMatchObject({ kind: 'skill', name: 'test-fix', scope: 'project', allowedTools: ['read', 'grep'], digest: `b3:${blake3Text(body.observation)}`, chars: body.observation.length });
    expect(settled(1).observation).toBe('- correctness\n- tests\n');
    expect(loaded[1]).toMatchObject({ name: 'code-review', file: 'references/checklist.md' });
    expect(settled(2)).toMatchObject({ status: 'error', errorCode: 'NotFound' });
    expect(loaded).toHaveLength(2);
  });

  it('allowed-tools narrows the next round\'s tools (recorded as a diff), never widens them', () => {
    const narrowed = flattenRecords(records).filter((record) => record.type === 'capability.diff').map((record) => record.data as CapabilityDiff)[1]!;
    expect(narrowed.inputs.skill).toBe('test-fix');
    expect(narrowed.removed).toEqual(expect.arrayContaining([{ name: 'write', reason: 'skill' }, { name: 'bash', reason: 'skill' }]));
    expect(narrowed.removed.map((entry) => entry.name)).not.toContain('grep');
    expect(settled(3)).toMatchObject({ name: 'write', status: 'error', errorCode: 'Denied' });
    expect(settled(4)).toMatchObject({ name: 'grep', status: 'ok' });
    expect(verifyRecords('s', records).verified).toBeGreaterThan(0);
  });

  it('keeps the index within its budget with many skills, and says how many it left out', () => {
    const many = Array.from({ length: 300 }, (_, index) => ({ name: `skill-${index}`, description: 'd'.repeat(300), path: `.agents/skills/skill-${index}/SKILL.md`, scope: 'project' as const, root: '/x' }));
    const text = skillIndexText(many, 6_000);
    expect(text.length).toBeLessThanOrEqual(6_000);
    expect(text).toMatch(/\(\d+ more skills: find them with tool_search\)$/);
  });

  it('rein skills list shows every skill and why one was skipped', async () => {
    const listed = await runInProcess(['skills', 'list', '--json'], { cwd: workspace.path, env: { HOME: home.path } });
    expect(listed.code).toBe(0);
    const lines = jsonLines(listed.stdout);
    expect(lines.filter((line) => line.name).map((line) => line.name)).toEqual(['test-fix', 'code-review']);
    expect(lines.filter((line) => line.problem).map((line) => line.problem.source)).toEqual(['.agents/skills/broken/SKILL.md', '~/.agents/skills/test-fix/SKILL.md']);
  });
});

describe('the SKILL.md format', () => {
  const cases: Array<[string, string, string | true]> = [
    ['valid', skill('a-b-1', 'Does a thing.', 'body', 'compatibility: node 20\nmetadata:\n  owner: team\n'), true],
    ['no frontmatter', '# just markdown', 'SKILL.md must start with YAML frontmatter between --- lines'],
    ['upper case name', skill('Ab', 'x', 'b'), 'name "Ab" may only hold lowercase letters, digits and single hyphens, not at the start or end'],
    ['double hyphen', skill('a--b', 'x', 'b'), 'name "a--b" may only hold lowercase letters, digits and single hyphens, not at the start or end'],
    ['long name', skill('a'.repeat(65), 'x', 'b'), 'name is 65 characters; at most 64'],
    ['no description', '---\nname: a\n---\nbody', 'description is required'],
    ['long description', skill('a', 'x'.repeat(1025), 'b'), 'description is 1025 characters; at most 1,024'],
    ['bad yaml', '---\nname: a\ndescription: [unclosed\n  - x\n---\n', 'the frontmatter is not valid YAML'],
    ['unquoted colon in a flat frontmatter', skill('a', 'Fix tests: reproduce, then verify.', 'b'), true],
    ['metadata not strings', skill('a', 'x', 'b', 'metadata:\n  n: 1\n'), 'metadata values must be strings'],
  ];
  for (const [label, text, expected] of cases) {
    it(label, () => {
      if (label.startsWith('unquoted')) {
        expect(parseSkillDocument(text, 'a')).toMatchObject({ ok: true, value: { description: 'Fix tests: reproduce, then verify.' } });
        return;
      }
      const folder = label === 'valid' ? 'a-b-1' : label === 'long name' ? 'a'.repeat(65) : label === 'upper case name' ? 'Ab' : label === 'double hyphen' ? 'a--b' : 'a';
      const parsed = parseSkillDocument(text, folder);
      if (expected === true) expect(parsed).toMatchObject({ ok: true, value: { name: 'a-b-1', compatibility: 'node 20', metadata: { owner: 'team' } } });
      else expect(parsed.ok ? 'ok' : parsed.reason).toContain(expected);
    });
  }
});

describe('skills reached through a link (trial 7 G16)', () => {
  it('a project skill folder or SKILL.md linking outside is a problem; none of its text reaches the index', async () => {
    const workspace = await makeTempDir('rein-skill-links-');
    const outside = await makeTempDir('rein-skill-outside-');
    const home = await makeTempDir('rein-skill-home-');
    try {
      await writeFile(join(outside.path, 'loose.md'), skill('y', 'the outside secret is OUTSIDE_SECRET_42', 'OUTSIDE_BODY'));
      await mkdir(join(outside.path, 'z'));
      await writeFile(join(outside.path, 'z', 'SKILL.md'), skill('z', 'OUTSIDE_DIR_DESCRIPTION', 'OUTSIDE_DIR_BODY'));
      await mkdir(join(workspace.path, '.agents/skills/y'), { recursive: true });
      await symlink(join(outside.path, 'loose.md'), join(workspace.path, '.agents/skills/y/SKILL.md'));
      await symlink(join(outside.path, 'z'), join(workspace.path, '.agents/skills/z'));
      // A link that stays inside the workspace is fine.
      await mkdir(join(workspace.path, 'docs/skills/w'), { recursive: true });
      await writeFile(join(workspace.path, 'docs/skills/w/SKILL.md'), skill('w', 'kept inside', 'inside body'));
      await symlink(join(workspace.path, 'docs/skills/w'), join(workspace.path, '.agents/skills/w'));
      const found = await discoverSkills({ workspace: workspace.path, options: { home: home.path }, known: () => true });
      expect(found.skills.map((entry) => entry.name)).toEqual(['w']);
      expect(found.problems).toEqual([
        { source: '.agents/skills/y/SKILL.md', reason: "SKILL.md links outside the skill's folder; it is not read" },
        { source: '.agents/skills/z/SKILL.md', reason: 'the skill folder links outside the workspace; it is not loaded' },
      ]);
      expect(JSON.stringify(found)).not.toMatch(/OUTSIDE_/);
      const listed = await runInProcess(['skills', 'list', '--json'], { cwd: workspace.path, env: { HOME: home.path, REIN_CONFIG_HOME: join(home.path, '.config') } });
      expect(listed.stdout).not.toMatch(/OUTSIDE_/);
    } finally {
      await workspace.remove();
      await outside.remove();
      await home.remove();
    }
  });
});
