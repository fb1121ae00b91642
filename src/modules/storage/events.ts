// Events of project storage, emitted after a file was written or deleted.
import { Type } from 'typebox';
import { defineEvent } from '../../platform/events/catalogue.ts';

const FileChange = Type.Object({
  path: Type.String({ description: 'Path inside the project storage' }),
  participant_id: Type.String({ description: 'The user or API key that made the change, or the service feature that did' }),
});

export const fileUpdated = defineEvent('storage.file.updated', FileChange, { description: 'A file was written or updated' });
export const fileDeleted = defineEvent('storage.file.deleted', FileChange, { description: 'A file was deleted' });
