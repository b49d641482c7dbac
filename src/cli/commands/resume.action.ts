import { SessionCreated } from '../../../models/session.records.js';
import { ReinError } from '../../host/host-errors.js';
import { createRein } from '../../rein.js';
import { openStore, protectedPathsOf, workspaceOf } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { buildProvider, providerSettingsFor } from '../provider-options.js';
import { permissionsOf, sandboxOf } from '../permission-options.js';
import { answeringOf } from './run.action.js';
import type { ResumeCommandOptions } from './resume.command.js';
import { cliTelemetryFor } from '../telemetry-options.js';
import type { EventStore } from '../../../stores/event-store.js';
import type { HeldSession } from '../../worker/session-lease.js';
import { cliCapabilitiesFor } from '../capability-options.js';
import type { ReinSession } from '../../session/session-handle.js';
import type { ResumeReport } from '../../session/resume-session.js';

/** The body of `rein resume` (see `registerResume`). */
export const resumeCommand = async (id: string, options: ResumeCommandOptions, setExit: (code: number) => void): Promise<void> => {
  const workspace = await workspaceOf(options);
  const telemetry = await cliTelemetryFor(options);
  const store = await openStore(options, workspace, 'write');
  try {
    // A queued session (rein run --detach) is resumed under its lease, like a worker would run it.
    let interrupt: ((reason: string) => void) | undefined;
    const held = store.capabilities.fencing
      ? await (async () => {
          const [{ queueOf }, { holdQueuedSession }] = await Promise.all([import('../../worker/submit-session.js'), import('../../worker/session-lease.js')]);
          return holdQueuedSession({ queue: queueOf(store), store, session: id, onLost: (reason) => interrupt?.(reason) });
        })()
      : undefined;
    try {
      setExit(await resumeHere(id, options, { ...(held ? { store: held.store, effectGate: held.effectGate, held } : { store }), telemetry }, workspace, (stop) => (interrupt = stop)));
    } finally {
      held?.stop();
    }
  } finally {
    await telemetry?.finish();
    await store.close();
  }
};

const resumeHere = async (
  id: string,
  options: ResumeCommandOptions,
  context: { store: EventStore; effectGate?: () => Error | undefined; held?: HeldSession; telemetry: Awaited<ReturnType<typeof cliTelemetryFor>> },
  workspace: string,
  onInterrupt: (stop: (reason: string) => void) => void,
): Promise<number> => {
  const { store } = context;
  const [first] = await store.read(id, { limit: 1 });
  if (!first) throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
  const created = SessionCreated.parse(first.data);
  const settings = await providerSettingsFor(options, workspace, created.provider);
  const { provider, fallbacks } = await buildProvider(settings, store);
  const { mcpServers, capabilities } = await cliCapabilitiesFor(workspace, options);
  const rein = await createRein({ store, workspace, protectedPaths: await protectedPathsOf(options, workspace), provider, fallbacks, modelOptions: settings.modelOptions, permissions: permissionsOf(options), sandbox: sandboxOf(options), mcpServers, capabilities, ...(context.effectGate ? { effectGate: context.effectGate } : {}), ...context.telemetry?.reinOptions });
  context.telemetry?.attach(rein);
  const { session, report } = await rein.resumeSession(id, { confirmInDoubt: Boolean(options.yes) });
  // The session's MCP servers stop when this command is done with it, however it ends.
  try {
    return await continueResumed(id, session, report, options, context.held, onInterrupt);
  } finally {
    await session.release();
  }
};

/** Report what resume found and drive the session on (released by the caller). */
const continueResumed = async (id: string, session: ReinSession, report: ResumeReport, options: ResumeCommandOptions, held: HeldSession | undefined, onInterrupt: (stop: (reason: string) => void) => void): Promise<number> => {
  onInterrupt((reason) => void session.interrupt(reason).catch(() => undefined));
  if (!options.json) {
    process.stdout.write(`rebuilt ${id}: verified ${report.verified} records${report.snapshotSeq ? ` from the snapshot at seq ${report.snapshotSeq}` : ''}\n`);
    if (report.snapshotRejected) process.stderr.write(`warning: ${report.snapshotRejected}; used a full replay\n`);
    for (const resolution of report.resolutions) process.stdout.write(`in doubt: ${resolution.effectId} (${resolution.kind}) → ${resolution.resolution}\n`);
  }
  if (report.alreadyEnded) {
    const result = session.result();
    await held?.release(result);
    if (!options.json) process.stdout.write(`session already ended: ${result.status}\n`);
    return result.status === 'completed' ? ExitCode.ok : ExitCode.failed;
  }
  await held?.applyAnswers(session);
  const result = await runToQuiet(session, { json: Boolean(options.json), approvals: answeringOf(options) });
  await held?.release(result);
  return exitCodeOf(result);
};
