// The project's wallet (docs/billing.md): balance, auto-recharge settings, buying credits and the
// subscription through the payment provider's checkout (which comes back here), the ledger,
// newest first, and the server's price list.
import { Alert, Badge, Button, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { BASE_PATH, PUBLIC_URL } from '../../config.ts';
import { Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatMoney, formatTime } from '../../ui/format.ts';
import { FormModal, type Field } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';

type Balance = ResponseOf<'/accounts/projects/{project_id}/balance', 'get'>;
type Transaction = ResponseOf<'/accounts/projects/{project_id}/transactions', 'get'>['transactions'][number];

const RECHARGE_FIELDS: Field[] = [
  { kind: 'switch', name: 'enabled', label: 'Recharge automatically', description: 'Charges the card saved by the last paid checkout.' },
  { kind: 'text', name: 'amount', label: 'Amount', required: true, description: 'Bought by each recharge (more than zero).' },
  { kind: 'text', name: 'threshold', label: 'Threshold', required: true, description: 'Recharge when the balance falls below this.' },
  { kind: 'text', name: 'monthly_budget', label: 'Monthly budget (optional)', description: 'The most recharged in one calendar month (UTC), at least the amount; empty: no cap.' },
];

const amountText = (value: number | null) => (value === null ? '' : String(value));

/** Where the provider's checkout sends the payer back: this page, saying how it went. */
const backHere = (projectId: string, outcome: string) => `${PUBLIC_URL}${BASE_PATH}/p/${projectId}/billing?checkout=${outcome}`;

function Wallet({ balance }: { balance: Balance }) {
  const money = (amount: number | null) => formatMoney(amount, balance.currency);
  const recharge = balance.auto_recharge_enabled
    ? `${money(balance.auto_recharge_amount)} when below ${money(balance.auto_recharge_threshold)}${balance.monthly_budget !== null ? `, at most ${money(balance.monthly_budget)} a month` : ''}`
    : 'off';
  return (
    <Facts rows={[
      ['Balance', <Text key="balance" fw={700} data-testid="balance">{money(balance.balance)}</Text>],
      ['Reserved by calls in flight', money(balance.reserved)],
      ['Available', money(balance.available)],
      ['Auto-recharge', <Group key="recharge" gap="xs">{recharge}{balance.auto_recharge_paused && <Badge color="red">paused</Badge>}</Group>],
      ...(balance.auto_recharge_paused_reason ? [['Paused because', balance.auto_recharge_paused_reason] as [string, string]] : []),
      ['Auto-recharged this month', money(balance.auto_recharged_this_month)],
      ['Last recharge', formatTime(balance.last_recharge)],
    ]} />
  );
}

/** Per million units, as the price list writes them; a dash where a usage type has no price. */
const perMillion = (value: unknown) => (typeof value === 'number' ? String(value) : '–');

/** The server's price list (GET /pricing): what each model costs, and what a call without max_tokens reserves. */
function PriceList() {
  const pricing = useQuery({ queryKey: ['pricing'], queryFn: () => unwrap(api.GET('/pricing', {})) });
  if (!pricing.data) return <ErrorAlert error={pricing.error} title="The price list could not be loaded" />;
  const list = pricing.data;
  return (
    <Stack gap="xs">
      <Title order={3}>Price list</Title>
      <Text c="dimmed" size="sm">
        {list.currency} per million tokens (calls for request), as of {list.as_of ?? 'an unstated date'}{list.llm_proxy_surcharge_rate > 0 ? `, plus a ${list.llm_proxy_surcharge_rate * 100} % surcharge` : ''}.
        Snapshot names price as their model; a model not listed has no price.
      </Text>
      <Table striped withTableBorder data-testid="price-list">
        <Table.Thead>
          <Table.Tr><Table.Th>Provider</Table.Th><Table.Th>Model</Table.Th><Table.Th>Input</Table.Th><Table.Th>Cached input</Table.Th><Table.Th>Output</Table.Th><Table.Th>Most output per answer</Table.Th></Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {list.prices.map((p) => (
            <Table.Tr key={`${p.provider} ${p.model} ${p.effective_from ?? ''}`}>
              <Table.Td>{p.provider}</Table.Td>
              <Table.Td>{p.model}{p.aliases.length > 0 ? ` (also ${p.aliases.join(', ')})` : ''}</Table.Td>
              <Table.Td>{perMillion(p.input)}</Table.Td>
              <Table.Td>{perMillion(p.cached_input)}</Table.Td>
              <Table.Td>{perMillion(p.output)}</Table.Td>
              <Table.Td>{(p.max_output_tokens ?? list.default_max_output_tokens).toLocaleString()}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function SubscriptionFacts({ projectId }: { projectId: string }) {
  const subscription = useQuery({
    queryKey: projectKey(projectId, 'billing', 'subscription'),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/subscription', { params: { path: { project_id: projectId } } })),
  });
  if (!subscription.data) return <ErrorAlert error={subscription.error} />;
  const { subscription: current, payment_method: card } = subscription.data;
  return (
    <Facts rows={[
      ['Plan', current ? `${current.plan} (${current.status})` : 'none'],
      ...(current ? [
        ['Monthly credits', formatMoney(current.monthly_credits, current.currency)],
        ['Current period since', formatTime(current.current_period_start)],
        ['Provider', current.provider],
      ] as [string, string][] : []),
      ['Saved payment method', card ?? 'none'],
    ]} />
  );
}

export default function BillingPage() {
  const { projectId, can } = useProject();
  const [search, setSearch] = useSearchParams();
  const [recharging, setRecharging] = useState(false);
  const [buying, setBuying] = useState(false);
  const [subscribing, setSubscribing] = useState<unknown>();
  const params = { params: { path: { project_id: projectId } } };
  const key = projectKey(projectId, 'billing');
  // Usage debits the wallet outside the console: balance and ledger are asked again on every visit.
  const balance = useQuery({ queryKey: [...key, 'balance'], queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/balance', params)), staleTime: 0 });
  const manage = can('billing_manager');
  const outcome = search.get('checkout');
  /** Sends the browser to the provider's checkout page. */
  const checkout = (url: string) => window.location.assign(url);
  return (
    <Stack>
      <Group justify="space-between" align="flex-start">
        <div>
          <Title order={2}>Billing</Title>
          <Text c="dimmed" size="sm">The project's prepaid wallet: LLM proxy calls are priced and debited from it.</Text>
        </div>
        {manage && (
          <Group>
            <Button onClick={() => setBuying(true)}>Buy credits</Button>
            <Button variant="default" onClick={() => setRecharging(true)}>Auto-recharge settings</Button>
          </Group>
        )}
      </Group>
      {outcome && (
        <Alert color={outcome === 'done' ? 'green' : 'gray'} withCloseButton onClose={() => setSearch({})} title={outcome === 'done' ? 'Checkout complete' : 'Checkout cancelled'}>
          {outcome === 'done' ? 'The payment is recorded once the provider confirms it; the balance shows it then.' : 'Nothing was charged.'}
        </Alert>
      )}
      <ErrorAlert error={balance.error} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Stack gap="xs">
          <Title order={4}>Wallet</Title>
          {balance.data && <Wallet balance={balance.data} />}
        </Stack>
        <Stack gap="xs">
          <Group justify="space-between">
            <Title order={4}>Subscription</Title>
            {manage && (
              <Button size="xs" variant="default" onClick={async () => {
                setSubscribing(undefined);
                try {
                  checkout((await unwrap(api.POST('/accounts/projects/{project_id}/subscription', { ...params, body: { success_url: backHere(projectId, 'done'), cancel_url: backHere(projectId, 'cancelled') } }))).checkout_url);
                } catch (error) {
                  setSubscribing(error);
                }
              }}>Subscribe</Button>
            )}
          </Group>
          <ErrorAlert error={subscribing} />
          <SubscriptionFacts projectId={projectId} />
        </Stack>
      </SimpleGrid>
      <ListPage<Transaction>
        title="Transactions"
        description="The ledger, newest first: purchases, recharges and grants add; usage debits."
        queryKey={[...key, 'transactions']}
        filterLabel="Filter by type or description"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/transactions', { ...params, params: { ...params.params, query: { offset, limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.transactions, total: page.total };
        }}
        columns={[
          { header: 'When', cell: (t) => formatTime(t.created_at) },
          { header: 'Type', cell: (t) => t.type.replaceAll('_', ' ') },
          { header: 'Description', cell: (t) => t.description },
          { header: 'Amount', cell: (t) => <Text size="sm" c={t.amount < 0 ? 'red' : 'green'}>{formatMoney(t.amount, balance.data?.currency ?? 'USD')}</Text> },
          { header: 'Balance after', cell: (t) => formatMoney(t.balance_after, balance.data?.currency ?? 'USD') },
        ]}
        rowKey={(t) => t.id}
        staleTime={0}
        empty="No transactions yet."
      />
      <PriceList />
      {balance.data && (
        <FormModal
          key={JSON.stringify(balance.data)}
          opened={recharging}
          onClose={() => setRecharging(false)}
          title="Auto-recharge"
          fields={RECHARGE_FIELDS}
          initialValues={{
            enabled: balance.data.auto_recharge_enabled,
            amount: amountText(balance.data.auto_recharge_amount),
            threshold: amountText(balance.data.auto_recharge_threshold),
            monthly_budget: amountText(balance.data.monthly_budget),
          }}
          submitLabel="Save"
          submit={async (values) => {
            await unwrap(api.POST('/accounts/projects/{project_id}/recharge', {
              ...params,
              body: { enabled: values.enabled, amount: values.amount.trim(), threshold: values.threshold.trim(), monthly_budget: values.monthly_budget.trim() || null },
            }));
            await invalidate(key);
          }}
        />
      )}
      <FormModal
        opened={buying}
        onClose={() => setBuying(false)}
        title="Buy credits"
        fields={[{ kind: 'text', name: 'quantity', label: `Credits (whole ${balance.data?.currency ?? 'currency'} units)`, required: true, description: 'You pay on the payment provider\'s page, then come back here.' }]}
        initialValues={{ quantity: '10' }}
        submitLabel="Go to checkout"
        errorField={(error) => (error instanceof Error && /quantity/.test(error.message) ? 'quantity' : undefined)}
        submit={async ({ quantity }) => {
          if (!/^\d+$/.test(quantity.trim())) throw new Error('quantity must be a whole number');
          const { checkout_url: url } = await unwrap(api.POST('/accounts/projects/{project_id}/credits', {
            ...params,
            body: { quantity: Number(quantity.trim()), success_url: backHere(projectId, 'done'), cancel_url: backHere(projectId, 'cancelled') },
          }));
          checkout(url);
        }}
      />
    </Stack>
  );
}
