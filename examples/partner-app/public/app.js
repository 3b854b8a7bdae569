/*
 * The page: one screen at a time (#home, #card, #bank, #transfer), data from this app's server (/api/…), and the
 * card posted straight to card tokenization. Amounts are integers of cents, as the EWA API gives them.
 */

const state = {
  session: undefined,
  overview: undefined,
  /** The transfer made on this page, and the webhook events received for each transfer, by transfer id. */
  transferId: undefined,
  eventsByTransfer: new Map(),
  preview: undefined,
};

const $ = (id) => document.getElementById(id);

const SCHEDULES = { WITHIN_THIRTY_MINUTES: 'Within 30 minutes', NEXT_BUSINESS_DAY: 'Next business day' };

/** A call to this app's server; a refusal throws an Error carrying the JSON:API errors. */
async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const result = await response.json().catch(() => ({}));
  if (response.ok) return result;
  if (response.status === 401 && path !== '/api/session') location.reload();
  throw refusal(result, response.status);
}

function refusal(result, status) {
  const errors = Array.isArray(result.errors) ? result.errors : [];
  return Object.assign(new Error(errors[0]?.detail ?? `The server answered ${status}.`), { errors });
}

/** 1234 → "$12.34", without floating point. */
function money(minor, currency = 'USD') {
  const sign = minor < 0 ? '-' : '';
  const cents = Math.abs(minor);
  const units = Math.floor(cents / 100).toLocaleString('en-US');
  return `${sign}${currency === 'USD' ? '$' : `${currency} `}${units}.${String(cents % 100).padStart(2, '0')}`;
}

/** "12.3" → 1230; undefined when it is not an amount of dollars and cents. */
function parseAmount(text) {
  const match = /^\s*\$?(\d{1,7})(?:\.(\d{1,2}))?\s*$/.exec(text);
  return match ? Number(match[1]) * 100 + Number((match[2] ?? '0').padEnd(2, '0')) : undefined;
}

function day(isoDate) {
  return new Date(isoDate).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });
}

function show(message, isError = false) {
  $('message').textContent = message;
  $('message').className = isError ? 'error' : '';
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** Marks the input a JSON:API error points at (`/data/attributes/details/first_name`, `/card_number`). */
function markField(form, error) {
  for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
  const name = error.errors?.[0]?.source?.pointer?.split('/').pop();
  const input = name ? form.elements[name] : undefined;
  if (input instanceof HTMLElement) {
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
}

function formValues(form) {
  return Object.fromEntries([...new FormData(form)].map(([name, value]) => [name, String(value).trim()]));
}

// Screens

function route() {
  if (!state.session?.signed_in) return;
  const screen = ['home', 'card', 'bank', 'transfer'].includes(location.hash.slice(1))
    ? location.hash.slice(1)
    : 'home';
  for (const section of document.querySelectorAll('[data-screen]')) section.hidden = section.id !== screen;
  for (const link of document.querySelectorAll('#nav a'))
    link.toggleAttribute('aria-current', link.getAttribute('href') === `#${screen}`);
  if (screen === 'transfer') fillDestinations();
}

async function loadOverview() {
  state.overview = await api('GET', '/api/overview');
  const { jobs, accounts, paychecks } = state.overview;
  const job = jobs[0]?.attributes;
  $('who').textContent = job ? `${job.first_name} ${job.last_name}` : '';
  const balance = accounts.find((account) => account.attributes.account_type === 'EARNINGS_BALANCE');
  $('available').textContent = balance
    ? money(balance.attributes.balances.available ?? 0, balance.attributes.balances.currency)
    : 'no earnings balance';

  const rows = [...paychecks].sort((a, b) =>
    b.attributes.pay_period_starts_at.localeCompare(a.attributes.pay_period_starts_at),
  );
  $('paychecks').replaceChildren(
    ...rows.map(({ attributes: paycheck }) => {
      const row = element('tr');
      row.append(
        element('td', `${day(paycheck.pay_period_starts_at)} – ${day(paycheck.pay_period_ends_at)}`),
        element('td', day(paycheck.deposit_expected_at)),
        element('td', money(paycheck.net_earnings, paycheck.currency)),
        element('td', paycheck.status, `status ${paycheck.status}`),
      );
      return row;
    }),
  );
  $('accounts').replaceChildren(
    ...destinations().map((account) => {
      const item = element('li');
      const fees = account.attributes.capabilities.transfer_destination
        .map(
          (option) =>
            `${SCHEDULES[option.schedule] ?? option.schedule}: fee ${money(option.fee, option.currency)}`,
        )
        .join(' · ');
      item.append(element('strong', describeAccount(account)), element('small', fees));
      return item;
    }),
  );
}

/** The accounts money can be moved to: bank accounts and cards. */
function destinations() {
  return (state.overview?.accounts ?? []).filter(
    (account) => account.attributes.account_type !== 'EARNINGS_BALANCE',
  );
}

function describeAccount(account) {
  const { name, account_type: type, details } = account.attributes;
  const lastFour = type === 'CARD' ? details.last_four : details.account_number?.slice(-4);
  return `${name} (${type === 'CARD' ? 'card' : 'bank'} ····${lastFour})`;
}

/**
 * An account form: `add` turns its values into the new account; then back home with it listed, or the error shown
 * on the field it names.
 */
function onAccountForm(id, add) {
  $(id).addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    form.querySelector('button').disabled = true;
    try {
      const account = await add(formValues(form));
      form.reset();
      await loadOverview();
      location.hash = '#home';
      show(`Added ${describeAccount(account.data)}.`);
    } catch (error) {
      markField(form, error);
      show(error.message, true);
    } finally {
      form.querySelector('button').disabled = false;
    }
  });
}

