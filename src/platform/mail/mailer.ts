// Outgoing mail: SMTP through nodemailer when ATRIUM_SMTP_URL is set, otherwise the development
// outbox (a table shown at /dev/mail) so that the embedded quick start works without a mail server.
import { randomUUID } from 'node:crypto';
import { desc, eq } from 'drizzle-orm';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../db/columns.ts';
import { createRequire } from 'node:module';
import type nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { Db } from '../db/engine.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
}

/** How mail leaves (the service's mail settings). */
export interface MailConfig {
  /** 'smtp' sends through `smtpUrl`; 'outbox' keeps mail in the database for /dev/mail; 'none' cannot send. */
  transport: 'smtp' | 'outbox' | 'none';
  smtpUrl?: string | undefined;
  from: string;
}

export interface Mailer {
  readonly transport: MailConfig['transport'];
  send(mail: Mail): Promise<void>;
  close(): void;
}

export const devMailOutboxTable = pgTable('dev_mail_outbox', {
  id: uuid('id').primaryKey(),
  recipient: text('recipient').notNull(),
  subject: text('subject').notNull(),
  textBody: text('text_body').notNull(),
  htmlBody: text('html_body'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type OutboxMail = typeof devMailOutboxTable.$inferSelect;

/** Newest first. */
export function listOutbox(db: Db, limit = 100): Promise<OutboxMail[]> {
  return db.select().from(devMailOutboxTable).orderBy(desc(devMailOutboxTable.createdAt), desc(devMailOutboxTable.id)).limit(limit);
}

export async function findOutboxMail(db: Db, id: string): Promise<OutboxMail | undefined> {
  const [row] = await db.select().from(devMailOutboxTable).where(eq(devMailOutboxTable.id, id));
  return row;
}

export function createMailer(config: MailConfig, db: Db): Mailer {
  if (config.transport === 'smtp') {
    // nodemailer is loaded only for SMTP: the development outbox and no mail do not need its code
    // resident (docs/benchmarks.md "Memory of the embedded default").
    const { createTransport } = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
    const transporter = createTransport({
      url: config.smtpUrl!,
      // A slow or dead mail server must not hold mail work for minutes.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as SMTPTransport.Options, { from: config.from });
    return {
      transport: 'smtp',
      async send(mail) {
        await transporter.sendMail({ to: mail.to, subject: mail.subject, text: mail.text, ...(mail.html ? { html: mail.html } : {}) });
      },
      close: () => transporter.close(),
    };
  }
  if (config.transport === 'outbox') {
    return {
      transport: 'outbox',
      async send(mail) {
        await db.insert(devMailOutboxTable).values({ id: randomUUID(), recipient: mail.to, subject: mail.subject, textBody: mail.text, htmlBody: mail.html ?? null });
      },
      close: () => {},
    };
  }
  return {
    transport: 'none',
    async send() {
      throw new Error('No mail transport is configured (set ATRIUM_SMTP_URL)');
    },
    close: () => {},
  };
}
