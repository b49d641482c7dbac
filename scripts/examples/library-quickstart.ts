import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRein, entriesOf, openLevelEventStore, createScriptedProvider, parseScript } from '../../src/index.js';

const workspace = await mkdtemp(join(tmpdir(), 'rein-example-'));
const store = await openLevelEventStore(join(workspace, '.rein'));
const rein = await createRein({
  store,
  workspace,
  provider: createScriptedProvider(parseScript({ turns: [{ text: 'Done.' }] })),
});
const session = await rein.createSession({ task: 'say hello' });
// A step record holds what its step derived (transitions, intents, `session.ended`, …): `entriesOf` lists them.
session.records$.subscribe((record) => entriesOf(record).forEach((entry) => console.log(entry.seq, entry.type)));
await session.send('say hello');
const result = await session.whenQuiet();
await rein.replaySession(session.id);
console.log(result.status);
await store.close();
