import { main as delegation } from './delegation.bench.js';
import { main as append } from './append.bench.js';
import { main as provider } from './provider.bench.js';
import { main as replay } from './replay.bench.js';
import { main as step } from './step.bench.js';
import { main as projections } from './projections.bench.js';
import { main as tools } from './tools.bench.js';
import { main as memory } from './memory.bench.js';
import { main as cliStartup } from './cli-startup.bench.js';

/** `npm run bench`: every benchmark in turn; each prints its figures and the ratio against its same-run baseline. */
await append();
process.stdout.write('\n');
await step();
process.stdout.write('\n');
await replay();
process.stdout.write('\n');
await provider();
process.stdout.write('\n');
await projections();
process.stdout.write('\n');
await tools();
process.stdout.write('\n');
await memory();
process.stdout.write('\n');
await cliStartup();
process.stdout.write('\n');
await delegation();
