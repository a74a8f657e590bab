import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { renderReportCsv, renderReportHtml, type CostReport } from '@spanforge/reports';
import { CostReportService } from '@spanforge/cost-reports';
import { ApiKeyScope, type ProjectScope } from '@spanforge/tenancy';
import { CurrentProject, RequireScope } from '../auth/access.decorators';
import { notFound } from '@spanforge/errors';

/** `GET /v1/reports/:id.csv` and `/v1/reports/:id.html` with the project key. */
@Controller('v1/reports')
export class CostReportController {
  constructor(private readonly costReports: CostReportService) {}

  @RequireScope(ApiKeyScope.READ)
  @Get(':file')
  async report(@Param('file') file: string, @CurrentProject() scope: ProjectScope, @Res() reply: FastifyReply): Promise<void> {
    const match = /^([0-9a-f-]{36})\.(csv|html)$/i.exec(file);
    if (!match) throw notFound('use /v1/reports/<id>.csv or /v1/reports/<id>.html');
    const row = await this.costReports.report(scope, match[1]!);
    if (!row) throw notFound('no such report in this project');
    const report = { ...(row.report as CostReport), id: row.id };
    if (match[2] === 'csv') {
      await reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="cost-report-${row.id}.csv"`)
        .send(renderReportCsv(report));
    } else {
      await reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(renderReportHtml(report));
    }
  }
}
