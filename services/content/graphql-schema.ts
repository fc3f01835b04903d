import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';

export const typeDefs = /* GraphQL */ `
  scalar JSON

  type Entry {
    id: ID!
    type: String!
    title: String!
    slug: String!
    locale: String!
    status: String!
    excerpt: String
    blocks: JSON!
    fields: JSON!
    terms: JSON!
    publishedAt: String
    "Where the entry lives on the public site, by the site's permalink rule (/en/post/hello)."
    path: String!
    updatedAt: String!
    preview: Boolean
  }

  type EntryList {
    items: [Entry!]!
    nextCursor: String
    total: Int!
    locale: String!
  }

  type ContentType {
    slug: String!
    label: String!
    description: String!
    builtin: Boolean!
    fields: JSON!
  }

  type MenuEntryRef {
    id: ID!
    type: String!
    slug: String!
  }

  type MenuItem {
    label: String!
    url: String
    target: String!
    entry: MenuEntryRef
    children: [MenuItem!]!
  }

  type Menu {
    id: ID!
    slug: String!
    name: String!
    locale: String
    location: String
    layout: JSON!
    design: JSON!
    items: [MenuItem!]!
    updatedAt: String!
  }

  type MenuList {
    menus: [Menu!]!
    locale: String!
  }

  type MenuResult {
    menu: Menu!
    locale: String!
  }

  type Query {
    "Published content, newest first (same rules as GET /api/v1/content)."
    content(type: String, slug: String, locale: String, limit: Int, cursor: String, preview: Boolean): EntryList!
    "One published entry by slug, or null."
    entry(slug: String!, locale: String, preview: Boolean): Entry
    contentTypes: [ContentType!]!
    menus(locale: String): MenuList!
    menu(slug: String!, locale: String): MenuResult
    "Published entries matching every word of q, best match first (same rules as GET /api/v1/search)."
    search(q: String!, type: String, term: String, locale: String, limit: Int, cursor: String): EntryList!
  }
`;

function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literal(f.value)]));
    case Kind.LIST:
      return node.values.map(literal);
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.VARIABLE:
      return undefined;
    default:
      return (node as { value: unknown }).value;
  }
}

/** Block documents and custom fields are free-form JSON. */
export const JsonScalar = new GraphQLScalarType({
  name: 'JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literal,
});
