// app.js — the page's controller: turns each server answer (the next challenge, or an event) into
// a screen, and each screen's action into an answer. The server decides every step; this page only
// asks and shows (ARCHITECTURE.md §2). A lost connection keeps the screen and offers to retry; a
// reload resumes the session (GET /v1/session) where it was.

import { Api, ApiError, saved } from './api.js';
import { Challenge, Event, Code, Flow, Mode, isSuccess } from './protocol.js';
import * as S from './screens.js';
import { W, codeWords } from './words.js';
import { h, notice, banner, busy, announce, button } from './ui.js';

class Controller {
  constructor() {
    this.api = new Api();
    this.section = null;
    this.challenge = null;
    this.loggedIn = false;
    this.pending = null;          // the request to retry after a network failure
    this.leaveHooks = [];
    this.lastAnswered = null;
  }

  // MARK: what screens use
  saved() { return saved.read(); }
  remember(patch) { saved.update(patch); }
  rememberedUser() { return saved.read().userID || ''; }
  isLoggedIn() { return this.loggedIn; }
  fromLink() { return !!saved.read().link; }
  onLeave(fn) { this.leaveHooks.push(fn); }

  answer(payload, pressed, busyText) {
    const ch = this.challenge;
    if (!ch) return;
    this.lastAnswered = ch;
    return this.run(() => this.api.answer(ch, payload), { pressed, busyText });
  }

  reset() { return this.run(() => this.api.reset()); }

  startFlow(name, pressed) {
    const reason = W.flowReason[name];
    return this.run(() => this.api.startFlow(name, reason ? { reason } : {}), { pressed });
  }

  async logoff() {
    try { await this.api.logoff(); } catch { /* the token is forgotten either way */ }
    this.api.forget();
    this.loggedIn = false;
    await this.run(() => this.api.startSession(), { notice: W.result.loggedOff });
  }

  /// The way on from a result screen.
  finish() {
    if (this.loggedIn) { S.home(this); return; }
    this.api.forget();
    this.run(() => this.api.startSession());
  }

  // MARK: requests

  /// Runs one request with the current screen busy, then shows what the server answered.
  async run(request, { pressed = null, busyText, notice: note } = {}) {
    busy(this.section, true, pressed, busyText);
    try {
      const env = await request();
      this.pending = null;
      this.handle(env, { note });
    } catch (e) {
      busy(this.section, false, pressed);
      if (!(e instanceof ApiError)) throw e;
      this.failed(e, () => this.run(request, { pressed, busyText, notice: note }));
    }
  }

  failed(e, retry) {
    if (e.kind === 'network' || e.kind === 'server') {
      this.pending = retry;
      const again = button(W.tryAgain, 'retry', () => { banner(this.section, null); this.pending = null; retry(); }, { primary: true });
      if (!this.section) this.offlineScreen(again, e.kind);
      else banner(this.section, h('div', { class: 'network-problem', dataset: { error: e.kind } }, notice('error', e.kind === 'network' ? W.network.offline : W.network.server), again));
      announce(e.kind === 'network' ? W.network.offline : W.network.server, true);
      return;
    }
    switch (e.code) {
      case Code.linkInvalid:
        this.api.forget();
        S.result(this, { outcome: 'failure', title: W.result.linkInvalid.title, message: [e.serverText || codeWords(e.code), W.result.linkInvalid.advice], event: 'link', errorCode: e.code });
        this.section.dataset.screenReason = 'link-invalid';
        return;
      case Code.sessionExpired:
      case Code.unauthenticated:
        this.api.forget();
        this.loggedIn = false;
        this.run(() => this.api.startSession(), { notice: codeWords(e.code) });
        return;
      case Code.replayedAnswer:
      case Code.wrongChallenge:
      case Code.flowInProgress:
        // Another answer (an earlier try whose reply was lost, another tab) moved the session on: show where it is now.
        this.run(() => this.api.current());
        return;
      default:
        banner(this.section, notice('error', codeWords(e.code, e.serverText)));
    }
  }

