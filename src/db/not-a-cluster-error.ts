/**
 * Raised when the embedded database's directory holds files that are not a cluster: nothing is removed. A file of its
 * own, so that the CLI can name it without loading the embedded database's code (and tar) on PostgreSQL.
 */
export class NotAClusterError extends Error {
  override name = 'NotAClusterError';
}