// Add a debit card: the card to tokenization, the token to this app's server.

onAccountForm('card-form', async (card) => {
  card.card_number = card.card_number.replace(/[\s-]/g, '');
  card.address_state = card.address_state.toUpperCase();
  show('Sending the card to card tokenization…');
  const response = await fetch(state.session.card_tokenization_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...card, cvv: card.cvv || null }),
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const result = await response.json().catch(() => ({}));
  if (!response.ok) throw refusal(result, response.status);
  const { card_number: _number, cvv: _cvv, ...holder } = card;
  return api('POST', '/api/cards', { ...holder, token: result.token, name: 'Debit card' });
});

// Add a bank account.

onAccountForm('bank-form', (values) =>
  api('POST', '/api/bank-accounts', {
    ...values,
    name: values.subtype === 'SAVINGS' ? 'Savings' : 'Checking',
  }),
);

// Move money: preview (priced, nothing made), confirm (made), then its status as the webhooks arrive.

function fillDestinations() {
  const select = $('destination');
  const chosen = select.value;
  select.replaceChildren(
    ...destinations().map((account) => {
      const option = element('option', describeAccount(account));
      option.value = account.id;
      return option;
    }),
  );
  if (chosen && [...select.options].some((option) => option.value === chosen)) select.value = chosen;
  fillSchedules();
}

function fillSchedules() {
  const account = destinations().find((each) => each.id === $('destination').value);
  const options = account?.attributes.capabilities.transfer_destination ?? [];
  $('schedule').replaceChildren(
    ...options.map(({ schedule, fee, currency }) => {
      const option = element('option', `${SCHEDULES[schedule] ?? schedule} (fee ${money(fee, currency)})`);
      option.value = schedule;
      return option;
    }),
  );
}

$('destination').addEventListener('change', fillSchedules);

