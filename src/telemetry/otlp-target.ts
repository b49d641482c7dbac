import { displayEndpoint } from '../providers/wire-format.js';
import { TelemetryError } from './telemetry-errors.js';

/** The OTLP/HTTP encodings rein sends: protobuf (the OTLP default) or JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Where and how spans go: the full traces URL, the encoding, and the time one export may take (retries included). */
export interface OtlpTarget {
  url: string;
  protocol: OtlpProtocol;
  timeoutMs: number;
}

export interface OtlpTargetOptions {
  /** A base URL: spans go to `<endpoint>/v1/traces` (what `--otlp` and `OTEL_EXPORTER_OTLP_ENDPOINT` give). */
  endpoint?: string;
  protocol?: OtlpProtocol;
  timeoutMs?: number;
  /** Read `OTEL_EXPORTER_OTLP_*` when the options leave something open (default true). */
  useEnvironment?: boolean;
}

/** The OpenTelemetry default for one export's timeout. */
export const defaultOtlpTimeoutMs = 10_000;

const httpUrl = (value: string, what: string): URL => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TelemetryError('TELEMETRY_CONFIG_INVALID', `${what} must be an http:// or https:// URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TelemetryError('TELEMETRY_CONFIG_INVALID', `${what} must be an http:// or https:// URL, got ${displayEndpoint(value)}`);
  return url;
};

/** `<base>/v1/traces`, as the OTLP exporters build it from `OTEL_EXPORTER_OTLP_ENDPOINT` (the base's path kept). */
export const tracesUrlOf = (base: string, what = 'the OTLP endpoint'): string => {
  const url = httpUrl(base, what);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
};

const protocolOf = (value: string | undefined, what: string): OtlpProtocol | undefined => {
  if (value === undefined || value.trim() === '') return undefined;
  const protocol = value.trim().toLowerCase();
  if (protocol === 'http/protobuf' || protocol === 'http/json') return protocol;
  throw new TelemetryError('TELEMETRY_CONFIG_INVALID', `${what} must be http/protobuf or http/json (rein sends OTLP over HTTP), got ${JSON.stringify(value)}`);
};

const timeoutOf = (value: string | number | undefined, what: string): number | undefined => {
  if (value === undefined || value === '') return undefined;
  const timeout = Number(value);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new TelemetryError('TELEMETRY_CONFIG_INVALID', `${what} must be a positive number of milliseconds, got ${JSON.stringify(value)}`);
  return timeout;
};

/** True when the environment switches tracing off (`OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`). */
export const tracingDisabledBy = (env: NodeJS.ProcessEnv): boolean =>
  env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none';

/**
 * Resolve where spans go, as the OpenTelemetry exporters do: an explicit endpoint wins; otherwise
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`), unless the
 * environment switches tracing off. The protocol comes from the options, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or
 * `OTEL_EXPORTER_OTLP_PROTOCOL` (default `http/protobuf`); the timeout likewise from `…_TIMEOUT` (default 10 s).
 * Undefined when nothing asks for an export. Throws `TELEMETRY_CONFIG_INVALID` for a bad value. Pure.
 */
export const resolveOtlpTarget = (options: OtlpTargetOptions = {}, env: NodeJS.ProcessEnv = process.env): OtlpTarget | undefined => {
  const fromEnv = options.useEnvironment === false ? {} : env;
  let url: string | undefined;
  if (options.endpoint !== undefined) url = tracesUrlOf(options.endpoint);
  else if (!tracingDisabledBy(fromEnv)) {
    if (fromEnv.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) url = httpUrl(fromEnv.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.trim(), 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT').toString();
    else if (fromEnv.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) url = tracesUrlOf(fromEnv.OTEL_EXPORTER_OTLP_ENDPOINT.trim(), 'OTEL_EXPORTER_OTLP_ENDPOINT');
  }
  if (url === undefined) return undefined;
  const protocol = options.protocol ?? protocolOf(fromEnv.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? protocolOf(fromEnv.OTEL_EXPORTER_OTLP_PROTOCOL, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  const timeoutMs =
    timeoutOf(options.timeoutMs, 'the OTLP timeout') ?? timeoutOf(fromEnv.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? timeoutOf(fromEnv.OTEL_EXPORTER_OTLP_TIMEOUT, 'OTEL_EXPORTER_OTLP_TIMEOUT') ?? defaultOtlpTimeoutMs;
  return { url, protocol, timeoutMs };
};
