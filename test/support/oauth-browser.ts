/**
 * A browser's trip through the embedded issuer's authorization endpoint and login page: plain
 * fetch with a cookie jar, no automatic redirects, signing in when the login form appears.
 */

/** A browser's cookie store, honouring Path (the interaction cookies are scoped to one uid). */
export class CookieJar {
  private readonly cookies = new Map<string, { name: string; value: string; path: string }>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) || '/';
      const expires = attributes.find((a) => /^expires=/i.test(a))?.slice(8);
      const gone = value === '' || (expires !== undefined && Date.parse(expires) <= Date.now()) || attributes.some((a) => /^max-age=0$/i.test(a));
      if (gone) this.cookies.delete(`${name};${path}`);
      else this.cookies.set(`${name};${path}`, { name, value, path });
    }
  }

  header(url: URL): string {
    const matches = (path: string) => url.pathname === path || url.pathname.startsWith(path.endsWith('/') ? path : `${path}/`);
    return [...this.cookies.values()]
      .filter((c) => matches(c.path))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }
}

/** One browser hop: no automatic redirects, cookies sent and stored; relative URLs resolve against `base`. */
export async function hop(jar: CookieJar, base: string, url: URL | string, form?: Record<string, string>): Promise<Response> {
  const target = new URL(url, base);
  const headers = { cookie: jar.header(target), accept: 'text/html', ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) };
  const response = await fetch(target, {
    method: form ? 'POST' : 'GET',
    headers,
    redirect: 'manual',
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  jar.store(response);
  return response;
}

/** Where the browser goes and who signs in. */
export interface BrowseOptions {
  /** The issuer URL, against which relative redirects resolve. */
  readonly issuer: string;
  /** The client's redirect URI: the trip ends when the browser is sent there. */
  readonly redirectUri: string;
  readonly user: { readonly username: string; readonly password: string };
}

/**
 * Follows the browser through the authorization endpoint, signing in when the login form appears,
 * until it is sent to the client's redirect URI (or stops somewhere else).
 */
export async function browse(jar: CookieJar, start: URL, options: BrowseOptions): Promise<{ callback?: URL; response: Response }> {
  let response = await hop(jar, options.issuer, start);
  for (let hops = 0; hops < 12; hops++) {
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const next = new URL(location, options.issuer);
      if (next.href.startsWith(options.redirectUri)) return { callback: next, response };
      response = await hop(jar, options.issuer, next);
    } else if (response.status === 200 && new URL(response.url).pathname.startsWith('/interaction/')) {
      response = await hop(jar, options.issuer, response.url, { username: options.user.username, password: options.user.password });
    } else {
      return { response };
    }
  }
  throw new Error('too many redirects');
}
