// screens.js — the codelab screens (seed 002 §8 and the post-login seeds), one function each. A
// screen shows what the server asked and answers it through the controller; it never judges.
// Every screen has a stable data-screen, every primary action a stable data-action.

import { W, codeWords } from './words.js';
import { h, show, field, button, notice, image, announce, banner, busy } from './ui.js';
import { ActionKey, FrameStatus, Mode, Flow, Code, isSuccess } from './protocol.js';
import { openCamera, stopCamera, attach, frameQuality, takeStill, recordSequence, base64Of, CameraError } from './camera.js';
import { illuminationOf, fallbackOf, declineAnswer, flashAndRecord } from './flash.js';

const attempts = (ch) => (ch.attempts_left >= 0 && ch.attempts_left !== undefined ? h('p', { class: 'attempts', dataset: { attemptsLeft: String(ch.attempts_left) } }, W.attemptsLeft(ch.attempts_left)) : null);

/// The verdict the server attached to a re-asked challenge (error and/or status), in plain words.
function verdictNotice(ch) {
  const e = ch.error, st = ch.status;
  const lines = [];
  if (e && e.long_error_code) lines.push(codeWords(e.long_error_code, e.error_string, ch.payload));
  if (st && st.status_code && ![0, 100].includes(st.status_code) && st.status_message) lines.push(W.statusWords[st.status_message] || st.status_message);
  const reasons = ch.payload && ch.payload.liveness_reasons;
  if (Array.isArray(reasons)) for (const r of reasons) lines.push(W.reason[r] || r);
  return lines.length ? notice('error', lines) : null;
}

function form(onsubmit, ...children) {
  return h('form', { novalidate: true, onsubmit: (e) => { e.preventDefault(); onsubmit(e); } }, ...children);
}

function actions(...buttons) { return h('div', { class: 'actions' }, ...buttons); }

// MARK: MFA screens

export function checkUser(ctl, ch, { message } = {}) {
  const { field: f, input } = field(W.checkUser.label, { name: 'username', autocomplete: 'username', autocapitalize: 'none', spellcheck: 'false', required: true, value: ctl.rememberedUser() || '' });
  const go = button(W.checkUser.button, 'confirm', null, { primary: true, extra: { type: 'submit' } });
  ctl.section = show('check-user', { title: W.checkUser.title, subtitle: W.checkUser.subtitle },
    message ? notice('info', message) : null, verdictNotice(ch),
    form(() => { const v = input.value.trim(); if (v) ctl.answer({ user_id: v }, go); else input.focus(); }, f, actions(go)));
  if (!input.value) input.focus();
}

export function activationCode(ctl, ch) {
  const { field: f, input } = field(W.activationCode.label, { name: 'code', autocomplete: 'one-time-code', autocapitalize: 'characters', spellcheck: 'false', required: true, inputmode: 'text' });
  const go = button(W.activationCode.button, 'confirm', null, { primary: true, extra: { type: 'submit' } });
  ctl.section = show('activation-code', { title: W.activationCode.title, subtitle: W.activationCode.subtitle(ch.user_id || ctl.rememberedUser() || '') },
    verdictNotice(ch), attempts(ch),
    form(() => { const v = input.value.trim(); if (v) ctl.answer({ activation_code: v }, go); else input.focus(); }, f, actions(go)));
  input.focus();
}

export function setPassword(ctl, ch) {
  const a = field(W.setPassword.label, { type: 'password', name: 'new-password', autocomplete: 'new-password', required: true, minlength: '8' });
  const b = field(W.setPassword.confirmLabel, { type: 'password', name: 'new-password-repeat', autocomplete: 'new-password', required: true });
  const go = button(W.setPassword.button, 'confirm', null, { primary: true, extra: { type: 'submit' } });
  ctl.section = show('set-password', { title: W.setPassword.title, subtitle: W.setPassword.subtitle }, verdictNotice(ch),
    form(() => {
      if (!a.input.value) { a.input.focus(); return; }
      if (a.input.value !== b.input.value) { banner(ctl.section, notice('error', W.setPassword.mismatch)); b.input.focus(); return; }
      ctl.answer({ password: a.input.value }, go);
    }, a.field, b.field, actions(go)));
  a.input.focus();
}

