// Loads @nestjs/core (ESM), so it runs with the integration tests' ESM support; it starts nothing but Nest's schema builder.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import {
  Field,
  GraphQLSchemaBuilderModule,
  GraphQLSchemaFactory,
  ObjectType,
  Query,
  Resolver,
  type FieldMiddleware,
} from '@nestjs/graphql';
import { execute, parse, type GraphQLSchema } from 'graphql';
import { withPlainFieldsInline } from './plain-fields';

const upperCase: FieldMiddleware = async (_context, next) => String(await next()).toUpperCase();

@ObjectType()
class Sample {
  @Field() plain!: string;
  @Field({ name: 'renamed' }) original!: string;
  @Field({ nullable: true, defaultValue: 'fallback' }) withDefault?: string;
  @Field({ middleware: [upperCase] }) shouted!: string;
}

@Resolver(() => Sample)
class SampleResolver {
  @Query(() => Sample)
  sample(): Sample {
    return { plain: 'p', original: 'o', shouted: 's' };
  }
}

/** The schema as Nest's code-first builder makes it: every @Field with its own resolver. */
async function nestSchema(): Promise<GraphQLSchema> {
  const app = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
  await app.init();
  try {
    return await app.get(GraphQLSchemaFactory).create([SampleResolver]);
  } finally {
    await app.close();
  }
}

describe('withPlainFieldsInline', () => {
  it("takes Nest's property resolver off plain fields, so graphql-jit reads them inline", async () => {
    const schema = await nestSchema();
    const sample = () => schema.getType('Sample') as import('graphql').GraphQLObjectType;
    // The premise: Nest gives a plain field a resolver. If an upgrade stops doing that, this fails and the transform can go.
    expect(sample().getFields().plain!.resolve?.name).toBe('rootFieldResolver');
    withPlainFieldsInline(schema);
    expect(sample().getFields().plain!.resolve).toBeUndefined();
  });

  it('keeps every resolver that does more than read the field of the same name', async () => {
    const schema = withPlainFieldsInline(await nestSchema());
    const fields = (schema.getType('Sample') as import('graphql').GraphQLObjectType).getFields();
    expect(fields.renamed!.resolve).toBeDefined();
    expect(fields.withDefault!.resolve).toBeDefined();
    expect(fields.shouted!.resolve).toBeDefined();
  });

  it('answers the same as before the transform', async () => {
    const query = parse('{ sample { plain renamed withDefault shouted } }');
    const before = await execute({ schema: await nestSchema(), document: query, rootValue: { sample: new SampleResolver().sample() } });
    const after = await execute({
      schema: withPlainFieldsInline(await nestSchema()),
      document: query,
      rootValue: { sample: new SampleResolver().sample() },
    });
    expect(after).toEqual(before);
    expect(after.data).toEqual({ sample: { plain: 'p', renamed: 'o', withDefault: 'fallback', shouted: 'S' } });
  });
});
