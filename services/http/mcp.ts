import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '../core/context.ts';
import { AppError, UnauthorizedError } from '../core/errors.ts';
import { mcpResourceOf, protectedResourceMetadataUrl } from './oauth.ts';
import type { AccessGate } from '../access/gate.ts';
import { serviceVersion } from '../core/version.ts';
import { toolsFor } from '../mcp/tools.ts';
import { requestFacts, requireScope } from './request-scope.ts';
import { createOperationRunner } from './run-operation.ts';

/**
 * `/api/mcp`: the Management operations as MCP tools over the Streamable HTTP transport, stateless
 * (every POST carries its own credentials, so any gateway can answer it). A caller authenticates
 * exactly as on the Management API (or with an OAuth access token, see ./oauth.ts) and sees only the
 * tools its key or grant can use.
 */
export async function mcpExtension(app: FastifyInstance, services: Services, gate: AccessGate): Promise<void> {
  const runner = createOperationRunner(services, gate);
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    // An API key, or an OAuth access token bound to this endpoint or to the Management API; MCP
    // switched off by the platform is a 403 naming the switch, after authentication.
    const ctx = await runner
      .open({
        surface: 'manage',
        credentials: {
          authorization: request.headers.authorization,
          cookies: {},
          ip: request.ip,
          origin: request.headers.origin,
          method: request.method,
          resources: [mcpResourceOf(request), `${request.protocol}://${request.host}/api/manage/v1`],
        },
        scope: requireScope(request),
        request: requestFacts(request),
        transportSwitch: 'mcp',
      })
      .catch((error) => {
        // Tells an OAuth-capable client where to find the authorization server (RFC 9728).
        if (error instanceof UnauthorizedError) error.headers['www-authenticate'] = `Bearer resource_metadata="${protectedResourceMetadataUrl(request)}"`;
        throw error;
      });
    const tools = await toolsFor(ctx);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));

    const server = new Server({ name: 'content-workflow-backend', version: serviceVersion }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema: inputSchema as never })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
      const tool = byName.get(params.name);
      // An unknown tool and a tool this caller may not use look the same.
      if (!tool) return { isError: true, content: [{ type: 'text', text: 'Unknown tool' }] };
      try {
        // An operation's tool runs the same sequence as its REST route; a plugin's own tool is
        // counted like one and runs. Each call of a JSON-RPC batch spends the key's and the IP's
        // budget: past it, the rest are refused with the 429 tool error, unrun.
        const args = params.arguments ?? {};
        const result = (
          tool.operation
            ? await runner.run(ctx, tool.operation, args)
            : await runner.call(ctx, { id: `tool:${tool.name}`, surface: 'manage' }, () => tool.run(ctx, args))
        ).value;
        const structured = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : { result };
        return { content: [{ type: 'text', text: JSON.stringify(result ?? null) }], structuredContent: structured };
      } catch (error) {
        if (error instanceof AppError) {
          return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: error.message, status: error.status }) }] };
        }
        request.log.error({ err: error }, 'tool failed');
        return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: 'Internal server error', status: 500 }) }] };
      }
    });

    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  };

  app.post('/api/mcp', handle);
  // Stateless: no server-initiated stream and no session to delete.
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(405).header('allow', 'POST').send({ error: 'Method not allowed' });
  app.get('/api/mcp', notAllowed);
  app.delete('/api/mcp', notAllowed);
}
