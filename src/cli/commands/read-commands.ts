import type { Command } from 'commander';
import { ReinError } from '../../host/host-errors.js';
import { listSessions } from '../../session/session-catalog.js';
import { replaySession } from '../../session/replay-session.js';
import { forkSession } from '../../session/fork-session.js';
import { dryRunSession } from '../../session/dry-run.js';
import { decideWithPolicy } from '../../session/dry-run-permission.js';
import { PermissionPolicy } from '../../policy/permission-policy.js';
import { addPermissionOptions, permissionsOf, type PermissionOptions } from '../permission-options.js';
import { readSession } from '../../session/session-records.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import { ToolRegistry } from '../../tools/tool-registry.js';
import { openStore, printJson, workspaceOf, type CommonOptions } from '../cli-context.js';
import { transcriptLine } from '../transcript.js';
import { addCommonOptions } from './run.command.js';

const withStore = async <T>(options: CommonOptions, mode: 'read' | 'write' | 'read-only', work: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> => {
  const store = await openStore(options, await workspaceOf(options), mode);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
};

/** `rein sessions`, `rein show`, `rein replay`, `rein fork`: commands that read (or fork) recorded sessions. */
export const registerReadCommands = (program: Command): void => {
  addCommonOptions(program.command('sessions').description('list the sessions in the store')).action((options: CommonOptions) =>
    withStore(options, 'read', async (store) => {
      const sessions = await listSessions(store);
      if (options.json) return sessions.forEach(printJson);
      if (sessions.length === 0) return void process.stdout.write('no sessions\n');
      for (const session of sessions) {
        const fork = session.forkedFrom ? ` (fork of ${session.forkedFrom.stream}@${session.forkedFrom.seq})` : '';
        process.stdout.write(`${session.id}  ${session.status.padEnd(16)} ${String(session.head).padStart(6)} records  ${session.task.slice(0, 60)}${fork}\n`);
      }
    }),
  );

  addCommonOptions(program.command('show').description('print a session transcript (every record with --json)').argument('<id>', 'session id')).action((id: string, options: CommonOptions) =>
    withStore(options, 'read', async (store) => {
      const records = await store.read(id);
      if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
      for (const record of records) {
        if (options.json) printJson(record);
        else {
          const line = transcriptLine(record);
          if (line) process.stdout.write(`${line}\n`);
        }
      }
    }),
  );

  addPermissionOptions(
    addCommonOptions(
      program
        .command('replay')
        .description('verify a session by replaying its log (runs no tools and no model)')
        .argument('<id>', 'session id')
        .option('--dry-run', "re-evaluate every recorded tool call under today's tools and policy (the permission flags say which); execute nothing"),
    ),
  ).action((id: string, options: CommonOptions & PermissionOptions & { dryRun?: boolean }) =>
    withStore(options, options.dryRun ? 'read-only' : 'read', async (store) => {
      if (options.dryRun) {
        const workspace = await workspaceOf(options);
        const decide = decideWithPolicy(new PermissionPolicy(permissionsOf(options)), workspace);
        const report = dryRunSession(await readSession(store, id), { registry: new ToolRegistry(builtinTools()), decide });
        if (options.json) return report.calls.forEach(printJson);
        for (const call of report.calls) {
          const then = `${call.then.validation}${call.then.permission ? `/${call.then.permission}` : ''}${call.then.status ? ` → ${call.then.status}${call.then.errorCode ? ` ${call.then.errorCode}` : ''}` : ''}`;
          const now = `${call.now.validation}${call.now.permission ? `/${call.now.permission}` : ''}`;
          process.stdout.write(`#${call.seq} ${call.name} ${call.callId}: then ${then} · now ${now}${call.changed ? ` · CHANGED: ${call.reasons.join('; ')}` : ''}\n`);
        }
        process.stdout.write(`${report.calls.length} recorded tool calls, ${report.changed} would now be decided differently${report.permissionEvaluated ? '' : ' (validation only: no permission policy in this build)'}; nothing was executed\n`);
        return;
      }
      const result = await replaySession(store, id);
      if (options.json) printJson({ sessionId: id, verified: result.records, regenerated: result.verified, inputs: result.inputs, head: result.head });
      else process.stdout.write(`verified ${result.records} records (${result.inputs} inputs re-applied, ${result.verified} derived records regenerated and equal)\n`);
    }),
  );

  addCommonOptions(program.command('fork').description('fork a session at a seq into a new session').argument('<id>', 'session id').requiredOption('--at <seq>', 'the last seq the fork keeps')).action(
    (id: string, options: CommonOptions & { at: string }) =>
      withStore(options, 'write', async (store) => {
        const atSeq = Number(options.at);
        if (!Number.isInteger(atSeq)) throw new ReinError('USAGE', `--at must be an integer seq, got ${JSON.stringify(options.at)}`);
        const forkId = await forkSession(store, id, atSeq);
        if (options.json) printJson({ sessionId: forkId, parent: id, atSeq });
        else process.stdout.write(`${forkId}\n`);
      }),
  );
};
