import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { submitReportTool } from '../../src/tools/submit-report.tool.js';
import { ReportFormat, requiredFieldsOf } from '../../models/report-contracts.js';
import { toolSearchTool } from '../../src/capabilities/tool-search.tool.js';
import { skillTool } from '../../src/skills/skill.tool.js';
import { mcpResourceTools } from '../../src/mcp/mcp-resource.tools.js';

describe('what the model sees of the tools', () => {
  it('advertises every tool’s JSON Schema (a change here is a change to the model-facing surface)', () => {
    const registry = new ToolRegistry(builtinTools());
    for (const description of registry.describe()) {
      expect({ name: description.name, description: description.description, inputSchema: description.inputSchema }).toMatchSnapshot(description.name);
    }
  });

  it('declares the classes permission and resume rely on', () => {
    const summary = Object.fromEntries(builtinTools().map((tool) => [tool.name, { readOnly: tool.annotations.readOnly, risk: tool.risk, sideEffect: tool.sideEffect, resumePolicy: tool.resumePolicy }]));
    expect(summary).toMatchSnapshot();
  });

  it('advertises the capability tools: tool_search, skill (its description is the index), and the MCP resource tools', () => {
    const skills = [{ name: 'test-fix', description: 'Fix failing tests.', path: '.agents/skills/test-fix/SKILL.md', scope: 'project' as const, root: '/x' }];
    const access = { servers: () => [], list: async () => [], read: async () => [], failure: () => ({ code: 'Unavailable' as const, message: '' }) };
    const registry = new ToolRegistry([toolSearchTool as never, skillTool(skills), ...mcpResourceTools(access)]);
    for (const description of registry.describe()) expect({ name: description.name, description: description.description, inputSchema: description.inputSchema }).toMatchSnapshot(description.name);
  });

  it('advertises submit_report with each output contract as its schema (only child agents see it)', () => {
    for (const format of ReportFormat.options) {
      const registry = new ToolRegistry([submitReportTool({ format, requiredFields: requiredFieldsOf(format) })]);
      const [description] = registry.describe();
      expect({ name: description!.name, description: description!.description, inputSchema: description!.inputSchema }).toMatchSnapshot(format);
    }
  });
});