  offlineScreen(again, kind) {
    const el = document.getElementById('app');
    el.replaceChildren(h('section', { class: 'screen', dataset: { screen: 'offline' } },
      h('h1', { tabindex: '-1' }, W.appTitle), notice('error', kind === 'network' ? W.network.offline : W.network.server), again));
    this.section = el.firstChild;
  }

  // MARK: answers → screens

  handle(env, { note } = {}) {
    for (const fn of this.leaveHooks.splice(0)) fn();
    const s = env.session;
    if (s) {
      this.loggedIn = !!s.logged_in;
      if (s.user_id) saved.update({ userID: s.user_id });
    }
    if (env.link) saved.update({ link: env.link, linkFlowStarted: false, userID: env.link.user_id });
    if (env.challenge) { this.onChallenge(env.challenge, note); return; }
    this.challenge = null;
    if (env.event) { this.onEvent(env.event); return; }
    if (this.loggedIn) { this.afterLogin(null); return; }
    this.api.forget();
    this.run(() => this.api.startSession());
  }

  onChallenge(ch, note) {
    this.challenge = ch;
    const retried = (ch.error && ch.error.long_error_code) || (ch.status && ![0, 100].includes(ch.status.status_code));
    switch (ch.name) {
      case Challenge.getUser: return S.checkUser(this, ch, { message: note });
      case Challenge.getActivationCode: return S.activationCode(this, ch);
      case Challenge.getPassword:
        return ch.challenge_mode === Mode.set ? S.setPassword(this, ch) : S.verifyPassword(this, ch);
      // This page holds no device key: no LDA enrolment, and the password instead of a device signature.
      case Challenge.getUserConsentForLDA: return this.answer({ consent: false });
      case Challenge.getDeviceSignature: return this.answer({ fallback: 'password' });
      case Challenge.getIDVDocumentScanProcessStartConfirmation: return S.documentStart(this, ch);
      case Challenge.uploadIDVDocumentPages: return retried ? S.documentStart(this, ch, { retry: true }) : S.documentCapture(this, ch);
      case Challenge.getIDVConfirmDocumentDetails: return S.documentConfirm(this, ch);
      case Challenge.getIDVSelfieProcessStartConfirmation: return S.selfieStart(this, ch);
      case Challenge.uploadIDVSelfieFrames: return retried ? S.selfieStart(this, ch, { retry: true }) : S.selfieCapture(this, ch);
      case Challenge.getIDVSelfieConfirmation: return S.selfieConfirm(this, ch);
      case Challenge.getIDVBiometricOptInConsent: return S.consent(this, ch);
      case Challenge.onIDVOptInCapturedFrameConfirmation: return S.optInFrame(this, ch);
      default: return S.unsupported(this, ch.name);
    }
  }

  /// Logged in with no flow running: run the link's flow if it has not run yet, else the menu.
  afterLogin(ev) {
    const st = saved.read();
    const link = st.link;
    if (link && link.flow !== Flow.activation && !st.linkFlowStarted) {
      saved.update({ linkFlowStarted: true });
      this.startFlow(link.flow);
      return;
    }
    const activated = ev && this.lastAnswered && this.lastAnswered.name === Challenge.getPassword && this.lastAnswered.challenge_mode === Mode.set;
    if (activated) {
      S.result(this, { outcome: 'success', title: W.result.activated.title, message: W.result.activated.message, event: ev.name, statusCode: 100, errorCode: 0 });
      return;
    }
    S.home(this);
  }

