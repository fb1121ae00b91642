import { lazyPage, type Family } from '../family.ts';

export const llmLoggers: Family = {
  id: 'llm-loggers',
  label: 'LLM loggers',
  path: 'llm-loggers',
  needs: 'llm_logger_inventory',
  routes: [
    lazyPage('llm-loggers', () => import('./LoggerList.tsx')),
    lazyPage('llm-loggers/:loggerId', () => import('./LoggerDetail.tsx')),
  ],
};
