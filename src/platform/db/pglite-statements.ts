// Named prepared statements for Drizzle on PGlite. PGlite.query sends an unnamed
// Parse/Describe/Bind/Describe/Execute/Sync, each message a call into WebAssembly, and PostgreSQL
// parses, analyses and plans the text again every time. Through this wrapper a text is prepared
// once under a name (Drizzle numbers parameters, so the texts are few): its first run is two calls
// (Parse/Describe/Sync, then Bind/Execute/Sync, as the parameter types decide how values are
// serialised), every later run one call carrying Bind/Execute/Sync, since PGlite's backend loop reads
// every message of the buffer it is given.
import { messages, parse, protocol, type PGlite, type QueryOptions, type Results, type Transaction } from '@electric-sql/pglite';

const { serialize } = protocol;

interface Statement {
  name: string;
  /** From Describe(S): how parameters are serialised, as PGlite.query does. */
  paramTypes: number[];
  /**
   * From Describe(S), put in front of each run's replies instead of a Describe(P): PostgreSQL
   * refuses to run a named statement whose result type changed ("cached plan must not change
   * result type"), so it cannot go stale unnoticed.
   */
  rowDescription: messages.BackendMessage | undefined;
}

/** What Drizzle's PGlite driver calls on its client. */
export type PgliteQueries = Pick<PGlite, 'query' | 'transaction'>;

/**
 * Errors of a cached statement that preparing it again cures: 0A000 is "cached plan must not change
 * result type" (after a schema change), 26000 a statement that no longer exists. Outside a
 * transaction the failed run was rolled back with its implicit transaction, so running it again is safe.
 */
const STALE = new Set(['0A000', '26000']);

/** Statement names are unique in the process, so two wrappers on one client cannot collide. */
let counter = 0;

/**
 * The client's `query` and `transaction`, with every query a named statement cached by its text,
 * least recently used first out (evicted ones are Closed with the next message sent). Keeps what
 * PGlite.query does: its locks (nothing interleaves with a transaction), syncing to the file system
 * after a query outside a transaction, serializers by parameter type, parsers and rowMode, and its
 * errors (DatabaseError with `query`, `params` and `queryOptions` set).
 */
export function preparedStatements(client: PGlite, { capacity = 256, onStatement }: { capacity?: number; onStatement?: () => void } = {}): PgliteQueries {
  const statements = new Map<string, Statement>();
  const closing: string[] = [];

  const send = (parts: Uint8Array[]) =>
    client.execProtocolStream(
      Buffer.concat([...closing.splice(0).map((name) => serialize.close({ type: 'S', name })), ...parts, serialize.sync()]),
      { syncToFs: false },
    );

  const prepare = async (text: string): Promise<Statement> => {
    const name = `atrium_${++counter}`;
    const replies = await send([serialize.parse({ name, text }), serialize.describe({ type: 'S', name })]);
    const statement = {
      name,
      paramTypes: parse.parseDescribeStatementResults(replies),
      rowDescription: replies.find((m) => m.name === 'rowDescription'),
    };
    statements.set(text, statement);
    if (statements.size > capacity) forget(statements.keys().next().value!);
    return statement;
  };

  const forget = (text: string) => {
    closing.push(statements.get(text)!.name);
    statements.delete(text);
  };

  const execute = async (statement: Statement, params: unknown[], options: QueryOptions | undefined) => {
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = statement.paramTypes[i]!;
      const serializer = options?.serializers?.[type] ?? client.serializers[type];
      return serializer ? serializer(value) : String(value);
    });
    const replies = await send([serialize.bind({ statement: statement.name, values }), serialize.execute({})]);
    const all = statement.rowDescription ? [statement.rowDescription, ...replies] : replies;
    // parseResults merges `options.parsers` into the client's by spreading both into a new object:
    // the client has ~320 of them, so that copy cost ~150 µs per query (Drizzle passes a few
    // overrides with every query). Looked up through a prototype instead, they cost ~1.5 µs.
    if (!options?.parsers) return parse.parseResults(all, client.parsers, options)[0]!;
    const parsers = Object.assign(Object.create(client.parsers) as typeof client.parsers, options.parsers);
    return parse.parseResults(all, parsers, { ...options, parsers: undefined })[0]!;
  };

  const run = async (text: string, params: unknown[], options: QueryOptions | undefined, inTransaction: boolean) => {
    onStatement?.();
    try {
      let statement = statements.get(text);
      if (statement) {
        // Most recently used last.
        statements.delete(text);
        statements.set(text, statement);
      } else {
        statement = await prepare(text);
      }
      try {
        return await execute(statement, params, options);
      } catch (error) {
        if (!(error instanceof messages.DatabaseError && STALE.has(error.code ?? ''))) throw error;
        forget(text);
        // Inside a transaction the error has aborted it: nothing to retry in.
        if (inTransaction) throw error;
        return await execute(await prepare(text), params, options);
      }
    } catch (error) {
      if (error instanceof messages.DatabaseError) Object.assign(error, { query: text, params, queryOptions: options });
      throw error;
    }
  };

  return {
    async query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
      await client._checkReady();
      return client._runExclusiveTransaction(() =>
        client._runExclusiveQuery(async () => {
          const result = await run(text, params, options, false);
          await client.syncToFs();
          return result as Results<T>;
        }));
    },
    transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      return client.transaction((tx) => {
        const query = async <R>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<R>> => {
          if (tx.closed) throw new Error('Transaction is closed');
          return client._runExclusiveQuery(async () => (await run(text, params, options, true)) as Results<R>);
        };
        return fn(Object.assign(Object.create(tx) as Transaction, { query }));
      });
    },
  };
}
