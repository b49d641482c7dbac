import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Source } from '../source.js';
import type { MemoryBody, PageRecord, PendingApproval, SessionDetail, Timeline, TraceBody } from '../types.js';
import { Badge, cacheShare, duration, go, money, pretty, tokens, when } from '../format.js';
import { LiveFeed, type LiveState } from '../live.js';
import { TimelineList } from './timeline.js';
import { StepPanel } from './step.js';
import { MachinesView } from './machines.js';
import { RecordsView } from './records.js';
import { sessionEndedIn } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

/** Record types after which the session's row (status, approvals) is fetched again (and a step record that ends it). */
const statusTypes = new Set(['session.ended', 'session.interrupted', 'session.resumed', 'session.cancelled', 'approval.requested', 'approval.replied', 'effect.resolved', 'model.responded', 'user.message']);

const ApprovalCard = ({ approval, answer }: { approval: PendingApproval; answer: (decision: string, feedback?: string) => Promise<void> }) => {
  const [feedback, setFeedback] = useState('');
  return (
    <div class="approval" data-approval={approval.approvalId}>
      <h4>
        {approval.tool} <Badge kind="risk" value={approval.risk} /> <span class="muted">{approval.actor ?? 'root'}</span>
      </h4>
      <p>{approval.summary}</p>
      <p class="muted">
        {approval.reason}
        {approval.suggestedRule ? ` · allow for the session grants ${approval.suggestedRule}` : ''}
        {approval.classes ? ` · ${approval.classes.join(', ')}` : ''}
      </p>
      <pre class="text">{pretty(approval.arguments)}</pre>
      <div class="buttons">
        <button class="good" onClick={() => answer('allow-once')}>
          allow once
        </button>
        <button onClick={() => answer('allow-session')}>allow for the session</button>
        <input placeholder="why not, or what to do instead" value={feedback} onInput={(event) => setFeedback((event.target as HTMLInputElement).value)} aria-label="feedback" />
        <button class="bad" onClick={() => answer('deny', feedback || undefined)}>
          deny
        </button>
      </div>
    </div>
  );
};

const TraceView = ({ trace, jump }: { trace: TraceBody | undefined; jump: (seq: number) => void }) =>
  trace ? (
    <div class="trace" data-testid="trace">
      <p>
        <Badge kind="outcome" value={trace.outcome} /> {trace.claimedSuccess ? 'the final answer claims success' : 'the final answer claims no success'}
      </p>
      {trace.finalMessage ? <blockquote>{trace.finalMessage.text}</blockquote> : null}
      {trace.findings.length === 0 ? <p class="muted">no finding</p> : null}
      {trace.findings.map((finding) => (
        <div class={`finding${finding === trace.primary ? ' primary' : ''}`}>
          <h4>
            <Badge kind="finding" value={finding.type} /> {finding.boundary} · {finding.category} · {finding.confidence}
          </h4>
          <p>{finding.claim}</p>
          <p class="muted">
            fix in {finding.suggestedFixArea} · <button class="link" onClick={() => jump(finding.seq)}>at #{finding.seq}</button> · evidence {finding.evidence.join(' ')}
          </p>
        </div>
      ))}
      {trace.unknowns.length > 0 ? (
        <ul class="muted">
          {trace.unknowns.map((unknown) => (
            <li>{unknown}</li>
          ))}
        </ul>
      ) : null}
    </div>
  ) : (
    <p class="muted">analysing…</p>
  );

const MemoryView = ({ source, id }: { source: Source; id: string }) => {
  const [memory, setMemory] = useState<MemoryBody | undefined>(undefined);
  useEffect(() => void source.memory(id).then(setMemory, () => undefined), [source, id]);
  if (!memory) return <p class="muted">loading…</p>;
  return (
    <div class="memory">
      <h4>candidates ({memory.candidates.length})</h4>
      <ul>
        {memory.candidates.map((candidate) => (
          <li>
            <Badge kind="memory" value={candidate.status} /> {candidate.text ?? candidate.candidateId}
          </li>
        ))}
      </ul>
      <h4>promoted ({memory.records.length})</h4>
      <ul>
        {memory.records.map((record) => (
          <li>
            <Badge kind="memory" value={record.status} /> {record.text ?? record.recordId}
          </li>
        ))}
      </ul>
    </div>
  );
};

