import { describe, expect, it } from 'vitest';
import { resolveOtlpTarget, tracesUrlOf } from '../../src/telemetry/otlp-target.js';
import { TelemetryError } from '../../src/telemetry/telemetry-errors.js';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(TelemetryError);
    return (error as TelemetryError).code;
  }
};

describe('where OTLP spans go', () => {
  it('appends /v1/traces to a base URL, keeping its path, as the OpenTelemetry exporters do', () => {
    expect(tracesUrlOf('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(tracesUrlOf('https://collector.example/otlp/')).toBe('https://collector.example/otlp/v1/traces');
  });

  it('takes the explicit endpoint first, then the traces endpoint as is, then the base endpoint', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom' };
    expect(resolveOtlpTarget({ endpoint: 'http://flag:1' }, env)?.url).toBe('http://flag:1/v1/traces');
    expect(resolveOtlpTarget({}, env)?.url).toBe('http://traces:4318/custom');
    expect(resolveOtlpTarget({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318' })?.url).toBe('http://base:4318/v1/traces');
    expect(resolveOtlpTarget({}, {})).toBeUndefined();
    expect(resolveOtlpTarget({ useEnvironment: false }, env)).toBeUndefined();
  });

  it('honours the protocol and timeout variables, defaulting to protobuf and 10 s', () => {
    expect(resolveOtlpTarget({ endpoint: 'http://x:1' }, {})).toEqual({ url: 'http://x:1/v1/traces', protocol: 'http/protobuf', timeoutMs: 10_000 });
    expect(resolveOtlpTarget({ endpoint: 'http://x:1' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TIMEOUT: '500' })).toMatchObject({ protocol: 'http/json', timeoutMs: 500 });
    expect(resolveOtlpTarget({ endpoint: 'http://x:1' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol).toBe('http/protobuf');
    expect(resolveOtlpTarget({ endpoint: 'http://x:1', protocol: 'http/json' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })?.protocol).toBe('http/json');
  });

  it('lets the environment switch tracing off, but not an explicit endpoint', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318' };
    expect(resolveOtlpTarget({}, { ...env, OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(resolveOtlpTarget({}, { ...env, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(resolveOtlpTarget({ endpoint: 'http://flag:1' }, { OTEL_SDK_DISABLED: 'true' })?.url).toBe('http://flag:1/v1/traces');
  });

  it('refuses what it cannot send with TELEMETRY_CONFIG_INVALID', () => {
    expect(codeOf(() => resolveOtlpTarget({ endpoint: 'ftp://x' }, {}))).toBe('TELEMETRY_CONFIG_INVALID');
    expect(codeOf(() => resolveOtlpTarget({ endpoint: 'not a url' }, {}))).toBe('TELEMETRY_CONFIG_INVALID');
    expect(codeOf(() => resolveOtlpTarget({ endpoint: 'http://x:1' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }))).toBe('TELEMETRY_CONFIG_INVALID');
    expect(codeOf(() => resolveOtlpTarget({ endpoint: 'http://x:1' }, { OTEL_EXPORTER_OTLP_TIMEOUT: '-5' }))).toBe('TELEMETRY_CONFIG_INVALID');
    expect(codeOf(() => resolveOtlpTarget({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'file:///tmp/x' }))).toBe('TELEMETRY_CONFIG_INVALID');
  });
});
