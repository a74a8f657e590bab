import { Catch } from '@nestjs/common';
import type { GqlExceptionFilter } from '@nestjs/graphql';

/**
 * Hands every resolver error back to GraphQL untouched, where graphqlErrorFormatter maps it once.
 * Without it Nest logs each expected refusal (a wrong key, bad input) as an ERROR with a stack.
 */
@Catch()
export class GraphqlPassthroughFilter implements GqlExceptionFilter {
  catch(exception: unknown): unknown {
    return exception;
  }
}
