import { reportSchemaOf, type OutputContract } from '../../models/report-contracts.js';
import { reportTool } from '../../machines/session.machine.js';
import { defineTool, readOnlyAnnotations, toolFailure, type AnyToolDefinition } from './tool.js';
import { testReportProblem } from './report-evidence.js';

/**
 * `submit_report`, the tool only child agents see: its schema is the child's output contract (the format with its
 * required fields). A valid report settles ok with the report as `tool.settled.value`; the child ends `completed`
 * once that turn reaches MutationReady. An invalid one is a model-visible `InvalidInput` (schema stage): one
 * correction round, then the child fails with a contract failure. So is a test report whose command, exit code or
 * verdict no command the child ran bears out (runtime-validation stage, code `report_unverified`).
 */
export const submitReportTool = (contract: OutputContract): AnyToolDefinition =>
  defineTool<Record<string, unknown>>({
    name: reportTool,
    description: `End your task by submitting your ${contract.format}. Required fields: ${contract.requiredFields.join(', ')}. Say honestly how it ended: status completed, partial, blocked, unknown or out_of_scope (finding nothing is partial or unknown, never a clean "no issue"); list what you could not check under unknowns.${contract.format === 'test-report' ? ' command, exit_code and passed must be those of a command you ran with bash in this task (the command exactly as you ran it); they are checked against the recorded run.' : ''}`,
    parameters: reportSchemaOf(contract),
    annotations: readOnlyAnnotations,
    risk: 'read',
    sideEffect: 'none',
    resumePolicy: 'rerun-after-check',
    async prepare(report, context) {
      if (contract.format !== 'test-report') return { ok: true, plan: undefined };
      const problem = testReportProblem(report, context.executions ?? new Map(), context.verifications);
      return problem === undefined ? { ok: true, plan: undefined } : toolFailure('InvalidInput', `the test report is not what ran: ${problem}`, 'report_unverified');
    },
    async execute(report) {
      return { ok: true, output: `report accepted (status ${String(report.status)}); your task ends when this turn closes`, value: report };
    },
  });