/// getPassword mode 0 (login) and the re-authentication of opt-in / opt-out (modes 6, 7).
export function verifyPassword(ctl, ch) {
  const reauth = ch.challenge_mode === Mode.optIn || ch.challenge_mode === Mode.optOut;
  const words = reauth ? (W.reauth[ch.challenge_mode] || W.reauth.fallback) : null;
  const { field: f, input } = field(reauth ? W.reauth.label : W.verifyPassword.label, {
    type: 'password', name: 'password', autocomplete: 'current-password', required: true, placeholder: reauth ? W.reauth.placeholder : undefined,
  });
  const go = button(reauth ? W.reauth.button : W.verifyPassword.button, 'confirm', null, { primary: true, extra: { type: 'submit' } });
  // Seed 004's dialog: Cancel ends the opt-in / opt-out (240); its error box shows the error, else a
  // status other than 100 (L1163–L1169); its badge the attempts when 3 or fewer (L533–L546).
  const cancel = reauth ? button(W.cancel, 'cancel', () => ctl.answer({ cancel: true }, cancel)) : null;
  const badge = reauth && Number.isInteger(ch.attempts_left) && ch.attempts_left >= 0 && ch.attempts_left <= 3
    ? h('p', { class: 'attempts', dataset: { attemptsLeft: String(ch.attempts_left) } }, W.reauth.attempts(ch.attempts_left)) : null;
  ctl.section = show('verify-password', {
    title: reauth ? words.title : W.verifyPassword.title,
    subtitle: reauth ? words.subtitle : W.verifyPassword.subtitle(ch.user_id || ctl.rememberedUser() || ''),
    dataset: { mode: String(ch.challenge_mode) },
  }, verdictNotice(ch), reauth ? badge : attempts(ch),
  form(() => { if (input.value) ctl.answer({ password: input.value }, go); else input.focus(); }, f, actions(cancel, go)));
  input.focus();
}

// MARK: Document

function workflowOf(ch) { return ch.payload?.idv_workflow ?? ch.idv_workflow ?? 0; }

/// getIDVDocumentScanProcessStartConfirmation, and a re-asked uploadIDVDocumentPages (the last
/// capture was refused: unreadable, no MRZ…): the same screen, whose confirm then opens the camera.
export function documentStart(ctl, ch, { retry = false } = {}) {
  const wf = workflowOf(ch);
  const scan = button(W.documentStart.button, 'confirm', () => {
    if (retry) documentCapture(ctl, ch);
    else ctl.answer({ is_confirm: true }, scan, W.documentStart.buttonBusy);
  }, { primary: true });
  const cancel = () => (retry ? ctl.answer({ cancel: true }) : ctl.answer({ is_confirm: false }));
  ctl.section = show('document-start', { title: retry ? W.documentStart.retryTitle : W.documentStart.title, subtitle: W.documentStart.subtitle, closeAction: cancel, dataset: { workflow: String(wf), retry: retry ? 'true' : 'false' } },
    verdictNotice(ch), attempts(ch),
    h('div', { class: 'guidelines' },
      h('p', { class: 'workflow-guideline' }, W.workflowGuideline[wf] || W.workflowGuideline.default),
      h('h2', {}, W.documentStart.guidelinesTitle),
      h('ul', {}, W.documentStart.guidelines.map((g) => h('li', {}, g)))),
    actions(button(W.cancel, 'cancel', cancel), scan));
}

