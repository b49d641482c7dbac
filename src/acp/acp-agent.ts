import { realpath, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { agent, methods, PROTOCOL_VERSION, RequestError, type AgentApp, type AgentContext, type ContentBlock, type SessionModeState } from '@agentclientprotocol/sdk';
import { PermissionMode } from '../../models/permission.records.js';
import { newSessionId } from '../session/start-session.js';
import { loadUpdates } from './acp-updates.js';
import { acpError } from './acp-errors.js';
import { AcpHarnesses, type AcpOptions } from './acp-harness.js';
import { AcpSession, whenReleased } from './acp-session.js';

const modes: SessionModeState['availableModes'] = [
  { id: 'default', name: 'Default', description: 'read-only tools run; edits and commands ask first' },
  { id: 'accept-edits', name: 'Accept edits', description: 'edits in the workspace run without asking; commands still ask' },
  { id: 'plan', name: 'Plan', description: 'read-only tools only: nothing is changed' },
];

const modeState = (current: PermissionMode): SessionModeState => ({ currentModeId: current, availableModes: modes });

/**
 * The text of a prompt: text blocks as they are, a linked resource as a link, an embedded one (the editor's buffer
 * of a file the user referenced) quoted with its URI. Images and audio are not offered (`promptCapabilities`) and are
 * refused (-32602), and so is a prompt with nothing in it.
 */
export const promptText = (prompt: readonly ContentBlock[]): string => {
  const parts = prompt.map((block) => {
    if (block.type === 'text') return block.text;
    if (block.type === 'resource_link') return `[@${block.name}](${block.uri})`;
    if (block.type === 'resource') {
      const resource = block.resource;
      return 'text' in resource ? `<context ref="${resource.uri}">\n${resource.text}\n</context>` : `[attached ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}: binary, not shown]`;
    }
    throw RequestError.invalidParams({ reason: `${block.type} content is not supported (see promptCapabilities)` });
  });
  const text = parts.join('\n\n');
  if (text.trim() === '') throw RequestError.invalidParams({ reason: 'the prompt has no text' });
  return text;
};

/** The workspace a session's `cwd` names: an absolute path to an existing folder (its real path), else -32602. */
const workspaceOf = async (cwd: string): Promise<string> => {
  if (!isAbsolute(cwd)) throw RequestError.invalidParams({ reason: `cwd must be an absolute path, got ${JSON.stringify(cwd)}` });
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) throw RequestError.invalidParams({ reason: `cwd ${cwd} is not a folder` });
  return realpath(cwd);
};

/** Run a handler; whatever it throws reaches the client as a JSON-RPC error (never a crash). */
const answered = async <T>(work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (error) {
    throw acpError(error);
  }
};

/**
 * rein as an ACP agent (protocol version 1, the official SDK): `initialize`, `session/new`, `session/load`,
 * `session/prompt`, `session/cancel` and `session/set_mode`. Every session is a normal rein session in its
 * workspace's store. `close` interrupts what runs (resumable) and closes the stores.
 */
export const createAcpAgent = (options: AcpOptions): { app: AgentApp; close(reason?: string): Promise<void> } => {
  const harnesses = new AcpHarnesses(options);
  const sessions = new Map<string, AcpSession>();
  const initialMode = PermissionMode.safeParse(options.mode).success ? (options.mode as PermissionMode) : 'default';
  let connection: AgentContext | undefined;
  const client = (): AgentContext => {
    if (!connection) throw new Error('no client is connected');
    return connection;
  };
  const sessionOf = (sessionId: string): AcpSession => {
    const session = sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  };

  const app = agent({ name: 'rein' })
    .onConnect((opened) => {
      connection = opened.client;
    })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
      },
      agentInfo: { name: 'rein', title: 'rein', version: '0.1.0' },
      authMethods: [],
    }))
    .onRequest(methods.agent.session.new, ({ params }) =>
      answered(async () => {
        const workspace = await workspaceOf(params.cwd);
        const sessionId = newSessionId(Date.now());
        sessions.set(sessionId, new AcpSession(sessionId, workspace, { mode: initialMode, servers: params.mcpServers, exists: false, harnesses, client }));
        return { sessionId, modes: modeState(initialMode) };
      }),
    )
    .onRequest(methods.agent.session.load, ({ params }) =>
      answered(async () => {
        const workspace = await workspaceOf(params.cwd);
        const store = await harnesses.storeFor(workspace);
        if ((await store.head(params.sessionId)) === 0) throw RequestError.sessionNotFound(params.sessionId);
        // A session another process still runs is not this editor's to load: wait briefly for it, then say it is busy.
        const hold = store.hold ? await whenReleased(params.sessionId, () => store.hold!(params.sessionId)) : undefined;
        try {
          const records = await store.read(params.sessionId);
          const created = records[0]?.data as { workspace?: string; permissions?: { mode?: PermissionMode } } | undefined;
          if (created?.workspace !== workspace) throw RequestError.invalidParams({ reason: `session ${params.sessionId} ran in ${created?.workspace ?? 'another folder'}, not ${workspace}` });
          const mode = created.permissions?.mode ?? initialMode;
          const session = sessions.get(params.sessionId) ?? new AcpSession(params.sessionId, workspace, { mode, servers: params.mcpServers, exists: true, harnesses, client });
          sessions.set(params.sessionId, session);
          // The conversation so far, exactly as the log has it, before the answer.
          const loaded = loadUpdates(records, workspace);
          for (const update of loaded.updates) await client().notify(methods.client.session.update, { sessionId: params.sessionId, update });
          session.continueFrom(loaded.mapper);
          return { modes: modeState(session.mode) };
        } finally {
          await hold?.();
        }
      }),
    )
    .onRequest(methods.agent.session.prompt, ({ params }) =>
      answered(async () => {
        const session = sessionOf(params.sessionId);
        return { stopReason: await session.prompt(promptText(params.prompt)) };
      }),
    )
    .onRequest(methods.agent.session.setMode, ({ params }) =>
      answered(async () => {
        const session = sessionOf(params.sessionId);
        const mode = PermissionMode.safeParse(params.modeId);
        if (!mode.success) throw RequestError.invalidParams({ reason: `unknown mode ${JSON.stringify(params.modeId)}: ${modes.map((entry) => entry.id).join(', ')}` });
        // The next prompt runs under it (the session is resumed under the new mode, which its log records).
        session.mode = mode.data;
        await client().notify(methods.client.session.update, { sessionId: session.id, update: { sessionUpdate: 'current_mode_update', currentModeId: mode.data } });
        return {};
      }),
    )
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      void sessions.get(params.sessionId)?.cancel();
    });

  return {
    app,
    async close(reason = 'the editor closed the connection') {
      // Running turns are cancelled; the harnesses then interrupt every session still held (each stays resumable).
      for (const session of sessions.values()) await session.cancel();
      await harnesses.close(reason);
      for (const session of sessions.values()) await session.release();
    },
  };
};
