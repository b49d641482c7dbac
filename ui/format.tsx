import type { ComponentChildren } from 'preact';

/** A status, outcome or finding as a coloured badge (`data-badge` names what it shows, for tests and styles). */
export const Badge = ({ kind, value, title }: { kind: string; value: string; title?: string }) => (
  <span class={`badge badge-${kind} tone-${tone(value)}`} data-badge={kind} title={title ?? `${kind}: ${value}`}>
    {value}
  </span>
);

/** The colour family of a value: good, bad, waiting or neutral. */
export const tone = (value: string): string => {
  if (['completed', 'succeeded', 'ok', 'passed', 'allow', 'allow-once', 'allow-session', 'satisfied'].includes(value)) return 'good';
  if (['failed', 'error', 'denied', 'deny', 'cancelled', 'budget-exhausted', 'damaged', 'unverified'].includes(value)) return 'bad';
  if (['awaiting-approval', 'awaiting-confirmation', 'waiting', 'interrupted', 'awaiting-budget', 'forked', 'idle', 'ask'].includes(value)) return 'wait';
  if (['running', 'active', 'queued'].includes(value)) return 'run';
  return 'info';
};

export const duration = (ms: number): string => (ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`);

export const when = (at: number): string => (at > 0 ? new Date(at).toLocaleString() : '');

export const tokens = (value: { input: number; output: number; estimated?: boolean }): string => `${(value.input + value.output).toLocaleString()}${value.estimated ? ' (est.)' : ''}`;

/** Dollars as `rein show` prints them (`$0.0123`, `$4.00`), or `unknown` when a model has no price (never 0). */
export const money = (usd: number | undefined, unpriced?: readonly string[]): string =>
  usd === undefined ? (unpriced && unpriced.length > 0 ? `unknown (no price for ${unpriced.join(', ')})` : 'unknown') : `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;

/** The cache hit rate (cache reads as a share of input tokens) as a percentage; empty before any input. */
export const cacheShare = (rate: number | undefined): string => (rate === undefined ? '' : `${Math.round(rate * 100)}%`);

/** Pretty JSON, for arguments and records. */
export const pretty = (value: unknown): string => JSON.stringify(value, null, 2) ?? String(value);

export const Section = ({ title, children, open = true }: { title: string; children: ComponentChildren; open?: boolean }) => (
  <details class="section" open={open}>
    <summary>{title}</summary>
    {children}
  </details>
);

/** The hash route: `#/`, `#/s/<id>`, `#/s/<id>/<tab>`, `#/compare/<a>/<b>`. */
export const go = (hash: string): void => {
  if (location.hash !== hash) location.hash = hash;
};