/// The camera screen of uploadIDVDocumentPages: back camera, a frame guide, a live hint (dark,
/// glare, blurry, good) before the shot, review with retake, one or two pages, then the upload.
export function documentCapture(ctl, ch) {
  const maxPages = Math.max(1, Math.min(2, ch.payload?.max_pages ?? 2));
  const pages = [];   // {blob, url}
  let stream = null, loop = null, current = null;

  const video = h('video', { class: 'preview', autoplay: true, muted: true, playsinline: true, 'aria-label': W.documentCapture.videoLabel });
  const guide = h('div', { class: 'guide document', 'aria-hidden': 'true' });
  const stage = h('div', { class: 'stage' }, video, guide);
  const hint = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite', dataset: { hint: 'waiting' } }, W.documentCapture.starting);
  const review = h('div', { class: 'review', hidden: true });
  const captureBtn = button(W.documentCapture.capture, 'capture', () => shoot(), { primary: true });
  const cancelBtn = button(W.cancel, 'cancel', () => { cleanup(); ctl.answer({ cancel: true }); });
  const liveActions = actions(cancelBtn, captureBtn);
  const title = h('p', { class: 'page-label', dataset: { page: '0' } }, W.documentCapture.title(0));

  const cleanup = () => { if (loop) clearInterval(loop); loop = null; stopCamera(stream); stream = null; for (const p of pages) URL.revokeObjectURL(p.url); };
  ctl.onLeave(cleanup);
  ctl.section = show('document-capture', { title: W.documentStart.title, subtitle: W.documentCapture.subtitle, closeAction: () => { cleanup(); ctl.answer({ cancel: true }); } },
    verdictNotice(ch), title, stage, hint, liveActions, review);

  function setHint(verdict) {
    if (hint.dataset.hint === verdict) return;
    hint.dataset.hint = verdict;
    hint.textContent = W.hint[verdict] || W.hint.waiting;
  }

  async function start() {
    captureBtn.disabled = true;
    try {
      stream = await openCamera('environment');
      await attach(video, stream);
      captureBtn.disabled = false;
      setHint(frameQuality(video).verdict);
      loop = setInterval(() => { if (video.videoWidth) setHint(frameQuality(video).verdict); }, 400);
    } catch (e) {
      cameraProblem(ctl, e, start);
    }
  }

  async function shoot() {
    captureBtn.disabled = true;
    const q = frameQuality(video);
    try {
      const still = await takeStill(video);
      current = { blob: still.blob, url: URL.createObjectURL(still.blob), quality: q.verdict };
    } catch (e) {
      cameraProblem(ctl, e, () => { captureBtn.disabled = false; });
      return;
    }
    showReview();
  }

  function showReview() {
    const index = pages.length;
    stage.hidden = true; hint.hidden = true; liveActions.hidden = true;
    const retake = button(W.documentCapture.retake, 'retake', () => { URL.revokeObjectURL(current.url); current = null; showLive(); });
    const canAdd = index === 0 && maxPages > 1;
    const add = canAdd ? button(W.documentCapture.addPage, 'add-page', () => { pages.push(current); current = null; title.dataset.page = '1'; title.textContent = W.documentCapture.title(1); showLive(); }) : null;
    const send = button(index === 0 ? W.documentCapture.usePhoto : W.documentCapture.sendPages(index + 1), 'confirm', () => upload(send), { primary: true });
    review.replaceChildren(...[
      h('h2', {}, W.documentCapture.reviewTitle),
      h('p', {}, W.documentCapture.reviewSubtitle),
      current.quality !== 'good' ? notice('warning', W.hint[current.quality]) : null,
      h('div', { class: 'shots' }, ...pages.map((p, i) => image(p.url, W.documentCapture.shotAlt(i), 'shot')), image(current.url, W.documentCapture.shotAlt(index), 'shot')),
      actions(retake, add, send)].filter(Boolean));
    review.hidden = false;
    send.focus();
    announce(W.documentCapture.reviewTitle);
  }

  function showLive() {
    review.hidden = true; stage.hidden = false; hint.hidden = false; liveActions.hidden = false;
    captureBtn.disabled = false;
    captureBtn.focus();
  }

  async function upload(send) {
    const all = [...pages, current];
    busy(ctl.section, true, send, W.documentCapture.uploading);
    let encoded;
    try {
      encoded = await Promise.all(all.map(async (p, i) => ({ page_index: i, image: await base64Of(p.blob) })));
    } catch {
      busy(ctl.section, false, send);
      banner(ctl.section, notice('error', W.camera.failed));
      return;
    }
    ctl.answer({ pages: encoded }, null, W.documentCapture.uploading);
  }

  start();
}

/// The camera could not be used: plain words, and a way to try again or cancel.
function cameraProblem(ctl, e, retry) {
  const kind = e instanceof CameraError ? e.kind : 'failed';
  const section = ctl.section;
  section.dataset.cameraError = kind;
  const live = [...section.querySelectorAll(':scope > .stage, :scope > .hint, :scope > .instruction, :scope > .page-label, :scope > .actions')];
  for (const el of [...live, ...section.querySelectorAll(':scope > .review, :scope > progress')]) el.hidden = true;
  const again = button(W.tryAgain, 'retry', () => { delete section.dataset.cameraError; banner(section, null); for (const el of live) el.hidden = false; retry(); }, { primary: true });
  const cancel = button(W.cancel, 'cancel', () => ctl.answer({ cancel: true }));
  banner(section, h('div', { class: 'camera-problem', dataset: { error: kind } }, notice('error', W.camera[kind] || W.camera.failed), actions(cancel, again)));
  announce(W.camera[kind] || W.camera.failed, true);
  again.focus();
}

