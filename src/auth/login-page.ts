/** The sign-in page of the embedded issuer's authorization code flow. */

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** HTML of the login form for interaction `uid`, with an optional error line. */
export function loginPage(uid: string, clientId: string, error?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Result Collection Service</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;display:grid;place-items:center;min-height:100vh;margin:0}
form{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:18rem;display:grid;gap:.75rem}
h1{font-size:1.2rem;margin:0}label{display:grid;gap:.25rem;font-size:.9rem}input{padding:.5rem;font-size:1rem}
button{padding:.6rem;font-size:1rem;background:#1f6feb;color:#fff;border:0;border-radius:4px;cursor:pointer}
.error{color:#b42318;margin:0}.client{color:#555;font-size:.85rem;margin:0}
</style></head><body>
<form method="post" action="/interaction/${escape(uid)}">
<h1>Sign in</h1>
<p class="client">to continue to <strong>${escape(clientId)}</strong></p>
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<label>Username <input name="username" autocomplete="username" required autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form></body></html>`;
}