$('transfer-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  $('preview').hidden = true;
  const amount = parseAmount(form.elements.amount.value);
  if (amount === undefined) {
    form.elements.amount.setAttribute('aria-invalid', 'true');
    return show('Enter an amount in dollars and cents, like 20.00.', true);
  }
  form.elements.amount.removeAttribute('aria-invalid');
  const origin = state.overview.accounts.find(
    (account) => account.attributes.account_type === 'EARNINGS_BALANCE',
  );
  const transfer = {
    amount,
    currency: 'USD',
    schedule: form.elements.schedule.value,
    origin: origin?.id,
    destination: form.elements.destination.value,
  };
  try {
    const { data } = await api('POST', '/api/transfers', { ...transfer, preview: true });
    const { fee, currency } = data.attributes;
    $('preview-amount').textContent = money(amount, currency);
    $('preview-fee').textContent = money(fee, currency);
    $('preview-receive').textContent = money(amount - fee, currency);
    $('preview-schedule').textContent = SCHEDULES[transfer.schedule];
    // One key for this preview's transfer: confirming twice makes one transfer.
    state.preview = { ...transfer, idempotency_key: crypto.randomUUID() };
    $('preview').hidden = false;
    show('');
  } catch (error) {
    show(error.message, true);
  }
});

$('confirm').addEventListener('click', async () => {
  $('confirm').disabled = true;
  try {
    const { data } = await api('POST', '/api/transfers', { ...state.preview, preview: false });
    state.transferId = data.id;
    $('preview').hidden = true;
    $('made').hidden = false;
    $('transfer-id').textContent = data.id;
    const destination = destinations().find((account) => account.id === state.preview.destination);
    $('transfer-what').textContent =
      `${money(data.attributes.amount, data.attributes.currency)} to ${destination ? describeAccount(destination) : 'your account'}`;
    renderTransferEvents();
    show(`Transfer of ${money(data.attributes.amount, data.attributes.currency)} made.`);
    await loadOverview();
  } catch (error) {
    show(error.message, true);
  } finally {
    $('confirm').disabled = false;
  }
});

/** The transfer's status is the one in the latest webhook received for it (they arrive in order). */
function renderTransferEvents() {
  const events = state.eventsByTransfer.get(state.transferId) ?? [];
  const latest = events.at(-1);
  const status = latest ? latest.data.attributes.status : 'waiting for a webhook…';
  $('transfer-status').textContent = status;
  $('transfer-status').className = `status ${latest ? status : ''}`;
  $('transfer-events').replaceChildren(
    ...events.map((event) => {
      const item = element('li');
      item.append(
        element('strong', event.type),
        element('span', event.data.attributes.status, `status ${event.data.attributes.status}`),
        ...(event.data.meta?.failure_reason ? [element('span', event.data.meta.failure_reason)] : []),
        element('span', event.verified ? 'signature verified' : 'not verified', 'verified'),
        element('code', event.id),
        element('small', `received ${new Date(event.receivedAt).toLocaleTimeString('en-US')}`),
      );
      return item;
    }),
  );
}

function listenForWebhooks() {
  const source = new EventSource('/api/events');
  source.addEventListener('message', (message) => {
    const event = JSON.parse(message.data);
    if (event.data?.type !== 'transfers') return;
    const events = state.eventsByTransfer.get(event.data.id) ?? [];
    if (events.some((each) => each.id === event.id)) return;
    state.eventsByTransfer.set(event.data.id, [...events, event]);
    if (event.data.id === state.transferId) {
      renderTransferEvents();
      if (event.type !== 'transfer.created') loadOverview().catch((error) => show(error.message, true));
    }
  });
}

// Start

$('sign-out').addEventListener('click', async () => {
  await fetch('/logout', { method: 'POST' });
  location.assign('/');
});

async function start() {
  const params = new URLSearchParams(location.search);
  if (params.has('error')) {
    show(`Sign-in failed: ${params.get('error')}`, true);
    history.replaceState(null, '', '/');
  }
  state.session = await api('GET', '/api/session');
  const { webhooks } = state.session;
  $('webhooks').textContent =
    webhooks.status === 'REGISTERED'
      ? `Webhooks: endpoint ${webhooks.endpoint_id} receives at ${webhooks.url}`
      : `Webhooks: not registered (${webhooks.problem})`;
  if (!state.session.signed_in) {
    $('signed-out').hidden = false;
    return;
  }
  $('nav').hidden = false;
  listenForWebhooks();
  await loadOverview();
  route();
}

window.addEventListener('hashchange', route);
start().catch((error) => show(error.message, true));
