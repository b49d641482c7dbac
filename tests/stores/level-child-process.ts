import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const classicLevelPath = createRequire(import.meta.url).resolve('classic-level');
const builtStoreUrl = new URL('../../dist/stores/index.js', import.meta.url);

/** A raw LevelDB write for the holder process: a key and the stored bytes. */
export interface RawWrite {
  key: string;
  value: Uint8Array;
}

const HOLDER_SCRIPT = `
const { readFileSync } = require('node:fs');
const { ClassicLevel } = require(process.env.CLASSIC_LEVEL_PATH);
const config = JSON.parse(readFileSync(process.env.HOLDER_CONFIG, 'utf8'));
const database = new ClassicLevel(config.directory, { keyEncoding: 'utf8', valueEncoding: 'hex', writeBufferSize: 1024 * 1024 });
const apply = async (writes, sync) => {
  for (let start = 0; start < writes.length; start += 10) {
    const batch = writes.slice(start, start + 10).map((write) => ({ type: 'put', key: write.key, value: write.hex }));
    await database.batch(batch, { sync });
  }
};
(async () => {
  await database.open();
  process.stdin.on('end', () => database.close().then(() => process.exit(0)));
  process.stdin.resume();
  await apply(config.before, true);
  process.stdout.write('ready\\n');
  await apply(config.after, false);
  process.stdout.write('done\\n');
})().catch((error) => { console.error(error); process.exit(1); });
`;

/** A separate process holding a stream database open (and so its LevelDB lock). */
export interface StreamHolder {
  /** Resolves once the writes given as `after` are all applied. */
  done: Promise<void>;
  /** Closes the database and waits for the process to exit. */
  release(): Promise<void>;
}

const hexWrites = (writes: RawWrite[]) => writes.map((write) => ({ key: write.key, hex: Buffer.from(write.value).toString('hex') }));

/**
 * Starts a separate Node process that opens (and so locks) the LevelDB database in `directory` with classic-level,
 * applies `before` (synced, in batches of 10), reports ready, then applies `after` unsynced while the caller works, and
 * keeps the database open until `release`. `configFile` is a scratch path for passing the writes.
 */
export async function holdStreamInAnotherProcess(options: {
  directory: string;
  configFile: string;
  before: RawWrite[];
  after?: RawWrite[];
}): Promise<StreamHolder> {
  const config = { directory: options.directory, before: hexWrites(options.before), after: hexWrites(options.after ?? []) };
  await writeFile(options.configFile, JSON.stringify(config));
  const child = spawn(process.execPath, ['-e', HOLDER_SCRIPT], {
    env: { ...process.env, CLASSIC_LEVEL_PATH: classicLevelPath, HOLDER_CONFIG: options.configFile },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  const printed = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => output.includes(word) && resolve();
      child.stdout.on('data', check);
      check();
      void exited.then((code) => reject(new Error(`the holder process exited with ${String(code)} before '${word}'`)));
    });
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  await printed('ready');
  const done = printed('done');
  done.catch(() => undefined);
  return {
    done,
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const WRITER_SCRIPT = `
const { openLevelEventStore } = await import(process.env.BUILT_STORE_URL);
const store = await openLevelEventStore(process.env.STORE_ROOT, { durability: 'relaxed', groupCommitIntervalMs: 1000 });
const count = Number(process.env.APPEND_COUNT);
const draft = (index) => ({ id: 'r-' + index, type: 'test.recorded', v: 1, at: index, actor: 'root', data: { index } });
for (let head = 0; head < count; head++) {
  await store.append('s', [draft(head + 1)], { expectedSeq: head });
  process.stdout.write('ack ' + (head + 1) + '\\n');
}
void store.append('s', [draft(count + 1)], { expectedSeq: count });
setImmediate(() => process.kill(process.pid, 'SIGKILL'));
`;

/**
 * Runs the built store (dist/) in a child process that appends `count` records in relaxed mode, acknowledging each on
 * stdout, then SIGKILLs itself with one more append in flight. Resolves with the highest acknowledged seq.
 */
export async function runBuiltStoreInChild(root: string, count: number): Promise<number> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER_SCRIPT], {
    env: {
      ...process.env,
      BUILT_STORE_URL: builtStoreUrl.href,
      STORE_ROOT: root,
      APPEND_COUNT: String(count),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, killed) => resolve(killed)));
  if (signal !== 'SIGKILL') throw new Error(`the writer process ended without being killed: ${String(signal)}`);
  const acks = [...output.matchAll(/ack (\d+)/g)].map((match) => Number(match[1]));
  return Math.max(0, ...acks);
}
