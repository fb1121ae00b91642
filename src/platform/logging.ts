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
 * One line per request, for the pretty format only: JSON logs leave it out, since collectors get
 * request metrics from /metrics and the line would cost every request. Server errors are logged as
 * errors (red), refusals as warnings.
 */
export function logRequestLines(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const line = `${request.method} ${request.url} ${status} ${reply.elapsedTime.toFixed(0)} ms`;
    if (status >= 500) request.log.error(line);
    else if (status >= 400) request.log.warn(line);
    else request.log.info(line);
  });
}
