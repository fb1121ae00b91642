// The service's logger: JSON lines for log collectors, or, for a person at a terminal, pino-pretty
// with one coloured line per request (ATRIUM_LOG_FORMAT; `auto` decides by whether stdout is a TTY).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import pino from 'pino';
import pretty from 'pino-pretty';

/** The logging settings (ATRIUM_LOG_FORMAT, ATRIUM_LOG_LEVEL). */
interface LogSettings {
  logFormat: 'json' | 'pretty' | 'auto';
  logLevel: string;
}

export function prettyLogs(config: Pick<LogSettings, 'logFormat'>): boolean {
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
}

export function createLogger(config: LogSettings): FastifyBaseLogger {
  if (!prettyLogs(config)) return pino({ level: config.logLevel }) as unknown as FastifyBaseLogger;
  const stream = pretty({ sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true });
  return pino({ level: config.logLevel }, stream) as unknown as FastifyBaseLogger;
}

/**
 * One line per request when it has been answered. In JSON, at `info`, with the route's pattern rather
 * than the URL (a query string may carry a token) and the request id Fastify binds to every line
 * of the request (`request_id`): `{"request_id":…,"method":"GET","route":"/accounts/projects/:project_id/rooms",
 * "status":200,"duration_ms":3.1,"msg":"request"}`. For a person at a terminal, a short coloured
 * line instead: server errors as errors (red), refusals as warnings.
 */
export function logRequests(app: FastifyInstance, pretty: boolean): void {
  if (pretty) {
    app.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      const line = `${request.method} ${request.url} ${status} ${reply.elapsedTime.toFixed(0)} ms`;
      if (status >= 500) request.log.error(line);
      else if (status >= 400) request.log.warn(line);
      else request.log.info(line);
      done();
    });
    return;
  }
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({
      method: request.method,
      // Unmatched requests (404s) have no route; their path is all there is.
      route: request.routeOptions.url ?? request.url.split('?', 1)[0],
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    }, 'request');
    done();
  });
}
