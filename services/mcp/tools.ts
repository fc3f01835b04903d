import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { authorize, invokeOperation, type Operation } from '../core/operation.ts';
import { AppError } from '../core/errors.ts';

/** One tool an agent sees. `run` goes through the same operation runner as REST. */
export interface AgentTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  run(ctx: OperationContext, args: unknown): Promise<unknown>;
  /** The operation behind the tool, when there is one (rate limits, visibility). */
  operation?: Operation;
}

/** MCP tool names: the operation id with dots as underscores (`content.list` → `content_list`). */
export const toolName = (operation: Operation) => operation.id.replace(/[^A-Za-z0-9_-]/g, '_');

function inputSchemaOf(operation: Operation): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { type: 'object', ...schema };
}

export function operationTool(operation: Operation): AgentTool {
  return {
    name: toolName(operation),
    description: `${operation.summary}${operation.description ? `\n\n${operation.description}` : ''}\n\n(${operation.method} /api/manage/v1${operation.path})`,
    inputSchema: inputSchemaOf(operation),
    run: (ctx, args) => invokeOperation(operation, ctx, args),
    operation,
  };
}

function allowed(operation: Operation, ctx: OperationContext): boolean {
  try {
    authorize(operation, ctx);
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/**
 * The tools this caller may use: every Management operation its key or grant passes the
 * capability check for, then whatever plugins add through the `mcp.tools` filter.
 */
export async function toolsFor(ctx: OperationContext): Promise<AgentTool[]> {
  const operations = ctx.services.features
    .flatMap((feature) => feature.operations)
    .filter((op) => op.surface === 'manage' && !op.hiddenFromTools && !op.produces && allowed(op, ctx));
  return ctx.services.hooks.applyFilters('mcp.tools', operations.map(operationTool), { ctx });
}
