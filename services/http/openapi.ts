import { z } from 'zod';
import type { Operation, Surface } from '../core/operation.ts';
import { errorStatuses, MAX_PATH_PARAM_LENGTH, STATUS_DESCRIPTIONS } from '../core/statuses.ts';

type JsonSchema = Record<string, unknown>;

const toJsonSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
};

import { openApiPath, pathParamNames } from '../core/operation.ts';
import { NDJSON_CONTENT_TYPE } from '../core/ndjson.ts';

export { openApiPath, pathParamNames };

function requirementAnnotation(operation: Operation): string | string[] {
  return operation.requires;
}

const anonymousSurface = (surface: Surface) => surface === 'public' || surface === 'comments';

const withMaxLength = (schema: JsonSchema, max: number): JsonSchema =>
  schema.type === 'string' ? { ...schema, maxLength: Math.min(max, (schema.maxLength as number | undefined) ?? max) } : schema;

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
      // The router refuses longer path segments (414): the document says so as their maxLength.
      schema: pathNames.has(name) ? withMaxLength(schema, MAX_PATH_PARAM_LENGTH) : schema,
      ...(schema.description ? { description: schema.description } : {}),
    }));

  const bodyEntries = inQuery ? [] : Object.entries(properties).filter(([name]) => !pathNames.has(name));
  const bodySchema = {
    type: 'object',
    properties: Object.fromEntries(bodyEntries),
    required: bodyEntries.map(([name]) => name).filter((name) => required.has(name)),
    additionalProperties: input.additionalProperties ?? false,
  };
  const mediaType = operation.body === 'multipart' ? 'multipart/form-data' : operation.body === 'ndjson' ? NDJSON_CONTENT_TYPE : 'application/json';
  const multipartSchema = {
    type: 'object',
    properties: { file: { type: 'string', format: 'binary' } },
    required: ['file'],
  };

  const ndjsonSchema = { type: 'string', description: 'One JSON object per line' };

  const status = String(operation.status ?? 200);
  const secured = !anonymousSurface(surface) && operation.requires !== 'public';
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
            required: operation.body === 'multipart' || operation.body === 'ndjson' || bodySchema.required.length > 0,
            content: { [mediaType]: { schema: operation.body === 'multipart' ? multipartSchema : operation.body === 'ndjson' ? ndjsonSchema : bodySchema } },
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
            ...(operation.produces.ranges ? { '206': { description: 'The requested byte range' } } : {}),
            '304': { description: 'Not modified (If-None-Match matched the ETag)' },
          }
        : {
            [status]: {
              description: 'Success',
              content: { 'application/json': { schema: toJsonSchema(operation.output, 'output') } },
            },
          }),
      ...Object.fromEntries(errorStatuses(operation).map((code) => [String(code), errorResponse(STATUS_DESCRIPTIONS[code] ?? 'Error')])),
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
      ...(anonymousSurface(surface) ? {} : { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } }),
    },
  };
}
