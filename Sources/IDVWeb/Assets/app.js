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
    this.entryState = null;       // the entry screen the running flow started from (and its template status)
    this.afterReset = null;       // where a reset the page asked for leads (KYC's Close: back to its entry screen)
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

  startFlow(name, pressed, busyText) {
    const reason = W.flowReason[name];
    return this.run(() => this.api.startFlow(name, reason ? { reason } : {}), { pressed, busyText });
  }

  // MARK: entry screens (seeds 000, 001, 003, 004)

  /// Opens an entry screen from the menu (or a link's flow): its texts, and for the screens gated
  /// on the biometric template, "Checking…" while the status is asked (`idv.template_status`; the
  /// answer comes back as onIDVCheckUserBiometricTemplateStatus and redraws the screen).
  openEntry(kind, pressed) {
    if (kind === 'template-status') { this.entryState = null; return this.startFlow(Flow.templateStatus, pressed); }
    this.entryState = { kind, template: S.entryGate[kind] ? { checking: true } : null };
    S.entry(this, this.entryState);
    if (S.entryGate[kind]) this.checkTemplate();
    return undefined;
  }

  checkTemplate() {
    const st = this.entryState;
    st.template = { checking: true };
    return this.run(() => this.api.startFlow(Flow.templateStatus, {}), { keepBusy: true });
  }

  /// The entry screen's start button: its busy title ("Initiating...", "Starting...", …) while
  /// the flow starts on the server.
  startEntry(state, pressed, busyText) {
    state.error = null;
    return this.startFlow(S.entryFlow[state.kind], pressed, busyText);
  }

  /// Back from an entry screen to the menu.
  backHome() { this.entryState = null; S.home(this); }

  /// Back to the entry screen a result leads to (checking the template again when `recheck`).
  backToEntry(recheck) {
    const st = this.entryState;
    if (!st) return S.home(this);
    if (recheck && S.entryGate[st.kind]) { S.entry(this, st); return this.checkTemplate(); }
    return S.entry(this, st);
  }

  /// A Close that answers no challenge (seed 000 §1.5/§1.6: KYC's selfie confirmation and consent
  /// only navigate back to the KYC screen, no alert): the page ends the flow on the server
  /// (resetAuthState) and shows the KYC screen; before login (mode 8) the reset leads to getUser.
  closeWithoutAnswer(ch) {
    if (ch.challenge_mode === Mode.kyc) this.afterReset = () => { this.entryState = this.entryState || { kind: 'kyc' }; S.entry(this, this.entryState); };
    return this.reset();
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
  async run(request, { pressed = null, busyText, notice: note, keepBusy = false } = {}) {
    if (!keepBusy) busy(this.section, true, pressed, busyText);
    try {
      const env = await request();
      this.pending = null;
      this.handle(env, { note });
    } catch (e) {
      busy(this.section, false, pressed);
      if (!(e instanceof ApiError)) throw e;
      const wasChecking = !!this.entryState?.template?.checking;
      if (wasChecking) {
        // The status check itself failed: the status stays unknown and the button disabled (seed 001 L777–L784).
        this.entryState.template = { checking: false, exists: undefined, code: 0, message: W.templateCard.error(e.serverText || codeWords(e.code)) };
        if (e.kind === 'refusal') {
          this.entryState.error = this.entryState.kind === 'server-biometric' ? W.result.serverBiometric.checkFailed(e.serverText || codeWords(e.code))
            : W.result.checkFailed(e.serverText || codeWords(e.code));
          S.entry(this, this.entryState);
          return;
        }
        S.entry(this, this.entryState);
      }
      this.failed(e, () => {
        if (wasChecking && this.entryState) { this.entryState.template = { checking: true }; S.entry(this, this.entryState); }
        return this.run(request, { pressed, busyText, notice: note, keepBusy });
      });
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
      default: {
        // A refused start on an entry screen is shown as its codelab shows it (seed 000 L1029: the
        // error banner; seed 001 L869, seed 004 L1147/L1529: "Failed to initiate …"); any other
        // refusal on the screen it happened on.
        const kind = this.section?.dataset.entry;
        const text = codeWords(e.code, e.serverText);
        const R = W.result;
        const entryText = { kyc: text, 'document-scan': text, 'server-biometric': R.serverBiometric.initiateFailed(text),
          optin: R.optIn.initiateFailed(text), optout: R.optOut.initiateFailed(text) }[kind];
        banner(this.section, notice('error', entryText || text));
      }
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

  /// Logged in with no flow running: open the link's flow on its entry screen if it has not run
  /// yet, else the menu.
  afterLogin(ev) {
    const st = saved.read();
    const link = st.link;
    if (link && link.flow !== Flow.activation && !st.linkFlowStarted) {
      saved.update({ linkFlowStarted: true });
      const kind = Object.keys(S.entryFlow).find((k) => S.entryFlow[k] === link.flow && k !== 'template-status');
      if (kind) this.openEntry(kind); else this.startFlow(link.flow);
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
    const statusMessage = ev.status?.status_message;
    const errorString = ev.error?.error_string;
    const ok = isSuccess(ev.error, ev.status);
    const cancelled = errorCode === Code.userCancelled || errorCode === Code.idvCancelledByUser;
    const outcome = ok ? 'success' : cancelled ? 'cancelled' : 'failure';
    const base = { outcome, event: ev.name, statusCode, errorCode, reference: p.idv_audit_info?.idv_audit_transaction_id };
    const failed = ![0, 100].includes(statusCode);
    const entry = this.entryState;
    const R = W.result;
    switch (ev.name) {
      case Event.onUserLoggedIn: this.loggedIn = true; return this.afterLogin(ev);
      case Event.onAuthStateReset: {
        const next = this.afterReset;
        this.afterReset = null;
        return next ? next() : S.home(this);
      }
      case Event.onUserLoggedOff:
        this.api.forget();
        this.loggedIn = false;
        return this.run(() => this.api.startSession(), { notice: W.result.loggedOff });
      case Event.onIDVActivatedCustomerKYCResponse: {
        // Seed 000 L963–L999: the dual validation's alert, "Go to Dashboard".
        const message = errorCode ? R.kyc.failed(errorString || R.kyc.unknownError) : failed ? R.kyc.failed(statusMessage || R.kyc.serverError) : R.kyc.successMessage;
        return S.result(this, { ...base, title: ok ? R.kyc.success : R.kyc.failure, message, button: R.kyc.button, next: () => this.backHome() });
      }
      case Event.onIDVAdditionalDocumentScan: {
        // Seed 003: an error → the "Error" alert (OK); else the result screen (Done); both back to the entry screen.
        const toEntry = () => (entry ? this.backToEntry(false) : this.backHome());
        if (errorCode || failed) {
          const message = errorCode ? (errorString || R.docScan.scanFailed) : (statusMessage || R.docScan.serverFailed);
          return S.result(this, { ...base, title: R.docScan.errorTitle, message, button: R.ok, next: toEntry });
        }
        return S.result(this, { ...base, title: R.docScan.title, details: S.docScanDetails(p), button: R.docScan.done, next: toEntry });
      }
      case Event.onIDVCheckUserBiometricTemplateStatus: {
        const code = p.status_code ?? statusCode;
        if (entry?.template?.checking) {
          entry.template = errorCode ? { checking: false, exists: false, code: statusCode, message: W.templateCard.error(errorString || codeWords(errorCode)) }
            : { checking: false, exists: code === 100, code, message: p.status_message || statusMessage || '' };
          return S.entry(this, entry);
        }
        const exists = !errorCode && code === 100;
        const r = S.result(this, { ...base, outcome: errorCode ? 'failure' : 'success', statusCode: code, title: R.templateStatus.title,
          message: errorCode ? codeWords(errorCode, errorString) : null,
          details: errorCode ? [] : [h('div', { class: `notice ${exists ? 'info' : 'warning'} template-status`, dataset: { template: exists ? 'exists' : 'none' } },
            h('p', {}, h('strong', {}, exists ? W.templateCard.existsTitle : W.templateCard.noneTitle)),
            h('p', {}, exists ? W.templateCard.exists : W.templateCard.none),
            h('p', {}, W.templateCard.code(p.status_message || statusMessage || '', code)))] });
        return r;
      }
      case Event.onIDVServerBiometricAuthenticationResult: {
        // Seed 001 L915–L996: error → "Authentication Error"; failed status → "Authentication Failed";
        // else MATCHED → "✅ Authentication Success" (Back to Dashboard), other → "❌ Authentication Failed" (OK, back to the screen).
        const B = R.serverBiometric;
        const verdict = p.biometric_result?.display_text;
        const backToScreen = () => (entry ? this.backToEntry(false) : this.backHome());
        let title, message, button = R.ok, next = backToScreen, out = outcome;
        if (errorCode) { title = B.errorTitle; message = B.errorMessage(errorString || '', errorCode); }
        else if (failed) { title = B.failedTitle; message = B.statusMessage(statusMessage || '', statusCode); }
        else {
          const shown = verdict || B.unknown;
          const body = B.body(shown, p.idv_audit_info?.orchestration_use_case || B.notAvailable, p.idv_audit_info?.idv_audit_transaction_id || B.notAvailable,
            Number.isInteger(p.attempts_left) ? p.attempts_left : 0);
          if (shown === 'MATCHED') { title = B.successTitle; message = body; button = B.backToDashboard; next = () => this.backHome(); out = 'success'; }
          else {
            title = B.failureTitle; out = 'failure';
            const reasons = p.analyze_liveness_response?.video?.liveness_result?.reasons || [];
            message = [...body, B.explain[shown], ...reasons.map((x) => W.reason[x] || x)];
          }
        }
        const r = S.result(this, { ...base, outcome: out, title, message, button, next });
        this.section.dataset.verdict = verdict || '';
        return r;
      }
      case Event.onIDVBiometricOptInStatus: {
        // Seed 004 L1336–L1347: success only with error 0 and status 100; then the screen checks the template again.
        const success = !errorCode && statusCode === 100;
        const message = success ? R.optIn.successMessage : failed ? (statusMessage || '') : (errorString || '');
        return S.result(this, { ...base, outcome: success ? 'success' : outcome, title: success ? R.optIn.success : R.optIn.failure, message,
          button: R.ok, next: () => (entry ? this.backToEntry(success) : this.backHome()) });
      }
      case Event.onIDVBiometricOptOutStatus: {
        // Seed 004 L1636–L1649: Success / No Template (600) / Opt-Out Failed with the status message.
        const success = !errorCode && statusCode === 100;
        const none = statusCode === 600;
        const title = success ? R.optOut.success : none ? R.optOut.none : R.optOut.failure;
        const message = success ? R.optOut.successMessage : none ? R.optOut.noneMessage : (statusMessage || '');
        return S.result(this, { ...base, outcome: success || none ? 'success' : outcome, title, message, button: R.ok,
          next: () => (entry ? this.backToEntry(success || none) : this.backHome()) });
      }
      default:
        return S.result(this, { ...base, title: ev.name, message: ok ? null : [statusMessage && failed ? statusMessage : null, errorCode ? codeWords(errorCode, errorString) : null].filter(Boolean) });
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