export function documentConfirm(ctl, ch) {
  const d = (ch.payload && ch.payload.response_data) || {};
  const info = d.document_info || {};
  const pagesByIndex = Object.fromEntries((d.document_pages || []).map((p) => [p.page_index, p.image]));
  const status = d.overall_status || '';
  const name = `${info.given_name || ''} ${info.surname || ''}`.trim();
  const rows = W.documentConfirm.rows.map(([k, label]) => h('div', { class: 'row', dataset: { field: k } }, h('dt', {}, label), h('dd', {}, info[k] || W.documentConfirm.notAvailable)));
  const checks = (d.checks_performed || []).map((c) => h('li', { dataset: { check: c.check_name, result: c.result } },
    h('span', { class: 'check-name' }, W.checkName[c.check_name] || String(c.check_name).replaceAll('_', ' ')),
    h('span', { class: `check-result ${String(c.result).toLowerCase()}` }, W.checkResult[c.result] || c.result)));
  const confirm = button(W.documentConfirm.confirm, 'confirm', () => ctl.answer({ is_confirm: true }, confirm), { primary: status !== 'INVALID' });
  // Recapture rescans in every mode (`rescan`); in KYC a plain false is the Close button's cancel
  // API (seed 000 L1265: the flow ends with 240), before login Close is resetAuthState (L1255).
  const recapture = button(W.documentConfirm.recapture, 'retake', () => ctl.answer({ is_confirm: false, rescan: true }, recapture), { primary: status === 'INVALID' });
  const close = ch.challenge_mode === Mode.kyc ? () => ctl.answer({ is_confirm: false }) : ch.challenge_mode === Mode.activation ? () => ctl.reset() : null;
  ctl.section = show('document-confirm', { title: W.documentConfirm.title, subtitle: W.documentConfirm.subtitle, closeAction: close, dataset: { status } },
    verdictNotice(ch),
    status === 'INVALID' ? notice('error', W.documentConfirm.invalidNote, ...(d.errors || []).map(String)) : null,
    h('div', { class: 'identity' },
      image(info.portrait_image, W.documentConfirm.portraitAlt, 'portrait'),
      h('div', {}, name ? h('p', { class: 'name', dataset: { field: 'name' } }, name) : null, h('dl', { class: 'rows' }, rows))),
    h('div', { class: 'pages' },
      pagesByIndex[0] ? image(pagesByIndex[0], W.documentConfirm.frontAlt, 'page') : null,
      pagesByIndex[1] ? image(pagesByIndex[1], W.documentConfirm.backAlt, 'page') : null),
    checks.length ? h('section', { class: 'checks' }, h('h2', {}, W.documentConfirm.checksTitle), h('ul', {}, checks)) : null,
    (d.errors || []).length && status !== 'INVALID' ? h('section', { class: 'errors' }, h('h2', {}, W.documentConfirm.errorsTitle), h('ul', {}, d.errors.map((e) => h('li', {}, String(e))))) : null,
    (d.warnings || []).length ? h('section', { class: 'warnings' }, h('h2', {}, W.documentConfirm.warningsTitle), h('ul', {}, d.warnings.map((w) => h('li', {}, String(w))))) : null,
    h('p', { class: `overall status-${status.toLowerCase()}`, dataset: { overallStatus: status } }, `${W.documentConfirm.statusLabel}: `, h('strong', {}, W.documentConfirm.status[status] || status)),
    actions(recapture, confirm));
}

// MARK: Selfie

/// getIDVSelfieProcessStartConfirmation, and a re-asked uploadIDVSelfieFrames (the last capture was
/// refused, or not live in opt-in): the same screen, whose confirm then opens the camera.
export function selfieStart(ctl, ch, { retry = false } = {}) {
  const wf = workflowOf(ch);
  const challenge = ch.payload?.liveness_challenge;
  const back = h('input', { type: 'checkbox', id: 'back-camera', role: 'switch', checked: !!ctl.saved().backCamera });
  const go = button(W.selfieStart.button, 'confirm', () => {
    ctl.remember({ backCamera: back.checked });
    if (retry) selfieCapture(ctl, ch);
    else ctl.answer({ is_confirm: true, use_back_camera: back.checked }, go, W.selfieStart.buttonBusy);
  }, { primary: true });
  const cancel = () => (retry ? ctl.answer({ cancel: true }) : ctl.answer({ is_confirm: false, use_back_camera: false }));
  ctl.section = show('selfie-start', { title: retry ? W.selfieStart.retryTitle : W.selfieStart.title, subtitle: W.selfieStart.subtitle, closeAction: cancel, dataset: { workflow: String(wf), retry: retry ? 'true' : 'false' } },
    verdictNotice(ch), attempts(ch),
    challenge && Array.isArray(challenge.actions) ? h('div', { class: 'notice info challenge', dataset: { challengeActions: challenge.actions.join(',') } },
      h('p', {}, W.selfieStart.challengeTitle), h('ol', {}, challenge.actions.map((a) => h('li', {}, W.action[a] || a)))) : null,
    h('div', { class: 'guidelines' }, h('h2', {}, W.selfieStart.guidelinesTitle),
      h('ul', {}, (W.selfieGuidelines[wf] || W.selfieGuidelines.default).map((g) => h('li', {}, g)))),
    h('div', { class: 'switch' }, back, h('label', { for: 'back-camera' }, W.selfieStart.backCamera)),
    actions(button(W.cancel, 'cancel', cancel), go));
}

