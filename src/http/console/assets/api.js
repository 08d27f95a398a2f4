// The console's JSON routes, with the credentials the user gave (kept for
// this browser tab only). A 401 opens the sign-in form and retries.

const STORE = 'queen-console-authorization';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let signingIn = null;

/** UTF-8 text as base64 (btoa alone takes Latin-1 only). */
const base64 = (text) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

function askForCredentials(reason) {
  const dialog = document.getElementById('sign-in');
  document.getElementById('sign-in-reason').textContent = reason;
  const form = dialog.querySelector('form');
  form.reset();
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const { token, user, password } = Object.fromEntries(new FormData(form));
      const value = token ? `Bearer ${token}` : user ? `Basic ${base64(`${user}:${password}`)}` : null;
      if (value) sessionStorage.setItem(STORE, value);
      document.getElementById('sign-out').hidden = !value;
      resolve();
    }, { once: true });
  });
}

export function signOut() {
  sessionStorage.removeItem(STORE);
  location.reload();
}

export async function api(path, { method = 'GET', body } = {}) {
  const headers = {};
  const authorization = sessionStorage.getItem(STORE);
  if (authorization) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = await response.json().catch(() => null);
  if (response.status === 401) {
    signingIn ??= askForCredentials(answer?.message ?? 'This console needs credentials.').finally(() => (signingIn = null));
    await signingIn;
    return api(path, { method, body });
  }
  if (!response.ok) throw new ApiError(response.status, answer?.message ?? `The server answered ${response.status}.`);
  return answer;
}

export function signedIn() {
  return sessionStorage.getItem(STORE) !== null;
}
