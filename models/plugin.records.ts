import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** Where a plugin came from; the source decides its trust (docs/capabilities.md: *Plugins*). */
export const PluginSource = lazySchema(() => z.enum(['builtin', 'host', 'user', 'project', 'cli', 'test']));
export type PluginSource = z.infer<typeof PluginSource>;

/** The lifecycle phase a plugin failed in (the plugin machine's working phases, plus the manifest check). */
export const PluginPhase = lazySchema(() => z.enum(['manifest', 'load', 'configure', 'start', 'register', 'stop']));
export type PluginPhase = z.infer<typeof PluginPhase>;

/** effect (fact) · a plugin's manifest was validated and its module loaded: who it is and what it says it contributes. */
export const PluginLoaded = lazySchema(() => z.object({
  pluginId: z.string().min(1),
  name: z.string(),
  version: z.string(),
  source: PluginSource,
  /** The file or package it was loaded from (absent for plugins a host passed as values). */
  location: z.string().optional(),
  /** BLAKE3 of the manifest's canonical JSON: what the user trusted, for project plugins. */
  manifestDigest: z.string(),
  permissions: z.array(z.string()),
}));
export type PluginLoaded = z.infer<typeof PluginLoaded>;

/** effect (fact) · every contribution of a plugin is registered: the full ids it added. */
export const PluginReady = lazySchema(() => z.object({
  pluginId: z.string().min(1),
  tools: z.array(z.string()),
  providers: z.array(z.string()),
  hooks: z.array(z.string()),
  guardrails: z.array(z.string()),
  commands: z.array(z.string()),
}));
export type PluginReady = z.infer<typeof PluginReady>;

/** effect (fact) · a plugin failed (or was refused) in a phase; everything it had contributed was revoked. */
export const PluginFailed = lazySchema(() => z.object({
  pluginId: z.string().min(1),
  source: PluginSource,
  phase: PluginPhase,
  code: z.string().min(1),
  message: z.string(),
  /** Full ids of contributions that had been registered and were revoked. */
  revoked: z.array(z.string()),
}));
export type PluginFailed = z.infer<typeof PluginFailed>;

/** effect (fact) · a plugin was stopped (the harness closed, or it was disabled): its contributions are gone. */
export const PluginStopped = lazySchema(() => z.object({ pluginId: z.string().min(1), reason: z.string() }));
export type PluginStopped = z.infer<typeof PluginStopped>;
