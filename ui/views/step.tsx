import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { Source } from '../source.js';
import type { ContextBody, PageRecord, TimelineStep } from '../types.js';
import { Badge, pretty, Section } from '../format.js';
import { diffLines, hunks, type DiffLine } from '../diff.js';
import { flattenRecords } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

const MAX_TEXT = 20_000;

/** Long text, cut with a control to show the rest. */
const Text = ({ text }: { text: string }) => {
  const [all, setAll] = useState(false);
  return (
    <pre class="text">
      {all || text.length <= MAX_TEXT ? text : text.slice(0, MAX_TEXT)}
      {!all && text.length > MAX_TEXT ? (
        <button class="link" onClick={() => setAll(true)}>
          … show all {text.length.toLocaleString()} characters
        </button>
      ) : null}
    </pre>
  );
};

/** A diff as changed lines with a little context (`…` folds the rest). */
export const Diff = ({ lines }: { lines: readonly DiffLine[] }) => (
  <pre class="diff" data-testid="diff">
    {hunks(lines).map((line) =>
      line.kind === 'fold' ? (
        <div class="fold">… {line.count} unchanged lines</div>
      ) : (
        <div class={`line ${line.kind}`}>
          {line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  '}
          {line.text}
        </div>
      ),
    )}
  </pre>
);

const Field = ({ name, children }: { name: string; children: ComponentChildren }) => (
  <div class="field">
    <span class="name">{name}</span>
    <span class="value">{children}</span>
  </div>
);

/** A model input as lines: one block per message (role, then content), for reading and diffing. */
const inputText = (input: ContextBody['input']): string =>
  input.messages
    .map((message) => {
      const content = (message as { content?: unknown }).content;
      const calls = (message as { toolCalls?: unknown }).toolCalls;
      return `── ${message.role}${(message as { toolCallId?: string }).toolCallId ? ` (${(message as { toolCallId?: string }).toolCallId})` : ''}\n${typeof content === 'string' ? content : pretty(content)}${calls ? `\n${pretty(calls)}` : ''}`;
    })
    .join('\n');

const ContextSection = ({ context }: { context: ContextBody }) => {
  const { ledger } = context;
  const [showDiff, setShowDiff] = useState(true);
  const text = inputText(context.input);
  return (
    <Section title={`model input of ${context.actor} turn ${context.turn}${context.reconstructed ? ' (reconstructed: this log predates recorded inputs)' : ''}`}>
      <div class="fields">
        <Field name="tokens">{String(ledger.estimatedTokens ?? '')} of {String((ledger.budget as { total?: number } | undefined)?.total ?? '?')} (tokenizer {String(ledger.tokenizer ?? '')})</Field>
        <Field name="phase">{String(ledger.phase ?? '')}</Field>
        <Field name="compaction">level {String(ledger.compactionLevel ?? 0)}</Field>
        {context.seq ? <Field name="recorded">#{context.seq}</Field> : null}
      </div>
      <table class="parts" data-testid="context-parts">
        <thead>
          <tr>
            <th>part</th>
            <th>mode</th>
            <th>trust</th>
            <th>tokens</th>
            <th>why</th>
            <th>refs</th>
          </tr>
        </thead>
        <tbody>
          {(ledger.included ?? []).map((part) => (
            <tr>
              <td>{part.source}</td>
              <td>{part.mode}</td>
              <td>{part.trust}</td>
              <td class="num">{part.tokens}</td>
              <td>{part.reason}</td>
              <td class="refs">{part.refs.slice(0, 8).join(' ')}{part.refs.length > 8 ? ' …' : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {(ledger.excluded ?? []).length > 0 || (ledger.compacted ?? []).length > 0 ? (
        <div class="dropped" data-testid="context-dropped">
          <h4>dropped or summarised by the context policy</h4>
          <ul>
            {(ledger.excluded ?? []).map((entry) => (
              <li>
                <Badge kind="dropped" value={entry.reason} /> {entry.count} × {entry.source}
                {entry.detail ? ` — ${entry.detail}` : ''} <span class="refs">{entry.refs.slice(0, 6).join(' ')}</span>
              </li>
            ))}
            {(ledger.compacted ?? []).map((entry) => (
              <li>
                <Badge kind="dropped" value="summarised" /> {entry.count} records as {entry.summaryId}: {entry.reason}
                {entry.keeps.length > 0 ? ` (kept verbatim: ${entry.keeps.map((keep) => keep.text).join('; ')})` : ''}
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <p class="muted">the policy dropped and summarised nothing for this input</p>
      )}
      {context.previous ? (
        <div>
          <label class="toggle">
            <input type="checkbox" checked={showDiff} onChange={() => setShowDiff(!showDiff)} /> diff against turn {context.previous.turn}'s input
          </label>
          {showDiff ? <Diff lines={diffLines(inputText(context.previous.input), text)} /> : <Text text={text} />}
        </div>
      ) : (
        <Text text={text} />
      )}
      <p class="muted">{context.input.tools.length} tools offered: {context.input.tools.map((tool) => tool.name).join(', ')}</p>
    </Section>
  );
};

/** What a call's arguments change, as a diff when it is an edit or a write. */
const ArgumentsView = ({ name, args }: { name: string; args: Record<string, unknown> }) => {
  if (typeof args.old_string === 'string' && typeof args.new_string === 'string') return (
    <div>
      <Field name="file">{String(args.path ?? args.file_path ?? '')}</Field>
      <Diff lines={diffLines(args.old_string, args.new_string)} />
    </div>
  );
  if (name === 'write' && typeof args.content === 'string') return (
    <div>
      <Field name="file">{String(args.path ?? '')}</Field>
      <Diff lines={diffLines('', args.content)} />
    </div>
  );
  return <pre class="text">{pretty(args)}</pre>;
};

/** One path of a `workspace.changed` record (the viewer reads the log's JSON as it is). */
interface PathChange {
  path: string;
  before?: { type: string; content?: string; size?: number; target?: string; unrestorable?: boolean };
  after?: PathChange['before'];
  from?: string;
  to?: string;
}

/** A changed path's kind, as `rein show` says it. */
const changeKind = (change: PathChange): string => (!change.before ? (change.from !== undefined ? `renamed from ${change.from}` : 'created') : !change.after ? 'deleted' : change.before.type !== change.after.type ? 'type changed' : change.before.content === change.after.content && change.before.target === change.after.target ? 'mode' : 'modified');

/** One file a call changed, with its diff on demand (both contents fetched as blobs; a binary or uncaptured one is named, not shown). */
const ChangedFile = ({ source, sessionId, change }: { source: Source; sessionId: string; change: PathChange }) => {
  const [shown, setShown] = useState<DiffLine[] | string | undefined>(undefined);
  const textOf = (entry: PathChange['before']): Promise<string> =>
    entry?.type === 'file' ? (entry.unrestorable ? Promise.reject(new Error(`above the size cap (${entry.size} bytes): not stored`)) : source.blob(sessionId, entry.content ?? '')) : Promise.resolve(entry?.type === 'symlink' ? `→ ${entry.target}` : '');
  const show = () =>
    Promise.all([textOf(change.before), textOf(change.after)]).then(
      ([before, after]) => setShown(before.includes('\u0000') || after.includes('\u0000') ? 'binary file' : diffLines(before, after)),
      (error: Error) => setShown(error.message),
    );
  const diffable = change.before?.type !== 'dir' && change.after?.type !== 'dir';
  return (
    <div data-testid="changed-file">
      <code>{change.path}</code> <span class="muted">{changeKind(change)}</span>{' '}
      {diffable && shown === undefined ? (
        <button class="link" onClick={show}>
          diff
        </button>
      ) : null}
      {shown === undefined ? null : typeof shown === 'string' ? <span class="muted">{shown}</span> : <Diff lines={shown} />}
    </div>
  );
};

/** The files a call changed in the workspace (its `workspace.changed`: whatever made them, a `bash` command included). */
const ChangedFiles = ({ source, sessionId, records }: { source: Source; sessionId: string; records: readonly PageRecord[] }) => {
  const changes = records.filter((record) => record.type === 'workspace.changed').flatMap((record) => ((record.data.changes ?? []) as PathChange[]).filter((change) => change.to === undefined || change.after !== undefined));
  if (changes.length === 0) return null;
  return (
    <div class="fields" data-testid="files-changed">
      <Field name="files changed">
        {changes.map((change) => (
          <ChangedFile source={source} sessionId={sessionId} change={change} />
        ))}
      </Field>
    </div>
  );
};

const CallView = ({ source, sessionId, callId, records, sandbox }: { source: Source; sessionId: string; callId: string; records: readonly PageRecord[]; sandbox: PageRecord | undefined }) => {
  const of = (type: string) => records.filter((record) => record.type === type);
  const requested = of('effect.requested').map((record) => record.data.args as { name?: string; arguments?: Record<string, unknown> }).find((args) => args?.name);
  const settled = of('tool.settled').at(-1)?.data as { status?: string; errorCode?: string; observation?: string; execution?: { exitCode?: number | null; durationMs?: number; timedOut?: string; signal?: string }; artifacts?: string[]; denial?: unknown; elapsedMs?: number } | undefined;
  const permission = of('permission.decided').at(-1)?.data as { decision?: string; rule?: string | null; reason?: string; mode?: string; source?: string; classes?: string[] } | undefined;
  const started = of('tool.started').at(-1)?.data as { intent?: Record<string, unknown> } | undefined;
  const name = String(requested?.name ?? settled?.observation ?? callId);
  const [artifact, setArtifact] = useState<string | undefined>(undefined);
  return (
    <div class="call" data-call={callId}>
      <h4>
        {requested?.name ?? 'call'} <span class="muted">{callId}</span> {settled ? <Badge kind="result" value={settled.status ?? ''} /> : <Badge kind="result" value="running" />}
      </h4>
      {requested ? <ArgumentsView name={name} args={requested.arguments ?? {}} /> : null}
      {permission ? (
        <div class="fields" data-testid="permission">
          <Field name="permission">
            <Badge kind="permission" value={permission.decision ?? ''} /> rule {permission.rule ?? 'none'} · {permission.reason} · mode {permission.mode} · by {permission.source}
            {permission.classes ? ` · ${permission.classes.join(', ')}` : ''}
          </Field>
        </div>
      ) : null}
      {of('approval.requested').map((record) => (
        <Field name="approval asked">
          risk {String(record.data.risk)} · {String(record.data.reason)}
          {record.data.suggestedRule ? ` · would grant ${String(record.data.suggestedRule)}` : ''}
        </Field>
      ))}
      {of('approval.replied').map((record) => (
        <Field name="answered">
          <Badge kind="approval" value={String(record.data.decision)} /> {record.data.feedback ? String(record.data.feedback) : ''}
          {record.data.rule ? ` (granted ${String(record.data.rule)})` : ''}
        </Field>
      ))}
      {started?.intent ? (
        <Field name="ran">
          {pretty(started.intent)}
          {sandbox ? ` · sandbox ${String(sandbox.data.enforcement)} (${String(sandbox.data.mode)}), network ${String(sandbox.data.network)}` : ''}
        </Field>
      ) : null}
      {settled?.execution ? (
        <Field name="command">
          exit {String(settled.execution.exitCode)} · {settled.execution.durationMs ?? settled.elapsedMs} ms{settled.execution.timedOut ? ` · timed out (${settled.execution.timedOut})` : ''}
          {settled.execution.signal ? ` · signal ${settled.execution.signal}` : ''}
        </Field>
      ) : null}
      <ChangedFiles source={source} sessionId={sessionId} records={records} />
      {of('verification.recorded').map((record) => (
        <Field name="verification">
          <Badge kind="verification" value={String(record.data.status)} /> {String(record.data.command ?? record.data.name)} · {String(record.data.summary ?? '')}
        </Field>
      ))}
      {settled ? (
        <div>
          {settled.errorCode ? <Field name="error">{settled.errorCode}</Field> : null}
          <Text text={settled.observation ?? ''} />
          {(settled.artifacts ?? []).map((ref) => (
            <button class="link" onClick={() => source.blob(sessionId, ref).then(setArtifact, (error: Error) => setArtifact(error.message))}>
              full output {ref.slice(0, 40)}…
            </button>
          ))}
          {artifact !== undefined ? <Text text={artifact} /> : null}
        </div>
      ) : null}
    </div>
  );
};

/** Records the step view has no dedicated rendering for (including types newer than this page): shown as they are. */
const RecordList = ({ records }: { records: readonly PageRecord[] }) => (
  <ul class="records">
    {records.map((record) => (
      <li>
        <details>
          <summary>
            <span class="seq">#{record.seq}</span> <code>{record.type}</code> <span class="muted">{record.actor}</span>
          </summary>
          <pre class="text">{pretty(record.data)}</pre>
        </details>
      </li>
    ))}
  </ul>
);

/**
 * One step exactly as it was: for a model turn, the input rein projected (each part with its tokens, what the context
 * policy dropped or summarised and why, a diff against the previous turn's input), the reply and reasoning, then each
 * tool call (arguments, edits as diffs, the permission decision and its rule, the sandbox, the command's exit and
 * output, verification); every record of the step's seq range below, fetched by range.
 */
export const StepPanel = ({ source, sessionId, step, sandbox, onFork }: { source: Source; sessionId: string; step: TimelineStep; sandbox: PageRecord | undefined; onFork?: (at: number) => void }) => {
  const [records, setRecords] = useState<PageRecord[] | undefined>(undefined);
  const [context, setContext] = useState<ContextBody | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    setRecords(undefined);
    setContext(undefined);
    setProblem(undefined);
    source.records(sessionId, step.seq, step.to).then((page) => !stopped && setRecords(page.records), (error: Error) => !stopped && setProblem(error.message));
    if (step.kind === 'turn' && step.turn !== undefined) source.context(sessionId, step.actor, step.turn).then((found) => !stopped && setContext(found), (error: Error) => !stopped && setProblem(error.message));
    return () => {
      stopped = true;
    };
  }, [source, sessionId, step.seq, step.to, step.kind, step.turn, step.actor]);
  // A step record is read as the records it stands for (its intents, its folded facts), in the order they happened.
  const entries = records ? (flattenRecords(records as unknown as RecordEnvelope[]) as unknown as PageRecord[]) : undefined;
  const reply = entries?.find((record) => record.type === 'model.responded');
  const calls = new Map<string, PageRecord[]>();
  for (const record of entries ?? []) if (record.corr && (step.callId === undefined || record.corr === step.callId)) calls.set(record.corr, [...(calls.get(record.corr) ?? []), record]);
  return (
    <div class="step-panel" data-testid="step" data-step-kind={step.kind}>
      <div class="step-head">
        <h3>
          {step.kind} · {step.actor} · #{step.seq}
          {step.to !== step.seq ? `..#${step.to}` : ''}
        </h3>
        {step.findings?.map((finding) => <Badge kind="finding" value={finding} />)}
        {onFork && step.forkAt !== undefined ? (
          <button onClick={() => onFork(step.forkAt!)} title={`a new session with records 1..#${step.forkAt}: this step is redone from there`}>
            fork here (#{step.forkAt})
          </button>
        ) : null}
      </div>
      <p class="label">{step.label}</p>
      {problem ? <p class="error">{problem}</p> : null}
      {context ? <ContextSection context={context} /> : null}
      {reply ? (
        <Section title="the model's reply">
          {reply.data.reasoning ? (
            <details>
              <summary>reasoning</summary>
              <Text text={String(reply.data.reasoning)} />
            </details>
          ) : null}
          <Text text={String(reply.data.text ?? '')} />
          <p class="muted">
            stop {String(reply.data.stopReason)} · {String((reply.data.usage as { inputTokens?: number })?.inputTokens ?? 0)} in / {String((reply.data.usage as { outputTokens?: number })?.outputTokens ?? 0)} out tokens · {String(reply.data.elapsedMs)} ms
          </p>
        </Section>
      ) : null}
      {calls.size > 0 ? (
        <Section title={`tool calls (${calls.size})`}>
          {[...calls].map(([callId, group]) => (
            <CallView source={source} sessionId={sessionId} callId={callId} records={group} sandbox={sandbox} />
          ))}
        </Section>
      ) : null}
      <Section title={`records #${step.seq}..#${step.to}`} open={step.kind !== 'turn' && step.kind !== 'call'}>
        {records ? <RecordList records={records} /> : <p class="muted">loading…</p>}
      </Section>
    </div>
  );
};
