// flash.js — presence by illumination (docs/WORKFLOWS.md "uploadIDVSelfieFrames"): the server's
// colour sequence (payload.presence.illumination, IDVCore PresencePayloads.swift) is flashed full
// screen while the front camera records; each frame's capture time is reported from the moment the
// first colour was shown (frame_times_ms), so the server can check that the light the face reflected
// followed the sequence in order and in time. The colours are painted on a canvas (no inline style).

import { Presence } from './protocol.js';
import { recordSequence } from './camera.js';
import { h } from './ui.js';

/// The challenge's illumination steps ([{rgb: [r, g, b], ms}]) when it asks for them and they are
/// well-formed (three integers 0–255, 100–5000 ms each), else null.
export function illuminationOf(ch) {
  const steps = ch?.payload?.[Presence.key]?.[Presence.illumination];
  if (!Array.isArray(steps) || steps.length < 2 || steps.length > 64) return null;
  const ok = steps.every((s) => Array.isArray(s?.rgb) && s.rgb.length === 3 && s.rgb.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)
    && Number.isInteger(s.ms) && s.ms >= 100 && s.ms <= 5000);
  return ok ? steps : null;
}

/// The fallback the server gave after a decline ('active', 'passive'), or null.
export function fallbackOf(ch) {
  return ch?.payload?.[Presence.key]?.[Presence.fallback] ?? null;
}

/// The answer that declines the sequence: the person chose the head movements instead.
export function declineAnswer(why = Presence.declined) {
  return { [Presence.key]: { [Presence.illumination]: why } };
}

/// The step index shown `t` ms after the start (null before 0 or after the end).
function stepAt(steps, t) {
  if (t < 0) return null;
  let end = 0;
  for (let i = 0; i < steps.length; i++) {
    end += steps[i].ms;
    if (t < end) return i;
  }
  return null;
}

/// Flashes `steps` full screen (an overlay with a small live preview of `stream`) while recording
/// `video` at `fps`; resolves to {frames, fps, frame_times_ms} once the sequence and one more frame
/// interval are recorded. The overlay carries data-presence-step / data-rgb of the colour shown,
/// and data-presence="flashing" | "done" (monitoring and the browser tests read them).
export async function flashAndRecord(video, stream, steps, { fps = 10, maxFrames = 150 } = {}) {
  const total = steps.reduce((a, s) => a + s.ms, 0);
  const count = Math.min(maxFrames, Math.ceil((total + 1000 / fps) * fps / 1000));
  const canvas = h('canvas', { class: 'flash-light', width: '8', height: '8', 'aria-hidden': 'true' });
  const mini = h('video', { class: 'flash-preview', autoplay: true, muted: true, playsinline: true, 'aria-hidden': 'true' });
  mini.srcObject = stream;
  const overlay = h('div', { class: 'flash-overlay', role: 'status', 'aria-live': 'polite', dataset: { presence: 'flashing', presenceStep: '-1' } },
    canvas, mini);
  document.body.append(overlay);
  const ctx = canvas.getContext('2d');
  const paint = (i) => {
    const [r, g, b] = i === null ? [0, 0, 0] : steps[i].rgb;
    ctx.fillStyle = `rgb(${r}, ${g}, ${b})`;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    overlay.dataset.presenceStep = String(i === null ? -1 : i);
    overlay.dataset.rgb = `${r},${g},${b}`;
  };
  try { if (document.fullscreenEnabled && !document.fullscreenElement) await overlay.requestFullscreen(); } catch { /* shown over the page instead */ }
  try { mini.play(); } catch { /* muted inline video: allowed */ }
  let t0 = null, running = true;
  paint(0);
  // Time 0: the animation frame that first presents the first colour.
  t0 = await new Promise((resolve) => requestAnimationFrame((t) => resolve(t)));
  const loop = (t) => {
    if (!running) return;
    const i = stepAt(steps, t - t0);
    if (i !== null && String(i) !== overlay.dataset.presenceStep) paint(i);
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  try {
    const result = await recordSequence(video, { fps, count });
    return { frames: result.frames, fps: result.fps, frame_times_ms: result.times.map((t) => Math.round((t - t0) * 10) / 10) };
  } finally {
    running = false;
    overlay.dataset.presence = 'done';
    try { if (document.fullscreenElement) await document.exitFullscreen(); } catch { /* already left */ }
    mini.srcObject = null;
    overlay.remove();
  }
}
