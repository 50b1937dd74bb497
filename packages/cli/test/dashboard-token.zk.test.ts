import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, start, until, zoott } from './helpers.js';

// The built `zoott dashboard`: its token is its own. Cookies are scoped by host, not port, so
// any cookie it set would reach every other program serving pages on 127.0.0.1, which could
// replay it. The printed URL opens it and sets no cookie; a cookie with the token (as an
// older dashboard set, zoott_token_<port>) opens nothing; the Authorization header does.
// (In Chromium with a second local server: dashboard/test/dashboard.browser.test.ts.)
const URL_LINE = /(http:\/\/127\.0\.0\.1:(\d+))\/\?token=(\S+)/;

beforeAll(assertBuilt);

describe('zoott dashboard: its token in no cookie', { timeout: 120_000 }, () => {
  it('the printed URL sets no cookie, and a cookie with the token opens nothing', async () => {
    const connect = await freshConnect();
    expect((await zoott(['--connect', connect, 'init', 'tok'])).code).toBe(0);
    const dash = start(['--connect', connect, 'dashboard', '--world', 'tok', '--port', '0']);
    try {
      await until(() => URL_LINE.test(dash.err()), 'the dashboard URL');
      const [, url, port, token] = dash.err().match(URL_LINE)!;
      const page = await fetch(`${url}/?token=${token}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('set-cookie')).toBeNull();
      await page.body?.cancel();
      for (const cookie of [`zoott_token_${port}=${token}`, `zoott_token=${token}`]) {
        const res = await fetch(`${url}/api/counts?world=tok`, { headers: { Cookie: cookie } });
        expect(res.status, cookie).toBe(401);
        await res.body?.cancel();
      }
      const bearer = await fetch(`${url}/api/counts?world=tok`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(bearer.status).toBe(200);
      await bearer.body?.cancel();
    } finally {
      dash.kill('SIGINT');
      await dash.exited;
    }
  });
});
