import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildSchema, getNullableType, isListType, isNonNullType, isObjectType, isScalarType, type GraphQLOutputType, type GraphQLSchema } from 'graphql';
import { typeDefs } from '../../services/content/graphql-schema.ts';
import { publicContentTypesOp, publicGetContentOp, publicListContentOp, publicSearchOp } from '../../services/content/public-content-ops.ts';
import { publicGetMenuOp, publicListMenusOp } from '../../services/menus/public-ops.ts';

/**
 * The GraphQL SDL is written by hand; this test proves it says what the public operations' zod
 * `output` schemas say, field by field: the same field names on every object, non-null exactly
 * where the zod field is required and not nullable, the same scalar kinds, lists where arrays are.
 * (`JSON` stands for free-form values.) The runner checks every answer against those zod schemas,
 * so GraphQL answers are covered too.
 */
type Json = Record<string, unknown>;

const SCALAR_KINDS: Record<string, string[]> = { ID: ['string'], String: ['string'], Int: ['integer'], Float: ['number', 'integer'], Boolean: ['boolean'] };

function unwrapNull(schema: Json): { schema: Json; nullable: boolean } {
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const rest = schema.type.filter((t) => t !== 'null');
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  const anyOf = schema.anyOf as Json[] | undefined;
  if (anyOf && anyOf.some((s) => s.type === 'null')) {
    const rest = anyOf.filter((s) => s.type !== 'null');
    return { schema: rest.length === 1 ? rest[0] : { anyOf: rest }, nullable: true };
  }
  return { schema, nullable: false };
}

/** Every difference between a GraphQL output type and a JSON schema (from zod), as readable paths. */
function compare(type: GraphQLOutputType, schema: Json, required: boolean, path: string, out: string[]): void {
  const { schema: inner, nullable } = unwrapNull(schema);
  const nonNull = isNonNullType(type);
  if (nonNull !== (required && !nullable))
    out.push(`${path}: GraphQL ${nonNull ? 'non-null' : 'nullable'}, zod ${required && !nullable ? 'required' : nullable ? 'nullable' : 'optional'}`);
  const bare = getNullableType(type) as GraphQLOutputType;
  if (isScalarType(bare)) {
    if (bare.name === 'JSON') return;
    const kinds = SCALAR_KINDS[bare.name];
    if (!kinds?.includes(String(inner.type))) out.push(`${path}: GraphQL ${bare.name}, zod ${JSON.stringify(inner.type ?? inner)}`);
    return;
  }
  if (isListType(bare)) {
    if (inner.type !== 'array') return void out.push(`${path}: GraphQL list, zod ${String(inner.type)}`);
    const items = inner.items as Json;
    // A depth-limited tree ends in `z.array(z.never())`: nothing below to compare.
    if (items && 'not' in items) return;
    compare(bare.ofType as GraphQLOutputType, items, true, `${path}[]`, out);
    return;
  }
  if (isObjectType(bare)) {
    if (inner.type !== 'object' || !inner.properties) return void out.push(`${path}: GraphQL ${bare.name}, zod ${String(inner.type)}`);
    const properties = inner.properties as Record<string, Json>;
    const requiredKeys = new Set((inner.required as string[] | undefined) ?? []);
    const fields = bare.getFields();
    for (const name of Object.keys(properties)) if (!fields[name]) out.push(`${path}.${name}: in zod, missing from GraphQL ${bare.name}`);
    for (const [name, field] of Object.entries(fields)) {
      if (!properties[name]) out.push(`${path}.${name}: in GraphQL ${bare.name}, missing from zod`);
      else compare(field.type, properties[name], requiredKeys.has(name), `${path}.${name}`, out);
    }
  }
}

const jsonOf = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Json;

/** Each Query field, with the operation's output as the resolver returns it. */
function differences(schema: GraphQLSchema): string[] {
  const query = schema.getQueryType()!.getFields();
  const typesOutput = jsonOf(publicContentTypesOp.output) as { properties: { types: Json } };
  const pairs: Array<[string, Json, boolean]> = [
    ['content', jsonOf(publicListContentOp.output), true],
    // `entry` and `menu` answer null for a 404 (the resolver's `orNull`).
    ['entry', jsonOf(publicGetContentOp.output), false],
    ['contentTypes', typesOutput.properties.types, true],
    ['menus', jsonOf(publicListMenusOp.output), true],
    ['menu', jsonOf(publicGetMenuOp.output), false],
    ['search', jsonOf(publicSearchOp.output), true],
  ];
  const out: string[] = [];
  for (const [name, json, required] of pairs) {
    if (!query[name]) out.push(`Query.${name}: missing`);
    else compare(query[name].type, json, required, `Query.${name}`, out);
  }
  return out;
}

describe('GraphQL SDL against the public operations’ zod outputs', () => {
  it('matches field by field', () => {
    expect(differences(buildSchema(typeDefs))).toEqual([]);
  });

  it('negative control: a dropped field, a nullability slip and a wrong scalar are each reported', () => {
    const broken = typeDefs
      .replace('    excerpt: String\n', '')
      .replace('    updatedAt: String!\n    preview', '    updatedAt: String\n    preview')
      .replace('    total: Int!', '    total: String!');
    const found = differences(buildSchema(broken));
    expect(found).toContain('Query.content.items[].excerpt: in zod, missing from GraphQL Entry');
    expect(found).toContain('Query.content.items[].updatedAt: GraphQL nullable, zod required');
    expect(found).toContain('Query.content.total: GraphQL String, zod "integer"');
  });
});
