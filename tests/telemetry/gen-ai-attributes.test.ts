import { readFile } from 'node:fs/promises';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { attr, operation } from '../../src/telemetry/gen-ai-attributes.js';
import { reinScope } from '../../src/telemetry/instrumentation-scope.js';

/** rein's copy of each semantic-conventions name, against the package's own constant. */
const expected: Record<keyof typeof attr, string> = {
  operationName: semconv.ATTR_GEN_AI_OPERATION_NAME,
  providerName: semconv.ATTR_GEN_AI_PROVIDER_NAME,
  requestModel: semconv.ATTR_GEN_AI_REQUEST_MODEL,
  responseModel: semconv.ATTR_GEN_AI_RESPONSE_MODEL,
  responseId: semconv.ATTR_GEN_AI_RESPONSE_ID,
  finishReasons: semconv.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  inputTokens: semconv.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  outputTokens: semconv.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  toolName: semconv.ATTR_GEN_AI_TOOL_NAME,
  toolCallId: semconv.ATTR_GEN_AI_TOOL_CALL_ID,
  toolType: semconv.ATTR_GEN_AI_TOOL_TYPE,
  toolCallArguments: semconv.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  toolCallResult: semconv.ATTR_GEN_AI_TOOL_CALL_RESULT,
  agentName: semconv.ATTR_GEN_AI_AGENT_NAME,
  agentId: semconv.ATTR_GEN_AI_AGENT_ID,
  agentDescription: semconv.ATTR_GEN_AI_AGENT_DESCRIPTION,
  conversationId: semconv.ATTR_GEN_AI_CONVERSATION_ID,
  inputMessages: semconv.ATTR_GEN_AI_INPUT_MESSAGES,
  outputMessages: semconv.ATTR_GEN_AI_OUTPUT_MESSAGES,
  systemInstructions: semconv.ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  toolDefinitions: semconv.ATTR_GEN_AI_TOOL_DEFINITIONS,
  errorType: semconv.ATTR_ERROR_TYPE,
  processExitCode: semconv.ATTR_PROCESS_EXIT_CODE,
  serverAddress: semconv.ATTR_SERVER_ADDRESS,
  serverPort: semconv.ATTR_SERVER_PORT,
  serviceName: semconv.ATTR_SERVICE_NAME,
  serviceVersion: semconv.ATTR_SERVICE_VERSION,
};

describe('the OpenTelemetry names rein copies', () => {
  it('match @opentelemetry/semantic-conventions/incubating', () => {
    expect(attr).toEqual(expected);
    expect(operation).toEqual({ chat: semconv.GEN_AI_OPERATION_NAME_VALUE_CHAT, executeTool: semconv.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL, invokeAgent: semconv.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT });
  });

  it('name the instrumentation scope with the package version', async () => {
    const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(reinScope).toEqual({ name: 'rein', version: manifest.version });
  });
});
