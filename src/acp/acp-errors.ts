import { RequestError } from '@agentclientprotocol/sdk';

/*
 * The JSON-RPC errors `rein acp` answers with (docs/editors.md). The SDK answers an unknown method (-32601) and
 * params its schemas refuse (-32602) itself; rein adds its own, each with `data.code`, rein's stable error code.
 */

/** Another process (a `rein run`, `rein resume`, another editor) holds the session: it stays as it is. */
export const sessionBusyCode = -32010;

/** rein refused the request: `data.code` is its stable error code (`USAGE`, `CONFIG_INVALID`, `SESSION_ENDED`, …). */
export const reinErrorCode = -32011;

export const sessionBusy = (sessionId: string): RequestError =>
  new RequestError(sessionBusyCode, 'Session busy', { code: 'STORE_LOCKED', sessionId, message: `session ${sessionId} is held by another process (a rein run, rein resume or another editor); try again once it is done` });

/** An error as the client receives it: a `RequestError` as it is, a rein error with its code, anything else as internal. */
export const acpError = (error: unknown): RequestError => {
  if (error instanceof RequestError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'SESSION_NOT_FOUND') return RequestError.resourceNotFound();
  if (code === 'STORE_LOCKED') return new RequestError(sessionBusyCode, 'Session busy', { code, message });
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return new RequestError(reinErrorCode, `${code}: ${message}`.slice(0, 2_000), { code, message });
  return RequestError.internalError({ message });
};
