import { useEffect, useState } from 'preact/hooks';
import type { Source } from '../source.js';
import type { CompareBody, SessionRow } from '../types.js';
import { Badge, duration, go } from '../format.js';
import { Diff } from './step.js';
import { diffLines } from '../diff.js';

type Side = CompareBody['a'];

const rows: Array<[string, (side: Side) => preact.ComponentChildren]> = [
  ['status', (side) => <Badge kind="status" value={side.status} />],
  ['outcome', (side) => <Badge kind="outcome" value={side.outcome} />],
  ['turns', (side) => side.turns],
  ['tool calls', (side) => side.toolCalls],
  ['tokens', (side) => (side.tokens.input + side.tokens.output).toLocaleString()],
  ['time', (side) => duration(side.durationMs)],
  ['verifications', (side) => (side.verifications.length === 0 ? <span class="muted">none</span> : side.verifications.map((verification) => <div><Badge kind="verification" value={verification.status} /> {verification.command ?? verification.name} <span class="muted">#{verification.seq}</span></div>))],
  ['files changed', (side) => (side.changes ? (side.changes.length === 0 ? <span class="muted">none</span> : side.changes.map((change) => <div><code>{change.path}</code> <span class="muted">{change.kind}{change.from ? ` from ${change.from}` : ''}</span></div>)) : side.filesChanged.length === 0 ? <span class="muted">none</span> : side.filesChanged.map((file) => <div><code>{file}</code></div>))],
];

/** Two sessions side by side (`compareSessions`): a fork against its parent from the fork point, any two turn by turn. */
export const CompareView = ({ source, a, b }: { source: Source; a: string; b: string }) => {
  const [sessions, setSessions] = useState<SessionRow[]>([]);
  const [result, setResult] = useState<CompareBody | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => void source.sessions({}).then((found) => setSessions(found.sessions), () => undefined), [source]);
  useEffect(() => {
    setResult(undefined);
    setProblem(undefined);
    if (a && b) source.compare(a, b).then(setResult, (error: Error) => setProblem(error.message));
  }, [source, a, b]);
  const pick = (which: 'a' | 'b', value: string) => go(`#/compare/${encodeURIComponent(which === 'a' ? value : a)}/${encodeURIComponent(which === 'b' ? value : b)}`);
  return (
    <section class="compare" data-testid="compare">
      <div class="toolbar">
        {(['a', 'b'] as const).map((which) => (
          <select value={which === 'a' ? a : b} onChange={(event) => pick(which, (event.target as HTMLSelectElement).value)} aria-label={`session ${which}`}>
            <option value="">choose a session</option>
            {sessions.map((session) => (
              <option value={session.id}>
                {session.id} · {session.status} · {session.task.slice(0, 40)}
              </option>
            ))}
          </select>
        ))}
      </div>
      {problem ? <p class="error">{problem}</p> : null}
      {result ? (
        <>
          <p class="muted">{result.alignment === 'fork' ? `aligned at the fork point #${String(result.forkSeq)}: the turns before it are the same records` : 'aligned turn by turn'}</p>
          <table class="list compare-table">
            <thead>
              <tr>
                <th />
                <th>
                  <a href={`#/s/${encodeURIComponent(result.a.sessionId)}`}>{result.a.sessionId}</a>
                </th>
                <th>
                  <a href={`#/s/${encodeURIComponent(result.b.sessionId)}`}>{result.b.sessionId}</a>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map(([name, cell]) => (
                <tr>
                  <th>{name}</th>
                  <td>{cell(result.a)}</td>
                  <td>{cell(result.b)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {result.firstDifference ? (
            <div class="difference" data-testid="first-difference">
              <h3>first differing turn: {result.firstDifference.turn}</h3>
              <Diff lines={diffLines(result.firstDifference.a?.text ?? '', result.firstDifference.b?.text ?? '')} />
            </div>
          ) : (
            <p data-testid="first-difference">no turn differs{result.alignment === 'fork' ? ' after the fork point' : ''}</p>
          )}
        </>
      ) : a && b && !problem ? (
        <p class="muted">comparing…</p>
      ) : null}
    </section>
  );
};
