import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { httpSource, staticSource, type Source } from './source.js';
import { SessionsView } from './views/sessions.js';
import { SessionView } from './views/session.js';
import { CompareView } from './views/compare.js';

const routeOf = (hash: string): { view: 'sessions' } | { view: 'session'; id: string; tab: string } | { view: 'compare'; a: string; b: string } => {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 's' && parts[1]) return { view: 'session', id: parts[1], tab: parts[2] ?? 'timeline' };
  if (parts[0] === 'compare') return { view: 'compare', a: parts[1] ?? '', b: parts[2] ?? '' };
  return { view: 'sessions' };
};

const App = ({ source }: { source: Source }) => {
  const exported = window.__REIN_EXPORT__;
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  const route = exported ? { view: 'session' as const, id: exported.session.id, tab: routeOf(hash).view === 'session' ? (routeOf(hash) as { tab: string }).tab : 'timeline' } : routeOf(hash);
  return (
    <div class="app">
      <header class="top">
        <a class="brand" href={exported ? undefined : '#/'}>
          rein
        </a>
        <span class="muted">{exported ? `exported ${new Date(exported.exportedAt).toLocaleString()} · offline copy, secrets redacted` : 'session viewer'}</span>
        {exported ? null : (
          <nav>
            <a href="#/">sessions</a>
            <a href="#/compare">compare</a>
          </nav>
        )}
      </header>
      <main>
        {route.view === 'sessions' ? <SessionsView source={source} /> : route.view === 'session' ? <SessionView key={route.id} source={source} id={route.id} tab={route.tab} /> : <CompareView source={source} a={route.a} b={route.b} />}
      </main>
    </div>
  );
};

const exported = window.__REIN_EXPORT__;
render(<App source={exported ? staticSource(exported) : httpSource()} />, document.getElementById('app')!);
