import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';

function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.LIST:
      return node.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      return null;
  }
}

/** `attributes` in answers: a JSON object (key → string, number, boolean or array). */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'A JSON value: object, array, string, number, boolean or null.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literal,
});