  onEvent(ev) {
    const p = ev.payload || {};
    const errorCode = ev.error?.long_error_code ?? 0;
    const statusCode = ev.status?.status_code ?? 0;
    const ok = isSuccess(ev.error, ev.status);
    const cancelled = errorCode === Code.userCancelled || errorCode === Code.idvCancelledByUser;
    const outcome = ok ? 'success' : cancelled ? 'cancelled' : 'failure';
    const base = { outcome, event: ev.name, statusCode, errorCode, reference: p.idv_audit_info?.idv_audit_transaction_id };
    const failureText = () => [ev.status?.status_message && ![0, 100].includes(statusCode) ? ev.status.status_message : null,
      errorCode ? codeWords(errorCode, ev.error?.error_string) : null].filter(Boolean);
    switch (ev.name) {
      case Event.onUserLoggedIn: this.loggedIn = true; return this.afterLogin(ev);
      case Event.onAuthStateReset: return S.home(this);
      case Event.onUserLoggedOff:
        this.api.forget();
        this.loggedIn = false;
        return this.run(() => this.api.startSession(), { notice: W.result.loggedOff });
      case Event.onIDVActivatedCustomerKYCResponse:
        if (cancelled) return S.result(this, { ...base, title: W.result.cancelled.title, message: W.result.cancelled.message });
        return S.result(this, { ...base, title: ok ? W.result.kyc.success : W.result.kyc.failure, message: ok ? W.result.kyc.successMessage : failureText() });
      case Event.onIDVAdditionalDocumentScan:
        if (cancelled) return S.result(this, { ...base, title: W.result.cancelled.title, message: W.result.cancelled.message });
        return S.result(this, { ...base, title: ok ? W.result.docScan.success : W.result.docScan.failure, message: ok ? null : failureText(), details: ok ? S.docScanDetails(p) : [] });
      case Event.onIDVCheckUserBiometricTemplateStatus: {
        const exists = (p.status_code ?? statusCode) === 100;
        return S.result(this, { ...base, outcome: 'success', statusCode: p.status_code ?? statusCode, title: exists ? W.result.templateStatus.exists : W.result.templateStatus.none,
          message: exists ? W.result.templateStatus.existsMessage : W.result.templateStatus.noneMessage });
      }
      case Event.onIDVServerBiometricAuthenticationResult: {
        if (cancelled) return S.result(this, { ...base, title: W.result.cancelled.title, message: W.result.cancelled.message });
        const verdict = p.biometric_result?.display_text;
        const words = W.result.serverBiometric[verdict];
        const matched = ok && verdict === 'MATCHED';
        const reasons = p.analyze_liveness_response?.video?.liveness_result?.reasons || [];
        const left = Number.isInteger(p.attempts_left) ? W.result.serverBiometric.attemptsLeft(p.attempts_left) : null;
        const r = S.result(this, { ...base, outcome: matched ? 'success' : 'failure', title: words ? words[0] : W.result.serverBiometric.failure,
          message: [words ? words[1] : null, ...reasons.map((x) => W.reason[x] || x), ...(words ? [] : failureText()), left] });
        this.section.dataset.verdict = verdict || '';
        return r;
      }
      case Event.onIDVBiometricOptInStatus:
        if (cancelled) return S.result(this, { ...base, title: W.result.cancelled.title, message: W.result.cancelled.message });
        return S.result(this, { ...base, title: ok ? W.result.optIn.success : W.result.optIn.failure, message: ok ? W.result.optIn.successMessage : failureText() });
      case Event.onIDVBiometricOptOutStatus:
        if (cancelled) return S.result(this, { ...base, title: W.result.cancelled.title, message: W.result.cancelled.message });
        if (statusCode === 600) return S.result(this, { ...base, outcome: 'success', title: W.result.optOut.none, message: W.result.optOut.noneMessage });
        return S.result(this, { ...base, title: ok ? W.result.optOut.success : W.result.optOut.failure, message: ok ? W.result.optOut.successMessage : failureText() });
      default:
        return S.result(this, { ...base, title: ev.name, message: ok ? null : failureText() });
    }
  }

  // MARK: start

  async boot() {
    window.addEventListener('online', () => {
      if (!this.pending) return;
      const retry = this.pending;
      this.pending = null;
      banner(this.section, null);
      announce(W.network.resumed);
      retry();
    });
    // A link opened in a tab that already shows the page changes only the fragment: start afresh.
    window.addEventListener('hashchange', () => { if (/link=/.test(location.hash)) location.reload(); });
    const m = /(?:^#|&)link=([A-Za-z0-9_-]{16,128})(?:&|$)/.exec(location.hash);
    if (m) {
      // The token leaves the address bar (and history) at once; it is sent once, to redeem it.
      history.replaceState(null, '', location.pathname + location.search);
      this.api.forget();
      await this.run(() => this.api.redeemLink(m[1]));
      return;
    }
    if (this.api.token) {
      await this.run(() => this.api.current());
      return;
    }
    await this.run(() => this.api.startSession());
  }
}

new Controller().boot();
