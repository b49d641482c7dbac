import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** The typed reports a child agent can return (its output contract's format). */
export const ReportFormat = lazySchema(() => z.enum(['finding-report', 'test-report', 'review-report', 'patch-proposal']));
export type ReportFormat = z.infer<typeof ReportFormat>;

/**
 * How honestly a report ends: `completed` (the objective is met, with evidence), `partial` (some of it), `blocked`
 * (something outside the child's rights stopped it), `unknown` (no conclusion either way — never "no issue"),
 * `out_of_scope` (the objective needs more than the task's scope allows).
 */
export const ReportStatus = lazySchema(() => z.enum(['completed', 'partial', 'blocked', 'unknown', 'out_of_scope']));
export type ReportStatus = z.infer<typeof ReportStatus>;

const text = (max: number) => z.string().max(max);
const list = (max: number) => z.array(text(2_000)).max(max);

/** A request the child could not serve inside its scope, handed back to the parent. */
const OutOfScopeRequest = lazySchema(() => z.object({ request: text(1_000), reason: text(1_000) }).strict());

/** Fields every report has; `unknowns` and `out_of_scope` must survive the join. Built with each report schema, on first use. */
const common = () => ({
  status: ReportStatus,
  summary: text(4_000).min(1),
  unknowns: list(100).optional(),
  out_of_scope: z.array(OutOfScopeRequest).max(50).optional(),
});

const Evidence = lazySchema(() => z.object({ file: text(1_000).min(1), line: z.number().int().positive().optional(), snippet: text(2_000).optional() }).strict());

/** An explorer's findings: what was checked, each claim with its evidence and confidence. */
export const FindingReport = lazySchema(() => z
  .object({
    ...common(),
    checked_paths: list(1_000),
    findings: z.array(z.object({ claim: text(2_000).min(1), evidence: z.array(Evidence).max(50), confidence: z.enum(['low', 'medium', 'high']) }).strict()).max(200),
    excluded_paths: z.array(z.object({ path: text(1_000), reason: text(1_000) }).strict()).max(200).optional(),
    risks: list(100).optional(),
    recommendation: text(4_000),
  })
  .strict());
export type FindingReport = z.infer<typeof FindingReport>;

/** A tester's result: the command, how it exited and which tests failed. */
export const TestReport = lazySchema(() => z
  .object({
    ...common(),
    command: text(4_000).min(1),
    exit_code: z.number().int(),
    passed: z.boolean(),
    failing_tests: list(500),
    relevant_output: text(8_000),
    environment_notes: list(50).optional(),
  })
  .strict());
export type TestReport = z.infer<typeof TestReport>;

/** A reviewer's verdict with its findings and the risk that remains. */
export const ReviewReport = lazySchema(() => z
  .object({
    ...common(),
    verdict: z.enum(['pass', 'needs_changes', 'blocked']),
    findings: z.array(z.object({ severity: z.enum(['low', 'medium', 'high']), title: text(500).min(1), file: text(1_000).optional(), line: z.number().int().positive().optional(), body: text(4_000) }).strict()).max(200),
    residual_risk: list(100),
  })
  .strict());
export type ReviewReport = z.infer<typeof ReviewReport>;

/** A worker's proposal: the changes it suggests (the parent applies them through its own pipeline). */
export const PatchProposal = lazySchema(() => z
  .object({
    ...common(),
    changes: z.array(z.object({ path: text(1_000).min(1), description: text(2_000).min(1), diff: text(20_000).optional() }).strict()).max(100),
    rationale: text(4_000),
    risks: list(100).optional(),
    verification: text(2_000).optional(),
  })
  .strict());
export type PatchProposal = z.infer<typeof PatchProposal>;

/** The schema of each report format. */
export const reportSchemas = {
  'finding-report': FindingReport,
  'test-report': TestReport,
  'review-report': ReviewReport,
  'patch-proposal': PatchProposal,
} as const satisfies Record<ReportFormat, z.ZodObject>;

/** A report of any format (what `delegation.completed` carries). */
export type Report = FindingReport | TestReport | ReviewReport | PatchProposal;

const requiredByFormat = new Map<ReportFormat, readonly string[]>();

/** The fields a format requires before any task-specific requirement (found once per format: a delegation asks per task). */
export const requiredFieldsOf = (format: ReportFormat): string[] => {
  let required = requiredByFormat.get(format);
  if (required === undefined) {
    required = Object.entries(reportSchemas[format].shape)
      .filter(([, field]) => !(field as z.ZodType).safeParse(undefined).success)
      .map(([name]) => name);
    requiredByFormat.set(format, required);
  }
  return [...required];
};

/** The optional fields of a format: the ones a task package may additionally require. */
export const optionalFieldsOf = (format: ReportFormat): string[] =>
  Object.keys(reportSchemas[format].shape).filter((name) => !requiredFieldsOf(format).includes(name));

/** An output contract: a report format and the fields it must carry (its own required ones plus the task's). */
export const OutputContract = lazySchema(() => z.object({ format: ReportFormat, requiredFields: z.array(z.string().min(1)).max(32) }));
export type OutputContract = z.infer<typeof OutputContract>;

/**
 * The zod schema `submit_report` validates against for a contract: the format's schema with the contract's extra
 * fields made required, plus the honesty rule — a `completed` finding report must carry at least one finding
 * (finding nothing is `partial` or `unknown`, never proof that nothing is there).
 */
export const reportSchemaOf = (contract: OutputContract): z.ZodType<Record<string, unknown>> => {
  const base = reportSchemas[contract.format];
  const shape: Record<string, z.ZodType> = { ...base.shape };
  for (const field of contract.requiredFields) {
    const current = shape[field];
    if (current && current instanceof z.ZodOptional) shape[field] = current.unwrap() as z.ZodType;
  }
  return z
    .object(shape)
    .strict()
    .superRefine((report, context) => {
      if (contract.format === 'finding-report' && report.status === 'completed' && Array.isArray(report.findings) && report.findings.length === 0) {
        context.addIssue({ code: 'custom', path: ['status'], message: 'a completed finding report needs at least one finding; report "partial" or "unknown" (with unknowns) when nothing was found' });
      }
    }) as unknown as z.ZodType<Record<string, unknown>>;
};
