import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream, type ClientConnection, type ClientContext, type RequestPermissionRequest, type SessionNotification, type SessionUpdate } from '@agentclientprotocol/sdk';
import { cliPath } from './cli.js';

/** How the test's editor answers a permission request (an option id, or `cancelled`), from what was asked. */
export type PermissionAnswer = (request: RequestPermissionRequest) => string | 'cancelled' | Promise<string | 'cancelled'>;

/** `rein acp` as a child process, driven by the SDK's client side over its stdin and stdout, as an editor does. */
export interface AcpEditor {
  agent: ClientContext;
  connection: ClientConnection;
  child: ChildProcess;
  /** Every `session/update` received, in order, with its session. */
  updates: SessionNotification[];
  /** Every permission request received, in order. */
  asked: RequestPermissionRequest[];
  /** What the editor answers to the next permission request (default: allow once). */
  answer: PermissionAnswer;
  /** The updates of one session (optionally from index `from` of `updates`). */
  updatesOf(sessionId: string, from?: number): SessionUpdate[];
  stderr(): string;
  /** Close stdin (the editor went away) and wait for the process to exit. */
  close(): Promise<number | null>;
}

/** Start `rein acp <args>` in `cwd` and connect to it (initialized). */
export const startAcp = async (args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<AcpEditor> => {
  const child = spawn(process.execPath, [cliPath, 'acp', ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const updates: SessionNotification[] = [];
  const asked: RequestPermissionRequest[] = [];
  const editor: Partial<AcpEditor> & { answer: PermissionAnswer } = { answer: () => 'allow-once' };
  const app = client({ name: 'rein-tests' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      asked.push(params);
      const answer = await editor.answer(params);
      return answer === 'cancelled' ? { outcome: { outcome: 'cancelled' } } : { outcome: { outcome: 'selected', optionId: answer } };
    });
  const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>);
  const connection = app.connect(stream);
  await connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
  return Object.assign(editor, {
    agent: connection.agent,
    connection,
    child,
    updates,
    asked,
    updatesOf: (sessionId: string, from = 0) => updates.slice(from).filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update),
    stderr: () => stderr,
    close: async () => {
      child.stdin!.end();
      return exited;
    },
  }) as AcpEditor;
};

/**
 * Updates as an editor shows them: consecutive text chunks of the same kind joined into one (a live turn streams the
 * text in pieces, a load sends it whole). What a live turn and a load of its log must agree on.
 */
export const coalesced = (updates: readonly SessionUpdate[]): SessionUpdate[] => {
  const out: SessionUpdate[] = [];
  for (const update of updates) {
    const last = out[out.length - 1];
    const chunk = update.sessionUpdate === 'agent_message_chunk' || update.sessionUpdate === 'agent_thought_chunk' || update.sessionUpdate === 'user_message_chunk';
    if (chunk && last?.sessionUpdate === update.sessionUpdate && last.content.type === 'text' && update.content.type === 'text') {
      out[out.length - 1] = { ...last, content: { type: 'text', text: last.content.text + update.content.text } };
    } else out.push(update);
  }
  return out;
};
