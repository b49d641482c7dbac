/*
 * The secret values the environment holds, for redaction: light (no provider or telemetry code), so the reading
 * commands (`rein sessions`, `rein show`) can redact without loading the runtime.
 */

/**
 * Values no span may carry: every environment variable that looks like a credential (its name says key, token,
 * secret, password, credential or auth) and the OTLP header values (an API key for a hosted backend).
 */
export const secretsFromEnvironment = (env: NodeJS.ProcessEnv): string[] => {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.length < 8) continue;
    if (/(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i.test(name)) secrets.push(value);
    if (/^OTEL_EXPORTER_OTLP_(TRACES_)?HEADERS$/.test(name)) {
      for (const pair of value.split(',')) {
        const header = pair.slice(pair.indexOf('=') + 1).trim();
        if (header.length >= 8) secrets.push(header, decodeURIComponent(header));
      }
    }
  }
  return secrets;
};
