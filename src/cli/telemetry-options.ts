import type { Rein, ReinOptions } from '../rein.js';
import { displayEndpoint } from '../providers/wire-format.js';
import { resolveOtlpTarget, type OtlpTarget } from '../telemetry/otlp-target.js';
import type { TelemetryStats } from '../telemetry/span-shipper.js';

export interface TelemetryFlags {
  otlp?: string;
}

/** How long `rein run` / `rein resume` wait for the collector before they exit (and the cap on one export). */
export const exitFlushMs = 2_000;

/** The environment variable OpenTelemetry's GenAI instrumentations read to capture message content. */
export const captureContentVariable = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

/** Whether the environment asks for content in spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). */
export const captureContentFrom = (env: NodeJS.ProcessEnv): boolean => env[captureContentVariable]?.trim().toLowerCase() === 'true';

import { secretsFromEnvironment } from './environment-secrets.js';
export { secretsFromEnvironment };

/** Live telemetry for a command that runs sessions, from `--otlp` or the environment; undefined when neither asks. */
export interface CliTelemetry {
  target: OtlpTarget;
  reinOptions: Pick<ReinOptions, 'telemetry'>;
  /** Remember the harness whose telemetry `finish` flushes. */
  attach(rein: Rein): void;
  /** Flush (at most 2 s) and report on stderr what was sent and what was dropped. Never throws. */
  finish(): Promise<TelemetryStats | undefined>;
}

export const cliTelemetryFor = async (flags: TelemetryFlags, env: NodeJS.ProcessEnv = process.env): Promise<CliTelemetry | undefined> => {
  const resolved = resolveOtlpTarget(flags.otlp === undefined ? {} : { endpoint: flags.otlp }, env);
  if (!resolved) return undefined;
  // One export (retries included) may not outlast the exit flush, so the process never waits longer than that.
  const target = { ...resolved, timeoutMs: Math.min(resolved.timeoutMs, exitFlushMs) };
  const { otlpExporterFor } = await import('../telemetry/telemetry.js');
  const exporter = await otlpExporterFor(target);
  let rein: Rein | undefined;
  return {
    target,
    reinOptions: { telemetry: { exporter, captureContent: captureContentFrom(env), secrets: secretsFromEnvironment(env), exportTimeoutMs: exitFlushMs + 500 } },
    attach: (harness) => {
      rein = harness;
    },
    finish: async () => {
      const handle = rein?.telemetry;
      if (!handle) return undefined;
      const stats = await handle.shutdown(exitFlushMs).catch(() => handle.stats());
      process.stderr.write(telemetryReport(stats, target));
      return stats;
    },
  };
};

/** One stderr line: how many spans reached the collector, and how many were dropped and why. */
export const telemetryReport = (stats: TelemetryStats, target: OtlpTarget): string => {
  const where = `${displayEndpoint(target.url)} (${target.protocol})`;
  const unconfirmed = stats.unconfirmed ?? 0;
  if (stats.dropped === 0 && unconfirmed === 0) return `telemetry: ${stats.exported} span${stats.exported === 1 ? '' : 's'} sent to ${where}\n`;
  // Sent but not answered is not lost: a slow collector may have every one of them (trial 6 F18).
  const parts = [`telemetry: ${stats.exported} of ${stats.ended} spans confirmed by ${where}`];
  if (unconfirmed > 0) parts.push(`${unconfirmed} sent but not confirmed: ${stats.unconfirmedReason ?? 'the collector did not answer'} (it may have them)`);
  if (stats.dropped > 0) parts.push(`${stats.dropped} dropped: ${stats.lastError ?? 'unknown reason'}`);
  return `${parts.join('; ')}\n`;
};
