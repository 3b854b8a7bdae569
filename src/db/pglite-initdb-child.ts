/**
 * The process that makes a new embedded cluster with initdb (started by pglite-initdb.ts). Its order, one JSON
 * argument: where to make the cluster, the template file to keep it as (or null), and PGlite's start parameters.
 * It exits 0 once the cluster is made and closed; on failure it writes the reason to stderr and exits 1.
 */
import { PGlite } from '@electric-sql/pglite';
import { keepAsTemplate } from './pglite-cluster.ts';

interface InitdbOrder {
  where: string;
  templateFile: string | null;
  startParams: string[] | null;
}

// The process that started this one is gone (killed, say): nothing waits for the cluster any more.
process.on('disconnect', () => process.exit(1));

try {
  const order = JSON.parse(process.argv[2] ?? '') as InitdbOrder;
  const pglite = await PGlite.create(
    order.where,
    order.startParams ? { startParams: order.startParams } : {},
  );
  try {
    if (order.templateFile !== null) await keepAsTemplate(pglite, order.templateFile);
  } finally {
    await pglite.close();
  }
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