/// The camera screen of uploadIDVSelfieFrames: front camera (or back, as chosen), an oval guide;
/// "Start" records a sequence at 10 frames per second — 3 s, or the active-liveness challenge's
/// duration with its actions shown one after the other as they are due — and uploads it with its rate.
/// Under the server's illumination challenge (presence) the screen first warns about flashing light
/// and offers the head-movement check instead; "Start" then flashes the colours full screen while
/// recording, and the upload carries each frame's time from the first colour (frame_times_ms).
export function selfieCapture(ctl, ch) {
  const FPS = 10;
  const flash = illuminationOf(ch);
  const challenge = ch.payload?.liveness_challenge;
  const acts = challenge && Array.isArray(challenge.actions) ? challenge.actions : [];
  const seconds = acts.length ? Math.max(2, Math.min(challenge.duration_seconds || 6, 15)) : 3;
  const maxFrames = ch.payload?.max_frames ?? 150;
  const count = Math.min(maxFrames, Math.round(seconds * FPS));
  const facing = ctl.saved().backCamera ? 'environment' : 'user';
  let stream = null, loop = null;

  const video = h('video', { class: `preview ${facing === 'user' ? 'mirrored' : ''}`, autoplay: true, muted: true, playsinline: true, 'aria-label': W.selfieCapture.videoLabel });
  const stage = h('div', { class: 'stage' }, video, h('div', { class: 'guide face', 'aria-hidden': 'true' }));
  const instruction = h('p', { class: 'instruction', role: 'status', 'aria-live': 'assertive', dataset: { instruction: 'idle' } }, W.selfieCapture.ready);
  const bar = h('progress', { max: String(count), value: '0', 'aria-label': W.selfieCapture.progress, hidden: true });
  const startBtn = button(W.selfieCapture.start, 'capture', () => record(), { primary: true });
  const cancelBtn = button(W.cancel, 'cancel', () => { cleanup(); ctl.answer({ cancel: true }); });
  // The person may decline the flashing screen: the server then asks again with its fallback.
  const declineBtn = flash ? button(W.presence.decline, 'decline-flash', () => { cleanup(); ctl.answer(declineAnswer()); }) : null;
  const cleanup = () => { if (loop) clearInterval(loop); loop = null; stopCamera(stream); stream = null; };
  ctl.onLeave(cleanup);
  const fallback = fallbackOf(ch);
  ctl.section = show('selfie-capture', { title: W.selfieCapture.title, subtitle: W.selfieCapture.subtitle, closeAction: () => { cleanup(); ctl.answer({ cancel: true }); },
    dataset: { frames: String(count), fps: String(FPS), presence: flash ? 'illumination' : (fallback ? `fallback-${fallback}` : 'none') } },
    verdictNotice(ch),
    flash ? h('div', { class: 'notice warning photosensitivity', role: 'status', dataset: { notice: 'photosensitivity' } },
      h('p', {}, W.presence.warning), h('p', {}, W.presence.brightness)) : null,
    fallback ? notice('info', W.presence.fallback) : null,
    stage, instruction, bar, actions(cancelBtn, declineBtn, startBtn));

  function say(key, text) {
    if (instruction.dataset.instruction === key) return;
    instruction.dataset.instruction = key;
    instruction.textContent = text;
  }

  async function start() {
    startBtn.disabled = true;
    try {
      stream = await openCamera(facing);
      await attach(video, stream);
      startBtn.disabled = false;
      loop = setInterval(() => {
        const q = frameQuality(video, { w: 0.5, h: 0.7 });
        if (q.verdict === 'dark') say('dark', W.camera.dark); else if (q.verdict !== 'waiting') say('ready', W.selfieCapture.ready);
      }, 500);
    } catch (e) {
      cameraProblem(ctl, e, start);
    }
  }

  async function record() {
    startBtn.disabled = true; cancelBtn.disabled = true;
    if (declineBtn) declineBtn.disabled = true;
    if (loop) clearInterval(loop);
    loop = null;
    say('get-ready', W.selfieCapture.getReady);
    await new Promise((r) => setTimeout(r, 1000));
    bar.hidden = false;
    const perAction = acts.length ? count / acts.length : count;
    say(acts.length ? `action-0-${acts[0]}` : 'passive', acts.length ? W.action[acts[0]] || acts[0] : W.selfieCapture.passive);
    let result;
    if (flash) {
      say('flashing', W.presence.flashing);
      try {
        result = await flashAndRecord(video, stream, flash, { fps: FPS, maxFrames });
      } catch (e) {
        cameraProblem(ctl, e, () => { startBtn.disabled = false; cancelBtn.disabled = false; if (declineBtn) declineBtn.disabled = false; });
        return;
      }
      say('done', W.selfieCapture.done);
      ctl.answer({ frames: result.frames, fps: result.fps, frame_times_ms: result.frame_times_ms }, null, W.selfieCapture.uploading);
      return;
    }
    try {
      result = await recordSequence(video, {
        fps: FPS, count,
        onFrame: (i) => {
          bar.value = i + 1;
          if (acts.length) {
            const k = Math.min(acts.length - 1, Math.floor((i + 1) / perAction));
            say(`action-${k}-${acts[k]}`, W.action[acts[k]] || acts[k]);
          }
        },
      });
    } catch (e) {
      cameraProblem(ctl, e, () => { startBtn.disabled = false; cancelBtn.disabled = false; });
      return;
    }
    say('done', W.selfieCapture.done);
    ctl.answer({ frames: result.frames, fps: result.fps }, null, W.selfieCapture.uploading);
  }

  start();
}

