// Loads @nestjs/core (ESM), so it runs with the integration tests' ESM support; it starts nothing but Nest's schema builder.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
  type GraphQLSchema,
} from 'graphql';
import { ApiModule } from '../api.module';
import { BUILD_SCHEMA_OPTIONS } from './graphql.drivers';

/**
 * The schema the API serves, built from every resolver ApiModule registers (so a resolver added
 * there is covered without touching this test) with the drivers' own options.
 */
async function apiSchema(): Promise<GraphQLSchema> {
  // The resolver classes ApiModule provides (the other providers are services); nothing here runs one.
  const resolvers = (ApiModule.forRoot().providers ?? []).filter((p): p is NonNullable<typeof p> & (new () => unknown) => {
    return typeof p === 'function' && p.name.endsWith('Resolver');
  });
  const app = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
  await app.init();
  try {
    return await app.get(GraphQLSchemaFactory).create(resolvers, BUILD_SCHEMA_OPTIONS);
  } finally {
    await app.close();
  }
}

/** Every schema element a customer reads in the explorer's docs that has no description, as `Type`, `Type.field`, `Type.field(arg)` or `Enum.VALUE`. */
export function undescribed(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  const blank = (text: string | null | undefined) => !text?.trim();
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean));
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    // Query and Mutation are the entry points GraphQL itself names; their fields carry the descriptions.
    if (!roots.has(type as never) && blank(type.description)) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (blank(field.description)) missing.push(`${type.name}.${field.name}`);
        for (const arg of field.args) if (blank(arg.description)) missing.push(`${type.name}.${field.name}(${arg.name})`);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) if (blank(field.description)) missing.push(`${type.name}.${field.name}`);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) if (blank(value.description)) missing.push(`${type.name}.${value.name}`);
    }
  }
  return missing.sort();
}

describe('GraphQL schema documentation', () => {
  it('describes every type, field, argument, input field and enum value', async () => {
    const schema = await apiSchema();
    // The premise: the schema holds what the API serves, not an empty shell.
    expect(Object.keys(schema.getQueryType()!.getFields())).toEqual(expect.arrayContaining(['trace', 'traces', 'tenants']));
    expect(undescribed(schema)).toEqual([]);
  });
});
