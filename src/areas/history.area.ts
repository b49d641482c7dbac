/* Reading a finished session back: diffs, rewinds, comparisons, trace analysis, the HTML export, the inspector. */
export { analyzeTrace } from '../trace/trace-analyzer.js';
export { contextAtTurn } from '../session/context-at-turn.js';
export { compareSessions } from '../session/compare-sessions.js';
export { diffSession } from '../changes/session-diff.js';
export { renderSessionDiff } from '../changes/diff-render.js';
export { rewindSession } from '../changes/rewind-session.js';
export { exportSessionHtml } from '../serve/export-html.js';
export { connectInspector } from '../inspect/stately-inspector.js';
export { startInspectorRelay } from '../inspect/inspector-relay.js';
