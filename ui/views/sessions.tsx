import { useEffect, useState } from 'preact/hooks';
import type { Source } from '../source.js';
import type { SessionRow } from '../types.js';
import { Badge, cacheShare, duration, go, money, tokens, when } from '../format.js';

const statuses = ['completed', 'failed', 'cancelled', 'budget-exhausted', 'interrupted', 'awaiting-budget', 'forked', 'awaiting-approval', 'awaiting-confirmation', 'idle', 'active', 'queued', 'damaged'];

/** The rows as a lineage forest: each fork under the session it was forked from (when that one is listed). */
const lineage = (rows: readonly SessionRow[]): Array<{ row: SessionRow; depth: number }> => {
  const ids = new Set(rows.map((row) => row.id));
  const children = new Map<string, SessionRow[]>();
  const roots: SessionRow[] = [];
  for (const row of rows) {
    const parent = row.forkedFrom?.stream;
    if (parent && ids.has(parent)) children.set(parent, [...(children.get(parent) ?? []), row]);
    else roots.push(row);
  }
  const out: Array<{ row: SessionRow; depth: number }> = [];
  const visit = (row: SessionRow, depth: number) => {
    out.push({ row, depth });
    for (const child of children.get(row.id) ?? []) visit(child, depth + 1);
  };
  for (const root of [...roots].reverse()) visit(root, 0);
  return out;
};

export const SessionsView = ({ source }: { source: Source }) => {
  const [rows, setRows] = useState<SessionRow[] | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [picked, setPicked] = useState<string[]>([]);
  const [task, setTask] = useState('');
  const [actions, setActions] = useState(false);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      source
        .sessions({ ...(status ? { status } : {}), ...(text ? { q: text } : {}) })
        .then((found) => !stopped && (setRows(found.sessions), setActions(found.actions), setError(undefined)))
        .catch((failure: Error) => !stopped && setError(failure.message));
    const debounce = setTimeout(load, text ? 150 : 0);
    const poll = source.live ? setInterval(load, 4000) : undefined;
    return () => {
      stopped = true;
      clearTimeout(debounce);
      clearInterval(poll);
    };
  }, [source, status, text]);
  const start = async (event: Event) => {
    event.preventDefault();
    try {
      const result = await source.act('/api/sessions', { task });
      setTask('');
      go(`#/s/${encodeURIComponent(result.sessionId)}`);
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const toggle = (id: string) => setPicked((current) => (current.includes(id) ? current.filter((entry) => entry !== id) : [...current, id].slice(-2)));
  return (
    <section class="sessions">
      <div class="toolbar">
        <input type="search" placeholder="search id or task" value={text} onInput={(event) => setText((event.target as HTMLInputElement).value)} aria-label="search sessions" />
        <select value={status} onChange={(event) => setStatus((event.target as HTMLSelectElement).value)} aria-label="filter by status">
          <option value="">every status</option>
          {statuses.map((entry) => (
            <option value={entry}>{entry}</option>
          ))}
        </select>
        {picked.length === 2 ? (
          <a class="button" href={`#/compare/${encodeURIComponent(picked[0]!)}/${encodeURIComponent(picked[1]!)}`}>
            compare the two
          </a>
        ) : (
          <span class="muted">tick two sessions to compare them</span>
        )}
        {source.live && actions ? (
          <form class="start" onSubmit={start}>
            <input placeholder="a task for a new session" value={task} onInput={(event) => setTask((event.target as HTMLInputElement).value)} aria-label="new session task" />
            <button type="submit" disabled={task.trim() === ''}>
              start
            </button>
          </form>
        ) : null}
      </div>
      {error ? <p class="error">{error}</p> : null}
      {rows === undefined ? (
        <p class="muted">loading…</p>
      ) : rows.length === 0 ? (
        <p class="muted">no session{status || text ? ' matches' : ' yet: run rein run "…" or start one above'}</p>
      ) : (
        <table class="list" data-testid="sessions">
          <thead>
            <tr>
              <th />
              <th>session</th>
              <th>status</th>
              <th>outcome</th>
              <th>task</th>
              <th>turns</th>
              <th>tokens</th>
              <th title="at the configured prices (rein.config.json prices over the shipped defaults)">cost</th>
              <th title="cache reads as a share of input tokens">cache</th>
              <th>time</th>
              <th>started</th>
            </tr>
          </thead>
          <tbody>
            {lineage(rows).map(({ row, depth }) => (
              <tr key={row.id} data-session={row.id} class={row.damaged ? 'damaged' : ''}>
                <td>
                  <input type="checkbox" checked={picked.includes(row.id)} onChange={() => toggle(row.id)} aria-label={`pick ${row.id}`} />
                </td>
                <td class="id" style={{ paddingLeft: `${0.5 + depth * 1.4}rem` }}>
                  {depth > 0 ? <span class="fork-mark" title={`forked from ${row.forkedFrom?.stream} at #${row.forkedFrom?.seq}`}>↳ </span> : null}
                  <a href={`#/s/${encodeURIComponent(row.id)}`}>{row.id}</a>
                  {row.runningHere ? <span class="live-dot" title="running in this server" /> : null}
                </td>
                <td>
                  <Badge kind="status" value={row.status} title={row.damaged ? `${row.damaged.code}: ${row.damaged.message}` : undefined} />
                </td>
                <td>{row.outcome ? <Badge kind="outcome" value={row.outcome} /> : null}</td>
                <td class="task">{row.task}</td>
                <td>{row.turns}</td>
                <td>{tokens(row.tokens)}</td>
                <td data-testid="cost" title={row.costUnpriced ? `no price for ${row.costUnpriced.join(', ')}` : undefined}>
                  {row.turns > 0 ? money(row.costUsd, row.costUnpriced) : ''}
                </td>
                <td data-testid="cache">{cacheShare(row.cacheHitRate)}</td>
                <td>{duration(row.durationMs)}</td>
                <td class="muted">{when(row.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
};