export function selfieConfirm(ctl, ch) {
  const r = (ch.payload && ch.payload.response_data) || {};
  const verdict = r.biometric_result?.display_text || '';
  const matched = verdict === 'MATCHED';
  const live = r.analyze_liveness_response?.video;
  const faceScore = r.face_matcher_response?.score;
  const liveScore = live?.liveness_result?.score;
  const reasons = r.liveness_reasons || live?.liveness_result?.reasons || [];
  // Seed 002 L2851–L2869: the document's name, else the user ID.
  const docName = r.document_detail?.document_info?.name || ch.payload?.user_id || ch.user_id;
  const buttonsCfg = ch.payload?.action_buttons || {};
  let cfg = matched ? buttonsCfg.success_button : buttonsCfg.failure_button;
  if (!Array.isArray(cfg) || cfg.length === 0) cfg = W.selfieConfirm.fallbackButtons.map(([t, k]) => ({ button_text: t, key: k }));
  const actionOf = (key) => (key === ActionKey.continueFlow ? 'confirm' : key === ActionKey.reinitSelfie ? 'retake' : key === ActionKey.reinitDocument ? 'rescan-document' : 'other');
  const btns = cfg.map((b) => {
    const key = b.key || ActionKey.continueFlow;
    const el = button(b.button_text || 'Action', actionOf(key), () => ctl.answer({ action: key }, el), { primary: /continue/i.test(b.button_text || ''), extra: { dataset: { key } } });
    return el;
  });
  const matchText = verdict === 'LIVENESS_FAILED' ? W.selfieConfirm.livenessFailed : matched ? W.selfieConfirm.matched : W.selfieConfirm.notMatched;
  const scores = [
    typeof faceScore === 'number' ? [W.selfieConfirm.faceMatch, `${(faceScore * 100).toFixed(2)}%`, 'face-match'] : null,
    Number.isInteger(liveScore) ? [W.selfieConfirm.liveness, `${liveScore}%`, 'liveness'] : null,
    r.biometric_result?.result_criteria ? [W.selfieConfirm.criteria, r.biometric_result.result_criteria, 'criteria'] : null,
  ].filter(Boolean);
  ctl.section = show('selfie-confirm', { title: W.selfieConfirm.title, closeAction: () => ctl.closeWithoutAnswer(ch), dataset: { verdict } },
    verdictNotice(ch),
    docName ? h('p', { class: 'name', dataset: { field: 'name' } }, docName) : null,
    h('div', { class: 'compare' },
      image(r.document_detail?.document_info?.portrait_image, W.selfieConfirm.documentPhotoAlt, 'portrait'),
      image(live?.autocapture_result?.selfie_image, W.selfieConfirm.selfieAlt, 'portrait')),
    verdict ? h('div', { class: `match ${matched ? 'ok' : 'bad'}`, role: 'status' },
      h('span', { class: 'icon', 'aria-hidden': 'true' }, matched ? '✓' : '✗'),
      h('p', {}, matchText), h('p', { class: 'verdict' }, W.selfieConfirm.status(verdict))) : null,
    reasons.length ? notice('warning', reasons.map((x) => W.reason[x] || x)) : null,
    scores.length ? h('dl', { class: 'rows scores' }, scores.map(([k, v, id]) => h('div', { class: 'row', dataset: { score: id } }, h('dt', {}, k), h('dd', {}, v)))) : null,
    actions(...btns));
}

/// onIDVOptInCapturedFrameConfirmation (seed 004 §6.5): approve, recapture or cancel the frame.
export function optInFrame(ctl, ch) {
  const p = ch.payload || {};
  const approve = button(W.optInFrame.approve, 'approve', () => ctl.answer({ status: FrameStatus.approved }, approve), { primary: true });
  const again = button(W.optInFrame.recapture, 'retake', () => ctl.answer({ status: FrameStatus.recapture }, again));
  const cancel = button(W.optInFrame.cancel, 'cancel', () => ctl.answer({ status: FrameStatus.cancel }, cancel));
  ctl.section = show('selfie-confirm', { title: W.optInFrame.title, subtitle: W.optInFrame.subtitle, dataset: { variant: 'optin-frame' } },
    verdictNotice(ch),
    h('div', { class: 'compare single' }, image(p.captured_frame, W.optInFrame.alt, 'portrait')),
    Number.isInteger(p.liveness_score) ? h('dl', { class: 'rows scores' }, h('div', { class: 'row', dataset: { score: 'liveness' } }, h('dt', {}, W.optInFrame.liveness), h('dd', {}, `${p.liveness_score}%`))) : null,
    actions(cancel, again, approve));
}

