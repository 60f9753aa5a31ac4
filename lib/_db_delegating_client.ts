/**
 * A libSQL {@link Client} that passes every call on to another: the base of
 * the clients that change one thing about a connection pool (a queue for
 * transactions, `secure_delete` on every write), which override only what
 * they change. Private to `lib/db.ts` and its helpers.
 *
 * @module
 */

import type {
  Client,
  InArgs,
  InStatement,
  Replicated,
  ResultSet,
  Transaction,
  TransactionMode,
} from "@libsql/client";

/** Passes every call on to `inner`. */
export class DelegatingClient implements Client {
  protected readonly inner: Client;

  constructor(inner: Client) {
    this.inner = inner;
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  get protocol(): string {
    return this.inner.protocol;
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
    return typeof stmtOrSql === "string"
      ? this.inner.execute(stmtOrSql, args)
      : this.inner.execute(stmtOrSql);
  }

  batch(
    stmts: Array<InStatement | [string, InArgs?]>,
    mode?: TransactionMode,
  ): Promise<ResultSet[]> {
    return this.inner.batch(stmts, mode);
  }

  migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.inner.migrate(stmts);
  }

  transaction(mode?: TransactionMode): Promise<Transaction> {
    return this.inner.transaction(mode);
  }

  executeMultiple(sql: string): Promise<void> {
    return this.inner.executeMultiple(sql);
  }

  sync(): Promise<Replicated> {
    return this.inner.sync();
  }

  close(): void {
    this.inner.close();
  }

  reconnect(): void {
    this.inner.reconnect();
  }
}
