// api.js — the page's client of the idvd wire protocol (docs/PROTOCOL.md): one session, its
// bearer token kept in sessionStorage (this tab only, gone when the tab closes) so a reload or a
// lost connection resumes where the person was (GET /v1/session). Same-origin requests only.

import { Route, uploadChallenges } from './protocol.js';

const STORE_KEY = 'openidv.verify.v1';

/// Why a request did not produce an answer.
export class ApiError extends Error {
  /// kind: 'refusal' (the server refused; nothing changed — `code`, `serverText`), 'network'
  /// (no answer: offline, dropped, timed out) or 'server' (an answer that is not an envelope).
  constructor(kind, { code = 0, serverText = '', httpStatus = 0 } = {}) {
    super(`${kind} ${code} ${serverText}`);
    this.kind = kind;
    this.code = code;
    this.serverText = serverText;
    this.httpStatus = httpStatus;
  }
}

/// The saved state of this tab's session: token, the link it came from, page preferences.
export const saved = {
  read() {
    try { return JSON.parse(sessionStorage.getItem(STORE_KEY) || '{}') || {}; } catch { return {}; }
  },
  write(v) {
    try { sessionStorage.setItem(STORE_KEY, JSON.stringify(v)); } catch { /* storage off: no resume */ }
  },
  update(patch) { const v = { ...this.read(), ...patch }; this.write(v); return v; },
  clear() { try { sessionStorage.removeItem(STORE_KEY); } catch { /* nothing to clear */ } },
};

export class Api {
  constructor() {
    this.token = saved.read().token || null;
  }

  /// One request; resolves to the envelope, rejects with ApiError. JSON answers time out after 30 s,
  /// uploads (a document read, a selfie analysis) after 120 s.
  async request(method, path, body, { timeoutMs = 30000 } = {}) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), timeoutMs);
    let response;
    try {
      response = await fetch(path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store', credentials: 'omit', redirect: 'error', referrerPolicy: 'no-referrer', signal: ctrl.signal,
      });
    } catch {
      throw new ApiError('network');
    } finally {
      clearTimeout(timer);
    }
    let env;
    try { env = await response.json(); } catch { throw new ApiError(response.status >= 500 ? 'server' : 'network', { httpStatus: response.status }); }
    const err = env && env.error;
    if (err && err.long_error_code) {
      throw new ApiError('refusal', { code: err.long_error_code, serverText: err.error_string || '', httpStatus: response.status });
    }
    if (!response.ok) throw new ApiError('server', { httpStatus: response.status });
    // A token arrives at session start and again, rotated, in the answer that logs the session in
    // (the pre-login one stops working then): keep whichever answer carries one.
    this.keepToken(env);
    return env;
  }

  keepToken(env) {
    const t = env && env.session && env.session.token;
    if (t) { this.token = t; saved.update({ token: t }); }
  }

  forget() { this.token = null; saved.clear(); }

  async startSession() {
    const env = await this.request('POST', Route.sessions, {});
    this.keepToken(env);
    return env;
  }

  async redeemLink(link) {
    this.token = null;
    const env = await this.request('POST', Route.redeemLink, { link });
    this.keepToken(env);
    return env;
  }

  current() { return this.request('GET', Route.session); }

  /// Answers `challenge` with `payload` on the route its name calls for.
  answer(challenge, payload) {
    const upload = uploadChallenges.has(challenge.name);
    return this.request('POST', upload ? Route.upload : Route.answer, {
      challenge_id: challenge.challenge_id, challenge: challenge.name, challenge_mode: challenge.challenge_mode, payload,
    }, { timeoutMs: upload ? 120000 : 30000 });
  }

  reset() { return this.request('POST', Route.reset, {}); }
  logoff() { return this.request('POST', Route.logoff, {}); }
  startFlow(name, payload = {}) { return this.request('POST', Route.flows + encodeURIComponent(name), { payload }); }
}