export function consent(ctl, ch) {
  const approve = button(W.consent.approve, 'approve', () => ctl.answer({ is_opt_in: true }, approve), { primary: true });
  const reject = button(W.consent.reject, 'reject', () => ctl.answer({ is_opt_in: false }, reject));
  ctl.section = show('consent', { title: W.consent.title, closeAction: () => ctl.closeWithoutAnswer(ch) },
    verdictNotice(ch),
    h('div', { class: 'consent-text' },
      h('p', {}, ch.challenge_mode === 10 ? W.consent.description10 : W.consent.description),
      ch.payload?.consent_text ? h('p', { class: 'consent-server-text' }, ch.payload.consent_text) : null,
      h('ul', { class: 'consent-bullets' }, W.consent.bullets.map((b) => h('li', {}, b)))),
    actions(reject, approve));
}

// MARK: Post-login menu, entry screens and results

export function home(ctl, { message } = {}) {
  const user = ctl.rememberedUser() || '';
  ctl.section = show('home', { title: W.home.title(user), subtitle: W.home.subtitle },
    message ? notice('info', message) : null,
    h('ul', { class: 'menu' }, W.home.flows.map(([entry, title, text]) => {
      const b = button(title, 'start-flow', () => ctl.openEntry(entry, b), { extra: { dataset: { flow: entryFlow[entry], entry } } });
      return h('li', {}, b, h('p', {}, text));
    })),
    actions(button(W.home.logoff, 'logoff', () => ctl.logoff())));
}

/// The flow each entry screen starts (`data-flow` of the menu's buttons: the registry name).
export const entryFlow = { kyc: Flow.kyc, 'document-scan': Flow.documentScan, 'server-biometric': Flow.serverBiometric, optin: Flow.optIn, optout: Flow.optOut,
  'template-status': Flow.templateStatus };

/// Which entry screens check the biometric template first, and when their start button is enabled
/// (seed 001 L1004–L1025: authentication needs a template; seed 004 L1873–L1874: opt-in needs
/// none, L1653–L1672: opt-out needs one).
export const entryGate = {
  'server-biometric': (exists) => exists === true,
  optin: (exists) => exists === false,
  optout: (exists) => exists === true,
};

const entryWords = { kyc: W.entry.kyc, 'document-scan': W.entry.documentScan, 'server-biometric': W.entry.serverBiometric, optin: W.entry.optIn, optout: W.entry.optOut };

/// The template status card (seed 001 L826–L846): title and text by the status, "Status: … (Code: …)".
function templateCard(t) {
  if (!t || t.checking) return null;
  const exists = t.exists === true;
  return h('div', { class: `notice ${exists ? 'info' : 'warning'} template-status`, role: 'status', dataset: { template: exists ? 'exists' : 'none', statusCode: String(t.code ?? '') } },
    h('p', { class: 'template-title' }, h('strong', {}, exists ? W.templateCard.existsTitle : W.templateCard.noneTitle)),
    h('p', {}, exists ? W.templateCard.exists : W.templateCard.none),
    h('p', { class: 'template-code' }, W.templateCard.code(t.message ?? '', t.code ?? 0)));
}

/// An entry screen (seed 000 KYC, 003 Additional Document Scan, 001 Biometric Authentication, 004
/// Opt-In / Opt-Out): its texts, the template card where gated, and the start button — disabled
/// with its note while the gate is closed, titled "Checking…" while the status is asked. `state`:
/// {kind, template: {checking, exists, code, message}}.
export function entry(ctl, state) {
  const w = entryWords[state.kind];
  const gate = entryGate[state.kind];
  const checking = !!(gate && (!state.template || state.template.checking));
  const enabled = !gate || (!checking && gate(state.template.exists));
  const start = button(checking ? w.checking : w.start, 'start', () => ctl.startEntry(state, start, w.busy), { primary: true });
  start.disabled = !enabled;
  let body;
  if (state.kind === 'kyc') {
    body = [
      h('section', { class: 'guidelines kyc-info' }, h('h2', {}, w.infoTitle), h('p', {}, w.infoText)),
      h('ul', { class: 'steps' }, w.steps.map((t) => h('li', {}, t))),
      h('ul', { class: 'requirements' }, w.requirements.map((t) => h('li', {}, t))),
    ];
  } else if (state.kind === 'document-scan') {
    body = [h('section', { class: 'guidelines' }, w.info.map((t) => h('p', {}, t)))];
  } else {
    body = [templateCard(state.template)];
  }
  ctl.section = show(state.kind, { title: w.title, subtitle: w.subtitle, dataset: { entry: state.kind, template: gate ? (checking ? 'checking' : state.template.exists ? 'exists' : 'none') : '' } },
    ...body,
    state.error ? notice('error', state.error) : null,
    !enabled && !checking ? h('p', { class: 'disabled-note' }, w.disabledNote) : null,
    actions(button(W.entry.back, 'back', () => ctl.backHome()), start));
  if (checking) busy(ctl.section, true, null, w.checking);
}

