// The local payment provider's checkout page: what is being bought, a test card to pay with, and
// Confirm / Cancel. No script; the form posts back to the same path.
import { fromMicros } from '../money.ts';
import { TEST_CARDS } from './providers.ts';
import type { CheckoutRow } from './store.ts';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page's policy: no script; the form may post here and be redirected to the checkout's own success and cancel URLs. */
export function pageCsp(checkout: Pick<CheckoutRow, 'successUrl' | 'cancelUrl'>): string {
  const origins = [...new Set([checkout.successUrl, checkout.cancelUrl].map((u) => new URL(u).origin))].join(' ');
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${origins}; frame-ancestors 'none'; base-uri 'none'`;
}

export function checkoutPage(checkout: CheckoutRow, currency: string, message?: string): string {
  const what = checkout.kind === 'credits'
    ? `${checkout.quantity} × 1 ${currency} of credits`
    : `Monthly subscription: ${fromMicros(checkout.amountMicros)} ${currency} of credits each month`;
  const open = checkout.status === 'open';
  const cards = Object.entries(TEST_CARDS).map(([number, card], i) =>
    `<label><input type="radio" name="card" value="${number}"${i === 0 ? ' checked' : ''}> <code>${number.replace(/(\d{4})(?=\d)/g, '$1 ')}</code> — ${escape(card.label)}</label>`).join('<br>');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Atrium test checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}.note{background:#fff4d6;padding:.5rem 1rem;border-radius:4px}
.error{color:#a00}button{font-size:1rem;padding:.4rem 1rem;margin-right:.5rem}</style></head><body>
<h1>Test checkout</h1>
<p class="note">This is Atrium's local test payment provider: no money moves. Use it for development and trials.</p>
<p id="item">${escape(what)}</p>
<p id="amount">Total: <strong>${fromMicros(checkout.amountMicros)} ${escape(currency)}</strong></p>
${message ? `<p class="error" id="message" role="alert">${escape(message)}</p>` : ''}
${open ? `<form method="post">
<fieldset><legend>Test card</legend>${cards}</fieldset>
<p><button type="submit" name="action" value="confirm" id="confirm">Pay</button>
<button type="submit" name="action" value="cancel" id="cancel">Cancel</button></p>
</form>` : `<p id="status">This checkout is ${checkout.status}.</p>`}
</body></html>`;
}
