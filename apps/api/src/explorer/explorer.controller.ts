import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { introspectionFromSchema, type IntrospectionQuery } from 'graphql';
import { notFound } from '@spanforge/errors';
import { AnyCaller, Public } from '../auth/access.decorators';
import { ASSETS_ROUTE, gzipped, loadExplorerAssets, type ExplorerAssets } from './explorer.assets';
import { EXPLORER_CSP, explorerPage } from './explorer.page';

/** Assets are named by their content, so a browser may keep each for a year without asking again. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * `GET /graphiql`: GraphiQL for people, with a field for their key (explorer.page.ts). The page and
 * its scripts are open to anyone (they hold no data); the schema it loads needs a key or the admin
 * token, as `/graphql` does.
 */
@Controller()
export class ExplorerController {
  private assets?: ExplorerAssets;
  private page?: string;
  private schema?: { data: IntrospectionQuery };

  constructor(@Inject(GraphQLSchemaHost) private readonly schemaHost: GraphQLSchemaHost) {}

  @Public()
  @Get('graphiql')
  async explorer(@Res() reply: FastifyReply): Promise<void> {
    this.page ??= explorerPage(this.loaded().href);
    await reply
      .status(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', EXPLORER_CSP)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(this.page);
  }

  /** Only the files of the allow-list (explorer.assets.ts), by exact name: no path is ever read from the request. */
  @Public()
  @Get(`${ASSETS_ROUTE}/:file`)
  async asset(@Param('file') file: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const asset = this.loaded().byFile.get(file);
    if (!asset) throw notFound('no such explorer file');
    void reply
      .status(200)
      .header('content-type', asset.contentType)
      .header('cache-control', IMMUTABLE)
      .header('x-content-type-options', 'nosniff')
      .header('vary', 'accept-encoding');
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      await reply.header('content-encoding', 'gzip').send(await gzipped(asset));
    } else await reply.send(asset.body);
  }

  /**
   * The schema as the standard introspection query answers it, descriptions included. GraphiQL's
   * own introspection query is deeper than the query limits allow (QUERY_LIMITS); this is the same
   * answer, computed once from the schema instead of run as a query.
   */
  @AnyCaller()
  @Get('graphiql/schema.json')
  async schemaJson(@Res() reply: FastifyReply): Promise<void> {
    this.schema ??= {
      data: introspectionFromSchema(this.schemaHost.schema, {
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
      }),
    };
    await reply
      .status(200)
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'private, no-cache')
      .send(this.schema);
  }

  private loaded(): ExplorerAssets {
    this.assets ??= loadExplorerAssets();
    return this.assets;
  }
}
