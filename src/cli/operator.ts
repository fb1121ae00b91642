// Who a command at the server's shell is in the deployment's audit log: the operating-system user.
import { userInfo } from 'node:os';
import type { AuditActor } from '../platform/audit/log.ts';

export const operatorActor = (): AuditActor => ({ type: 'operator', name: userInfo().username, credentialKind: 'server_host' });
