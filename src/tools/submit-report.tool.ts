import { reportSchemaOf, type OutputContract } from '../../models/report-contracts.js';
import { reportTool } from '../../machines/session.machine.js';
import { defineTool, readOnlyAnnotations, type AnyToolDefinition } from './tool.js';

/**
 * `submit_report`, the tool only child agents see: its schema is the child's output contract (the format with its
 * required fields). A valid report settles ok with the report as `tool.settled.value`; the child ends `completed`
 * once that turn reaches MutationReady. An invalid one is a model-visible `InvalidInput` (schema stage): one
 * correction round, then the child fails with a contract failure.
 */
export const submitReportTool = (contract: OutputContract): AnyToolDefinition =>
  defineTool<Record<string, unknown>>({
    name: reportTool,
    description: `End your task by submitting your ${contract.format}. Required fields: ${contract.requiredFields.join(', ')}. Say honestly how it ended: status completed, partial, blocked, unknown or out_of_scope (finding nothing is partial or unknown, never a clean "no issue"); list what you could not check under unknowns.`,
    parameters: reportSchemaOf(contract),
    annotations: readOnlyAnnotations,
    risk: 'read',
    sideEffect: 'none',
    resumePolicy: 'rerun-after-check',
    async execute(report) {
      return { ok: true, output: `report accepted (status ${String(report.status)}); your task ends when this turn closes`, value: report };
    },
  });
