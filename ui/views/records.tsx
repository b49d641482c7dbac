import { useEffect, useRef, useState } from 'preact/hooks';
import type { Source } from '../source.js';
import type { PageRecord } from '../types.js';
import { pretty } from '../format.js';

const ROW = 24;
const PAGE = 500;

/**
 * Every record of the session, windowed: pages of records are fetched by seq range as they scroll into view, so the
 * page holds only what was looked at. Any record type, known to this page or not, is listed the same way.
 */
export const RecordsView = ({ source, sessionId, head }: { source: Source; sessionId: string; head: number }) => {
  const box = useRef<HTMLDivElement>(null);
  const pages = useRef(new Map<number, PageRecord[] | 'loading'>());
  const [, setVersion] = useState(0);
  const [top, setTop] = useState(0);
  const [open, setOpen] = useState<PageRecord | undefined>(undefined);
  const height = box.current?.clientHeight ?? 600;
  const first = Math.max(0, Math.floor(top / ROW) - 10);
  const last = Math.min(head, Math.ceil((top + height) / ROW) + 10);
  useEffect(() => {
    for (let page = Math.floor(first / PAGE); page <= Math.floor(Math.max(first, last - 1) / PAGE); page++) {
      if (pages.current.has(page)) continue;
      pages.current.set(page, 'loading');
      source.records(sessionId, page * PAGE + 1, Math.min(head, (page + 1) * PAGE)).then(
        (found) => {
          pages.current.set(page, found.records);
          setVersion((version) => version + 1);
        },
        () => pages.current.delete(page),
      );
    }
  }, [first, last, head, source, sessionId]);
  const rows = [];
  for (let index = first; index < last; index++) {
    const page = pages.current.get(Math.floor(index / PAGE));
    const record = Array.isArray(page) ? page[index % PAGE] : undefined;
    rows.push(
      <div class="record-row" style={{ top: `${index * ROW}px`, height: `${ROW}px` }} onClick={() => record && setOpen(record)} data-seq={index + 1}>
        <span class="seq">#{index + 1}</span>
        {record ? (
          <>
            <code>{record.type}</code> <span class="muted">{record.actor}</span> <span class="preview">{JSON.stringify(record.data).slice(0, 160)}</span>
          </>
        ) : (
          <span class="muted">…</span>
        )}
      </div>,
    );
  }
  return (
    <div class="records-view">
      <div class="timeline" ref={box} onScroll={(event) => setTop((event.target as HTMLDivElement).scrollTop)} data-testid="records">
        <div class="timeline-space" style={{ height: `${head * ROW}px` }}>
          {rows}
        </div>
      </div>
      {open ? (
        <div class="record-open">
          <h4>
            #{open.seq} <code>{open.type}</code> v{open.v} · {open.actor} · {new Date(open.at).toISOString()}
          </h4>
          <pre class="text">{pretty(open)}</pre>
        </div>
      ) : null}
    </div>
  );
};
