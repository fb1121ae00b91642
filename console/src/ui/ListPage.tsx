// The list every family shows: a title with its actions, a filter that the API applies (so a search
// finds what is on any page), pages of rows from the API, and a virtualised table body, so a page of
// 1,000 rows renders only what is on screen.
import { Anchor, Group, Loader, Pagination, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ErrorAlert } from './feedback.tsx';

export interface Column<T> {
  header: string;
  cell: (item: T) => ReactNode;
}

export interface PageRequest {
  offset: number;
  limit: number;
  filter: string;
}

export interface PageOf<T> {
  items: T[];
  total: number;
}

export interface ListPageProps<T> {
  title: string;
  description?: ReactNode;
  /** Identifies the list in the query cache (the page request is added). */
  queryKey: readonly unknown[];
  load: (page: PageRequest) => Promise<PageOf<T>>;
  columns: Column<T>[];
  rowKey: (item: T) => string;
  /** Where a row leads (its first column becomes a link). */
  rowLink?: (item: T) => string;
  /** Buttons next to the title (create…), already filtered by role. */
  actions?: ReactNode;
  filterLabel?: string;
  /** The values the filter takes, when it is a choice (a state) rather than text. */
  filterOptions?: readonly string[];
  empty: ReactNode;
  /** Ask again every so many milliseconds while shown (a live list). */
  refetchInterval?: number;
  /** How long rows count as fresh (the console's default: 10 s); 0 asks again on every visit, for lists that change outside the console (a ledger). */
  staleTime?: number;
}

const PAGE_SIZES = ['25', '100', '1000'];
const ROW_HEIGHT = 45;

/** A page of an API list that returns every item at once (already filtered by the API). */
export function pageLocally<T>(items: readonly T[], page: PageRequest): PageOf<T> {
  return { items: items.slice(page.offset, page.offset + page.limit), total: items.length };
}

export function ListPage<T>({ title, description, queryKey, load, columns, rowKey, rowLink, actions, filterLabel = 'Filter by name', filterOptions, empty, refetchInterval, staleTime }: ListPageProps<T>) {
  const [filter, setFilter] = useState('');
  const [debounced] = useDebouncedValue(filter, 250);
  const [pageSize, setPageSize] = useState(PAGE_SIZES[0]!);
  const [page, setPage] = useState(1);
  const limit = Number(pageSize);
  const request: PageRequest = { offset: (page - 1) * limit, limit, filter: debounced.trim() };
  const query = useQuery({ queryKey: [...queryKey, request], queryFn: () => load(request), placeholderData: keepPreviousData, ...(refetchInterval ? { refetchInterval } : {}), ...(staleTime !== undefined ? { staleTime } : {}) });
  const items = query.data?.items ?? [];
  const pages = Math.max(1, Math.ceil((query.data?.total ?? 0) / limit));

  const scroller = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({ count: items.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 10 });
  const virtual = rows.getVirtualItems();
  const before = virtual[0]?.start ?? 0;
  const after = rows.getTotalSize() - (virtual.at(-1)?.end ?? 0);

  return (
    <Stack>
      <Group justify="space-between" align="flex-start">
        <div>
          <Title order={2}>{title}</Title>
          {description && <Text c="dimmed" size="sm">{description}</Text>}
        </div>
        <Group>{actions}</Group>
      </Group>
      <Group align="flex-end">
        {filterOptions
          ? <Select label={filterLabel} data={filterOptions as string[]} value={filter || null} onChange={(value) => { setFilter(value ?? ''); setPage(1); }} clearable placeholder="Any" w={200} />
          : <TextInput label={filterLabel} value={filter} onChange={(event) => { setFilter(event.currentTarget.value); setPage(1); }} w={280} />}
        <Select label="Rows per page" data={PAGE_SIZES} value={pageSize} onChange={(value) => { setPageSize(value ?? PAGE_SIZES[0]!); setPage(1); }} w={130} allowDeselect={false} />
        {query.isFetching && <Loader size="sm" aria-label="Loading" />}
      </Group>
      <ErrorAlert error={query.error} title="The list could not be loaded" />
      {/* No table before the first page: the virtualiser would measure it (a forced layout) for nothing. */}
      {query.data === undefined ? null : items.length === 0 ? (
        <Text c="dimmed">{debounced ? 'Nothing matches this filter.' : empty}</Text>
      ) : (
        <div ref={scroller} style={{ maxHeight: '65vh', overflow: 'auto' }} data-testid="list-scroller">
          <Table striped highlightOnHover stickyHeader>
            <Table.Thead>
              <Table.Tr>{columns.map((column) => <Table.Th key={column.header}>{column.header}</Table.Th>)}</Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {before > 0 && <tr aria-hidden style={{ height: before }} />}
              {virtual.map((row) => {
                const item = items[row.index]!;
                const link = rowLink?.(item);
                return (
                  <Table.Tr key={rowKey(item)} style={{ height: ROW_HEIGHT }}>
                    {columns.map((column, index) => (
                      <Table.Td key={column.header}>
                        {index === 0 && link ? <Anchor component={Link} to={link}>{column.cell(item)}</Anchor> : column.cell(item)}
                      </Table.Td>
                    ))}
                  </Table.Tr>
                );
              })}
              {after > 0 && <tr aria-hidden style={{ height: after }} />}
            </Table.Tbody>
          </Table>
        </div>
      )}
      {pages > 1 && <Pagination total={pages} value={page} onChange={setPage} />}
      {query.data && <Text size="sm" c="dimmed">{query.data.total} in all</Text>}
    </Stack>
  );
}
