import { z } from 'zod';
import type { Operation, Surface } from '../core/operation.ts';

type JsonSchema = Record<string, unknown>;

const toJsonSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
};

export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
export const pathParamNames = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

function requirementAnnotation(operation: Operation): string | string[] {
  const requirement = operation.requires;
  if (requirement === 'platform') return 'platform-operator';
  return requirement;
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function describeOperation(operation: Operation, surface: Surface) {
  const input = toJsonSchema(operation.input, 'input');
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((input.required as string[] | undefined) ?? []);
  const pathNames = new Set(pathParamNames(operation.path));
  const inQuery = operation.method === 'GET' || operation.method === 'DELETE';

  const parameters = Object.entries(properties)
    .filter(([name]) => pathNames.has(name) || inQuery)
    .map(([name, schema]) => ({
      name,
      in: pathNames.has(name) ? 'path' : 'query',
      required: pathNames.has(name) || required.has(name),
      schema,
      ...(schema.description ? { description: schema.description } : {}),
    }));

  const bodyEntries = inQuery ? [] : Object.entries(properties).filter(([name]) => !pathNames.has(name));
  const bodySchema = {
    type: 'object',
    properties: Object.fromEntries(bodyEntries),
    required: bodyEntries.map(([name]) => name).filter((name) => required.has(name)),
    additionalProperties: input.additionalProperties ?? false,
  };
  const mediaType = operation.body === 'multipart' ? 'multipart/form-data' : 'application/json';
  const multipartSchema = {
    type: 'object',
    properties: { file: { type: 'string', format: 'binary' } },
    required: ['file'],
  };

  const status = String(operation.status ?? 200);
  const secured = surface !== 'public' && operation.requires !== 'public';
  return {
    operationId: operation.id,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: [operation.id.split('.')[0]],
    ...(parameters.length ? { parameters } : {}),
    ...(inQuery
      ? {}
      : {
          requestBody: {
            required: operation.body === 'multipart' || bodySchema.required.length > 0,
            content: { [mediaType]: { schema: operation.body === 'multipart' ? multipartSchema : bodySchema } },
          },
        }),
    ...(secured ? { security: [{ bearerAuth: [] }], 'x-required-capability': requirementAnnotation(operation) } : {}),
    responses: {
      ...(operation.produces
        ? {
            [status]: {
              description: 'The file',
              content: Object.fromEntries(operation.produces.contentTypes.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
            },
            ...(operation.produces.ranges ? { '206': { description: 'The requested byte range (`format=tar` only)' }, '416': errorResponse('Range not satisfiable') } : {}),
            '304': { description: 'Not modified (If-None-Match matched the ETag)' },
          }
        : {
            [status]: {
              description: 'Success',
              content: { 'application/json': { schema: toJsonSchema(operation.output, 'output') } },
            },
          }),
      '400': errorResponse('Invalid input'),
      ...(secured ? { '401': errorResponse('Unauthorized'), '403': errorResponse('Forbidden'), '429': errorResponse('Rate limited') } : {}),
      '404': errorResponse('Not found'),
    },
  };
}

export interface OpenApiInfo {
  title: string;
  version: string;
  basePath: string;
  serverUrl?: string;
}

/** OpenAPI 3.1 document for one surface, generated from the operation registry. */
export function buildOpenApiDocument(surface: Surface, operations: readonly Operation[], info: OpenApiInfo) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations.filter((op) => op.surface === surface)) {
    const path = openApiPath(operation.path);
    paths[path] ??= {};
    paths[path][operation.method.toLowerCase()] = describeOperation(operation, surface);
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: `${info.serverUrl ?? ''}${info.basePath}` }],
    paths,
    components: {
      schemas: {
        Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
      },
      ...(surface === 'public' ? {} : { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } }),
    },
  };
}
