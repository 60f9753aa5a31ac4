/**
 * A libSQL client that passes every call through and records what it ran:
 * the statements (for query-plan checks) and how many transactions were
 * opened (for group commit).
 */

import type {
  InArgs,
  InStatement,
  ResultSet,
  Transaction,
  TransactionMode,
} from "@libsql/client";
import type { TraceDb } from "../lib/db.ts";
import { DelegatingClient } from "../lib/_db_delegating_client.ts";

/** One statement as it was run. */
export interface RecordedStatement {
  sql: string;
  args: InArgs;
}

function recorded(
  statement: InStatement | [string, InArgs?],
): RecordedStatement {
  if (typeof statement === "string") return { sql: statement, args: [] };
  if (Array.isArray(statement)) {
    return { sql: statement[0], args: statement[1] ?? [] };
  }
  return { sql: statement.sql, args: statement.args ?? [] };
}

/** A {@link Client} that records statements and transactions, then delegates. */
export class RecordingClient extends DelegatingClient {
  readonly statements: RecordedStatement[] = [];
  transactions = 0;

  override execute(stmt: InStatement): Promise<ResultSet>;
  override execute(sql: string, args?: InArgs): Promise<ResultSet>;
  override execute(
    stmt: InStatement | string,
    args?: InArgs,
  ): Promise<ResultSet> {
    const statement = typeof stmt === "string"
      ? { sql: stmt, args: args ?? [] }
      : stmt;
    this.statements.push(recorded(statement));
    return this.inner.execute(statement);
  }

  override batch(
    stmts: Array<InStatement | [string, InArgs?]>,
    mode?: TransactionMode,
  ): Promise<ResultSet[]> {
    this.statements.push(...stmts.map(recorded));
    return this.inner.batch(stmts, mode);
  }

  override async transaction(mode?: TransactionMode): Promise<Transaction> {
    this.transactions++;
    const tx = await this.inner.transaction(mode);
    const statements = this.statements;
    return {
      execute: (stmt: InStatement) => {
        statements.push(recorded(stmt));
        return tx.execute(stmt);
      },
      batch: (stmts: InStatement[]) => {
        statements.push(...stmts.map(recorded));
        return tx.batch(stmts);
      },
      executeMultiple: (sql: string) => tx.executeMultiple(sql),
      rollback: () => tx.rollback(),
      commit: () => tx.commit(),
      close: () => tx.close(),
      get closed() {
        return tx.closed;
      },
    };
  }
}

/** `db` seen through a {@link RecordingClient} (closing it closes `db`). */
export function recordingDb(
  db: TraceDb,
): { db: TraceDb; client: RecordingClient } {
  const client = new RecordingClient(db.client);
  return { db: { ...db, client }, client };
}