/// A result (the codelabs' alert, or seed 003's result screen): title, message, details, and one
/// way on — its `button` text (the codelab's: "Go to Dashboard", "OK", "Done", "Back to
/// Dashboard") leading to `next` (default: the menu when logged in). `outcome` is success |
/// failure | cancelled.
export function result(ctl, { outcome, title, message, details = [], event = '', statusCode, errorCode, reference, button: label, next }) {
  const done = button(label || (ctl.isLoggedIn() ? W.result.home : W.result.done), 'confirm', () => (next ? next() : ctl.finish()), { primary: true });
  ctl.section = show('result', { title, dataset: { outcome, event, statusCode: String(statusCode ?? ''), errorCode: String(errorCode ?? '') } },
    h('div', { class: `outcome ${outcome}`, role: 'status' }, h('span', { class: 'icon', 'aria-hidden': 'true' }, outcome === 'success' ? '✓' : outcome === 'cancelled' ? '–' : '✗'),
      ...[message].flat().filter(Boolean).map((m) => h('p', { class: 'message' }, m))),
    ...details,
    reference ? h('p', { class: 'reference' }, W.result.reference(reference)) : null,
    ctl.fromLink() && !ctl.isLoggedIn() ? h('p', {}, W.result.closeNow) : null,
    actions(done));
}

/// Seed 003's result screen (L960–L1445): name, portrait, the document status with its hint, the
/// error and warning lists, the identity data, the page images, the checks with their category,
/// the NFC rows.
export function docScanDetails(p) {
  const D = W.result.docScan;
  const identity = p.identity_data || {};
  const name = identity['Surname and given names'] || `${identity['Given name'] || ''} ${identity.Surname || ''}`.trim();
  const rows = Object.entries(identity).map(([k, v]) => h('div', { class: 'row' }, h('dt', {}, k), h('dd', {}, String(v))));
  const st = p.document_status || {};
  const images = p.document_info?.document_images || {};
  const overall = st.overall_document_status || '';
  const hint = overall === 'ERROR' ? D.errorHint : overall === 'WARNING' ? D.warningHint : null;
  const nfc = [
    typeof st.is_nfc_document === 'boolean' ? [D.isNFCDocument, st.is_nfc_document ? D.yes : D.no, 'is-nfc-document'] : null,
    typeof st.nfc_scan_status === 'string' ? [D.nfcScanStatus, st.nfc_scan_status, 'nfc-scan-status'] : null,
    typeof st.nfc_scan_status_reason === 'string' ? [D.reason, st.nfc_scan_status_reason, 'nfc-reason'] : null,
  ].filter(Boolean);
  return [
    h('div', { class: 'identity' }, image(images.portrait_image, W.documentConfirm.portraitAlt, 'portrait'),
      h('div', {}, name ? h('p', { class: 'name', dataset: { field: 'name' } }, name) : null)),
    h('p', { class: 'overall', dataset: { overallStatus: overall } }, `${D.status}: `, h('strong', {}, overall)),
    hint ? h('p', { class: 'status-hint' }, hint) : null,
    (st.error_list || []).length ? h('section', { class: 'errors' }, h('h2', {}, D.errorsTitle), notice('error', st.error_list.map(String))) : null,
    (st.warning_list || []).length ? h('section', { class: 'warnings' }, h('h2', {}, D.warningsTitle), notice('warning', st.warning_list.map(String))) : null,
    rows.length ? h('section', { class: 'identity-data' }, h('h2', {}, D.identityTitle), h('dl', { class: 'rows' }, rows)) : null,
    images.front_page ? h('div', { class: 'pages' }, image(images.front_page, W.documentConfirm.frontAlt, 'page'), images.back_page ? image(images.back_page, W.documentConfirm.backAlt, 'page') : null) : null,
    (st.checks_performed || []).length ? h('section', { class: 'checks' }, h('h2', {}, W.documentConfirm.checksTitle), h('ul', {}, st.checks_performed.map((c) => h('li', { dataset: { check: c.check_name, result: c.check_status } },
      h('span', { class: 'check-name' }, W.checkName[c.check_name] || String(c.check_name).replaceAll('_', ' '),
        c.check_category ? h('span', { class: 'check-category' }, D.category(c.check_category)) : null),
      h('span', { class: 'check-result' }, c.check_status))))) : null,
    nfc.length ? h('section', { class: 'nfc' }, h('h2', {}, D.nfcTitle), h('dl', { class: 'rows' }, nfc.map(([k, v, id]) => h('div', { class: 'row', dataset: { nfc: id } }, h('dt', {}, k), h('dd', {}, v))))) : null,
  ];
}

export function unsupported(ctl, name) {
  ctl.section = show('result', { title: W.result.unsupported(name), dataset: { outcome: 'failure' } },
    actions(button(W.cancel, 'cancel', () => ctl.reset(), { primary: true })));
}

export { isSuccess, Code, Flow };
