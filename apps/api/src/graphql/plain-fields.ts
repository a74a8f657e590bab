import { GraphQLObjectType, isObjectType, type GraphQLSchema } from 'graphql';

/** What Nest's code-first builder names the resolver it gives every plain `@Field`. */
const NEST_PROPERTY_RESOLVER = 'rootFieldResolver';

/**
 * Takes Nest's property-reading resolver off every plain field, so that both graphql-js and
 * graphql-jit read the property directly.
 *
 * Nest's code-first builder gives every `@Field` a resolver, `(root) => root[property] ?? defaultValue`.
 * graphql-jit compiles fields without a resolver to an inline property read, but calls each field
 * that has one through its deferred-resolver path: for a 180-row `costBreakdown` that is 900 calls,
 * and for the spans of a 10,000-span trace 60,000 or more. Only resolvers that behave exactly like
 * the default one are removed: named as Nest names it, reading the field's own name, and with no
 * default value (a resolver wrapped in field middleware has another name and stays).
 */
export function withPlainFieldsInline(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    inlinePlainFields(type);
  }
  return schema;
}

function inlinePlainFields(type: GraphQLObjectType): void {
  for (const field of Object.values(type.getFields())) {
    const resolve = field.resolve;
    if (
      !resolve ||
      resolve.name !== NEST_PROPERTY_RESOLVER ||
      !readsOwnProperty(resolve as (root: Record<string, unknown>) => unknown, field.name)
    )
      continue;
    field.resolve = undefined;
  }
}

/** Nest's resolver only reads its root: probe it with a root that has the field and one that has not. */
function readsOwnProperty(resolve: (root: Record<string, unknown>) => unknown, name: string): boolean {
  const probe = Symbol(name);
  return resolve({ [name]: probe }) === probe && resolve({}) === undefined;
}
