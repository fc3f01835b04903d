// Shared by every admin page: JSON calls, safe DOM building, the session bar and the
// shown-once secret panel. Server data only ever reaches the page as text (never as HTML).

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * One JSON call on the cookie session. The browser adds `Origin` to writes (the server's CSRF
 * check); `no-cache` revalidates GETs (ETag) so a list never shows a stale copy.
 */
export async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', cache: 'no-cache', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const message = data && typeof data.error === 'string' ? data.error : `Request failed (${response.status})`;
    throw new ApiError(response.status, message);
  }
  return data;
}

/** `el('td', { className: 'x' }, 'text', child)`: strings become text nodes, never markup. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('aria-')) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const byId = (id) => document.getElementById(id);

/** Marks the page as loaded (`<body data-ready>`), so tests and scripts know the first fetches are done. */
export function markReady() {
  document.body.dataset.ready = 'true';
}

/** Shows `message` (or clears it) in a `role=alert` / `role=status` paragraph. */
export function say(id, message) {
  byId(id).textContent = message ?? '';
}

export function formatDate(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Runs `action` with `button` disabled; an error goes to the `errorId` paragraph. */
export async function withButton(button, errorId, action) {
  button.disabled = true;
  say(errorId, '');
  try {
    await action();
  } catch (error) {
    say(errorId, error instanceof ApiError ? error.message : 'Something went wrong. Try again.');
  } finally {
    button.disabled = false;
  }
}

/**
 * The signed-in user, or null. Pages other than `/admin` send a signed-out visitor to the
 * sign-in page rather than showing empty tables.
 */
export async function currentUser() {
  try {
    return (await api('GET', '/api/auth/me')).user;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export async function requireUser() {
  const user = await currentUser();
  if (!user) {
    location.replace(`/admin?next=${encodeURIComponent(location.pathname)}`);
    return null;
  }
  // An account that must switch two-factor sign-in on can do nothing else until it has.
  if (user.twoFactor?.pending && location.pathname !== '/admin/account') {
    location.replace('/admin/account');
    return null;
  }
  showNav(user);
  return user;
}

export function showNav(user) {
  say('who', user.email);
  byId('nav').hidden = false;
  // The operator console is offered to platform operators only (its routes refuse everyone else).
  byId('nav-platform').hidden = !user.platformOperator;
  byId('sign-out').onclick = async () => {
    try {
      await api('POST', '/api/auth/logout');
    } finally {
      location.assign('/admin');
    }
  };
}

/**
 * The shown-once secret: displayed in a read-only field until dismissed, never stored anywhere
 * (not in the URL, not in storage), so a reload shows it no more.
 */
export function showSecret(name, secret) {
  say('secret-name', name);
  say('secret-status', '');
  const field = byId('secret-value');
  field.value = secret;
  byId('secret-panel').hidden = false;
  byId('secret-copy').onclick = async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      say('secret-status', 'Copied to the clipboard.');
    } catch {
      field.select();
      say('secret-status', 'Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  byId('secret-dismiss').onclick = () => {
    field.value = '';
    byId('secret-panel').hidden = true;
  };
  byId('secret-panel').scrollIntoView({ block: 'nearest' });
  field.focus();
  field.select();
}

/** Checkboxes named `name` for each value, into `container`. */
export function renderChecks(container, name, values, checked = () => false) {
  container.replaceChildren(
    ...values.map((value) => el('label', { className: 'check' }, el('input', { type: 'checkbox', name, value, checked: checked(value) }), value)),
  );
}

export const checkedValues = (container) => [...container.querySelectorAll('input[type=checkbox]:checked')].map((box) => box.value);
