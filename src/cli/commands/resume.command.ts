import type { Command } from 'commander';
import { SessionCreated } from '../../../models/session.records.js';
import { ReinError } from '../../host/host-errors.js';
import { createRein } from '../../rein.js';
import { openStore, protectedPathsOf, workspaceOf, type CommonOptions } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { addProviderOptions, buildProvider, providerSettingsFor, type ProviderFlags } from '../provider-options.js';
import { addCommonOptions, answeringOf } from './run.command.js';
import { addPermissionOptions, permissionsOf, sandboxOf, type PermissionOptions } from '../permission-options.js';

interface ResumeCommandOptions extends CommonOptions, ProviderFlags, PermissionOptions {
  yes?: boolean;
}

/**
 * `rein resume <id>`: rebuild a session from its log, resolve in-doubt effects by policy, and continue it with the
 * provider it was created with (name, model, endpoint or script; the key from the environment) unless flags say
 * otherwise.
 */
export const registerResume = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('resume')
    .description('continue a paused, interrupted or crashed session from its log')
    .argument('<id>', 'session id')
    .option('--yes', 'rerun in-doubt effects that need confirmation, and answer every approval request with yes');
  addPermissionOptions(addCommonOptions(addProviderOptions(command, 'scripted model (default: the script the session was started with)'))).action(async (id: string, options: ResumeCommandOptions) => {
    const workspace = await workspaceOf(options);
    const store = await openStore(options, workspace, 'write');
    try {
      const [first] = await store.read(id, { limit: 1 });
      if (!first) throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
      const created = SessionCreated.parse(first.data);
      const settings = await providerSettingsFor(options, workspace, created.provider);
      const { provider, fallbacks } = await buildProvider(settings, store);
      const rein = await createRein({ store, workspace, protectedPaths: protectedPathsOf(options, workspace), provider, fallbacks, modelOptions: settings.modelOptions, permissions: permissionsOf(options), sandbox: sandboxOf(options) });
      const { session, report } = await rein.resumeSession(id, { confirmInDoubt: Boolean(options.yes) });
      if (!options.json) {
        process.stdout.write(`rebuilt ${id}: verified ${report.verified} records${report.snapshotSeq ? ` from the snapshot at seq ${report.snapshotSeq}` : ''}\n`);
        if (report.snapshotRejected) process.stderr.write(`warning: ${report.snapshotRejected}; used a full replay\n`);
        for (const resolution of report.resolutions) process.stdout.write(`in doubt: ${resolution.effectId} (${resolution.kind}) → ${resolution.resolution}\n`);
      }
      if (report.alreadyEnded) {
        const result = session.result();
        if (!options.json) process.stdout.write(`session already ended: ${result.status}\n`);
        setExit(result.status === 'completed' ? ExitCode.ok : ExitCode.failed);
        return;
      }
      setExit(exitCodeOf(await runToQuiet(session, { json: Boolean(options.json), approvals: answeringOf(options) })));
    } finally {
      await store.close();
    }
  });
};
