import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOtlpExporter, createRein, createScriptedProvider, exportSessionSpans, openLevelEventStore, parseScript } from '../../src/index.js';

// Usage: node dist/scripts/examples/telemetry-export.js <collector base url, e.g. http://127.0.0.1:4318>
const endpoint = process.argv[2] ?? 'http://127.0.0.1:4318';
const workspace = await mkdtemp(join(tmpdir(), 'rein-telemetry-'));
await writeFile(join(workspace, 'notes.txt'), 'remember the milk\n');
const store = await openLevelEventStore(join(workspace, '.rein'));
const rein = await createRein({
  store,
  workspace,
  provider: createScriptedProvider(parseScript({ turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] }, { text: 'Done.' }] })),
  telemetry: { exporter: await createOtlpExporter({ endpoint }), captureContent: true, secrets: ['milk'] },
});
const session = await rein.startSession({ task: 'read the notes' });
console.log((await session.whenQuiet()).status);
console.log(await rein.telemetry!.shutdown(2_000)); // { ended, exported, dropped, … }: every span went as it ended

// The same spans again, with the same ids, from the log (to a second collector, a file, a test exporter…).
console.log(await exportSessionSpans(store, session.id, { exporter: await createOtlpExporter({ endpoint }) }));
await store.close();