/** One session: its header and actions, what it waits for, and its timeline, step, machines, records, trace and memory. */
export const SessionView = ({ source, id, tab }: { source: Source; id: string; tab: string }) => {
  const [detail, setDetail] = useState<SessionDetail | undefined>(undefined);
  const [timeline, setTimeline] = useState<Timeline | undefined>(undefined);
  const [trace, setTrace] = useState<TraceBody | undefined>(undefined);
  const [selected, setSelected] = useState<number | undefined>(undefined);
  const [live, setLive] = useState<{ state: LiveState; last: number }>({ state: 'closed', last: 0 });
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState('');
  const [sandbox, setSandbox] = useState<PageRecord | undefined>(undefined);
  const timelineRef = useRef<Timeline | undefined>(undefined);
  timelineRef.current = timeline;

  const fail = (error: unknown) => setProblem(error instanceof ApiError ? `${error.code}: ${error.message}` : String((error as Error).message ?? error));
  const loadDetail = useCallback(() => source.session(id).then(setDetail, fail), [source, id]);
  const loadTrace = useCallback(() => source.trace(id).then(setTrace, fail), [source, id]);
  const loadTimeline = useCallback(async () => {
    const current = timelineRef.current;
    const offset = current ? Math.min(current.stable, current.steps.length) : 0;
    const fresh = await source.timeline(id, offset);
    setTimeline((previous) => (previous && offset > 0 ? { ...fresh, offset: 0, steps: [...previous.steps.slice(0, offset), ...fresh.steps] } : fresh));
    return fresh;
  }, [source, id]);
  // A long session the server is still reading for the first time: show what it has, and ask again until it is all there.
  useEffect(() => {
    if (!timeline || timeline.complete) return;
    const again = setTimeout(() => {
      void loadTimeline().then((fresh) => {
        if (fresh.complete) {
          void loadDetail();
          void loadTrace();
        }
      }, fail);
    }, 700);
    return () => clearTimeout(again);
  }, [timeline, loadTimeline, loadDetail, loadTrace]);

  useEffect(() => {
    let feed: LiveFeed | undefined;
    let stopped = false;
    let refresh: ReturnType<typeof setTimeout> | undefined;
    let statusChanged = false;
    void loadDetail();
    void loadTrace();
    void source.records(id, 1, 40).then((page) => setSandbox(page.records.find((record) => record.type === 'sandbox.checked')), () => undefined);
    void loadTimeline().then(
      (first) => {
        if (stopped || !source.live) return;
        feed = new LiveFeed(
          id,
          first.logHead + 1,
          (records) => {
            if (records.some((record) => statusTypes.has(record.type) || sessionEndedIn(record as unknown as RecordEnvelope) !== undefined)) statusChanged = true;
            clearTimeout(refresh);
            refresh = setTimeout(() => {
              void loadTimeline().catch(fail);
              if (statusChanged) {
                statusChanged = false;
                void loadDetail();
                void loadTrace();
              }
            }, 120);
          },
          (state, last) => setLive({ state, last }),
        );
        feed.start();
      },
      fail,
    );
    return () => {
      stopped = true;
      clearTimeout(refresh);
      feed?.stop();
    };
  }, [source, id, loadDetail, loadTimeline, loadTrace]);

  const steps = timeline?.steps ?? [];
  const firstFailure = steps.findIndex((step) => step.findings !== undefined || step.status === 'error' || step.status === 'denied');
  const jumpToSeq = (seq: number) => {
    let best = -1;
    steps.forEach((step, index) => {
      if (step.seq <= seq) best = index;
    });
    if (best >= 0) {
      setSelected(best);
      go(`#/s/${encodeURIComponent(id)}/timeline`);
    }
  };
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.target as HTMLElement | null)?.closest('input, textarea, select')) return;
      if (event.key === 'f' && firstFailure >= 0) setSelected(firstFailure);
      else if (event.key === 'j') setSelected((current) => Math.min(steps.length - 1, (current ?? -1) + 1));
      else if (event.key === 'k') setSelected((current) => Math.max(0, (current ?? 1) - 1));
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [firstFailure, steps.length]);

  const act = async (path: string, body?: unknown, then?: (result: { sessionId: string; status: string; verified?: boolean; divergence?: { seq: number; message: string } }) => void) => {
    setProblem(undefined);
    try {
      const result = await source.act(`/api/sessions/${encodeURIComponent(id)}${path}`, body);
      then?.(result);
      void loadDetail();
    } catch (error) {
      fail(error);
    }
  };
  const fork = (at: number) => act('/fork', { at }, (result) => go(`#/s/${encodeURIComponent(result.sessionId)}`));
  const step = selected === undefined ? undefined : steps[selected];
  const tabs = ['timeline', 'machines', 'records', 'trace', 'memory'];
  const status = detail?.status;
  return (
    <section class="session" data-session={id}>
      <div class="session-head">
        <h2 class="id">{id}</h2>
        {detail ? (
          <>
            <Badge kind="status" value={detail.status} />
            {detail.outcome ? <Badge kind="outcome" value={detail.outcome} /> : null}
            <span class="muted">
              {detail.turns} turns · {detail.toolCalls} tool calls · {tokens(detail.tokens)} tokens · {duration(detail.durationMs)} · {when(detail.createdAt)} · #{detail.head}
            </span>
            {detail.turns > 0 ? (
              <span data-testid="session-cost">
                cost {money(detail.costUsd, detail.costUnpriced)}
                {detail.cacheHitRate === undefined ? '' : ` · cache ${cacheShare(detail.cacheHitRate)} of input`}
              </span>
            ) : null}
            {detail.agents.length > 1 ? (
              <span data-testid="agent-costs">
                {detail.agents.map((agent) => `${agent.actor} ${money(agent.costUsd)} (${agent.calls} calls${agent.cacheHitRate === undefined ? '' : `, cache ${cacheShare(agent.cacheHitRate)}`})`).join(' · ')}
              </span>
            ) : null}
            {detail.forkedFrom ? (
              <span>
                forked from <a href={`#/s/${encodeURIComponent(detail.forkedFrom.stream)}`}>{detail.forkedFrom.stream}</a> at #{detail.forkedFrom.seq} ·{' '}
                <a href={`#/compare/${encodeURIComponent(detail.forkedFrom.stream)}/${encodeURIComponent(id)}`}>compare with it</a>
              </span>
            ) : null}
            {detail.forks.length > 0 ? (
              <span>
                forks:{' '}
                {detail.forks.map((fork) => (
                  <a href={`#/s/${encodeURIComponent(fork)}`}>{fork} </a>
                ))}
              </span>
            ) : null}
          </>
        ) : null}
        {source.live ? (
          <span class={`live live-${live.state}`} data-live={live.state} data-last={live.last}>
            {live.state === 'live' ? `live · #${live.last}` : live.state === 'reconnecting' ? `reconnecting… (from #${live.last + 1})` : live.state}
          </span>
        ) : null}
      </div>
      {detail ? <p class="task">{detail.task}</p> : null}
      {source.live && detail ? (
        <div class="actions">
          {detail.actions ? null : <span class="muted">read-only server: no actions</span>}
          {detail.actions && detail.runningHere ? <button onClick={() => act('/interrupt', {})}>interrupt</button> : null}
          {detail.actions && !detail.runningHere && ['interrupted', 'awaiting-budget', 'forked', 'awaiting-approval', 'awaiting-confirmation', 'active', 'idle'].includes(status ?? '') ? <button onClick={() => act('/resume', {})}>resume</button> : null}
          {!detail.actions || ['completed', 'failed', 'cancelled', 'budget-exhausted'].includes(status ?? '') ? null : <button onClick={() => act('/cancel', {})}>cancel</button>}
          <a class="button" href={`/api/sessions/${encodeURIComponent(id)}/export`} download>
            export HTML
          </a>
          {detail.actions ? <button onClick={() => act('/replay', {}, (result) => setNotice(result.verified ? `replay verified ${String((result as { records?: number }).records ?? '')} records` : `replay diverged at #${result.divergence?.seq}: ${result.divergence?.message}`))}>verify by replay</button> : null}
          {detail.actions && (status === 'idle' || status === 'awaiting-approval' || detail.runningHere) ? (
            <form
              class="send"
              onSubmit={(event) => {
                event.preventDefault();
                void act('/messages', { text: message }).then(() => setMessage(''));
              }}
            >
              <input placeholder="a message to the session" value={message} onInput={(event) => setMessage((event.target as HTMLInputElement).value)} aria-label="message" />
              <button type="submit" disabled={message.trim() === ''}>
                send
              </button>
            </form>
          ) : null}
        </div>
      ) : null}
      {notice ? (
        <p class="notice" data-testid="notice">
          {notice}
        </p>
      ) : null}
      {problem ? (
        <p class="error" data-testid="problem">
          {problem}
        </p>
      ) : null}
      {detail && detail.approvals.length > 0 ? (
        <div class="approvals" data-testid="approvals">
          <h3>waiting for your approval</h3>
          {detail.approvals.map((approval) =>
            source.live && detail.actions ? <ApprovalCard approval={approval} answer={(decision, feedback) => act(`/approvals/${encodeURIComponent(approval.approvalId)}`, { decision, ...(feedback ? { feedback } : {}) })} /> : <pre class="text">{pretty(approval)}</pre>,
          )}
        </div>
      ) : null}
      {detail && detail.confirmations.length > 0 && source.live && detail.actions ? (
        <div class="approvals" data-testid="confirmations">
          <h3>in doubt: rerun?</h3>
          {detail.confirmations.map((confirmation) => (
            <div class="approval">
              <p>{confirmation.effectId}: its outcome is unknown (the process stopped while it ran)</p>
              <button onClick={() => act(`/confirmations/${encodeURIComponent(confirmation.effectId)}`, { decision: 'rerun' })}>rerun it</button>
              <button onClick={() => act(`/confirmations/${encodeURIComponent(confirmation.effectId)}`, { decision: 'decline' })}>do not rerun</button>
            </div>
          ))}
        </div>
      ) : null}
      <div class="findings-bar">
        {trace?.findings.map((finding) => (
          <button class="link" onClick={() => jumpToSeq(finding.seq)}>
            <Badge kind="finding" value={finding.type} title={finding.claim} />
          </button>
        ))}
        {firstFailure >= 0 ? (
          <button onClick={() => setSelected(firstFailure)} data-testid="first-failure">
            first failure (f)
          </button>
        ) : (
          <span class="muted">no failure</span>
        )}
        <span class="muted">j / k: next / previous step</span>
        {timeline && !timeline.complete ? <span class="muted">reading the log… #{timeline.head} of #{timeline.logHead}</span> : null}
      </div>
      <nav class="tabs">
        {tabs.map((name) => (
          <a class={name === tab ? 'current' : ''} href={`#/s/${encodeURIComponent(id)}/${name}`}>
            {name}
          </a>
        ))}
      </nav>
      {tab === 'timeline' ? (
        <div class="split">
          {timeline ? <TimelineList steps={steps} lanes={timeline.lanes} selected={selected} onSelect={setSelected} complete={timeline.complete} /> : <p class="muted">loading…</p>}
          <div class="detail">{step ? <StepPanel source={source} sessionId={id} step={step} sandbox={sandbox} {...(source.live && detail?.actions ? { onFork: fork } : {})} /> : <p class="muted">select a step (or press f for the first failure)</p>}</div>
        </div>
      ) : tab === 'machines' ? (
        <MachinesView source={source} sessionId={id} step={step} />
      ) : tab === 'records' ? (
        <RecordsView source={source} sessionId={id} head={Math.max(detail?.head ?? 0, live.last)} />
      ) : tab === 'trace' ? (
        <TraceView trace={trace} jump={jumpToSeq} />
      ) : (
        <MemoryView source={source} id={id} />
      )}
    </section>
  );
};
