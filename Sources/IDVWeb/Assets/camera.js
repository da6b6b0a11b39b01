// camera.js — the phone's camera: open it (back camera for documents, front for selfies), judge a
// preview frame (brightness, glare, sharpness) before the shot, take a still, and record a selfie
// frame sequence at a known rate.

/// Why the camera could not be used; `kind` keys W.camera (denied, notFound, inUse, insecure, unsupported, failed).
export class CameraError extends Error {
  constructor(kind) { super(kind); this.kind = kind; }
}

/// Opens a camera facing 'environment' (back) or 'user' (front), preferring — never requiring — that
/// side and a high resolution. Rejects with CameraError.
export async function openCamera(facing) {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw new CameraError(window.isSecureContext === false ? 'insecure' : 'unsupported');
  }
  const video = facing === 'environment'
    ? { facingMode: { ideal: 'environment' }, width: { ideal: 1920 }, height: { ideal: 1080 } }
    : { facingMode: { ideal: 'user' }, width: { ideal: 1280 }, height: { ideal: 720 } };
  try {
    return await navigator.mediaDevices.getUserMedia({ video, audio: false });
  } catch (e) {
    switch (e && e.name) {
      case 'NotAllowedError': case 'PermissionDeniedError': case 'SecurityError': throw new CameraError('denied');
      case 'NotFoundError': case 'DevicesNotFoundError': case 'OverconstrainedError': throw new CameraError('notFound');
      case 'NotReadableError': case 'TrackStartError': case 'AbortError': throw new CameraError('inUse');
      default: throw new CameraError('failed');
    }
  }
}

export function stopCamera(stream) {
  if (stream) for (const t of stream.getTracks()) t.stop();
}

/// Plays `stream` in `video`; resolves once frames have arrived.
export async function attach(video, stream) {
  video.srcObject = stream;
  if (video.readyState < 2) {
    await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new CameraError('failed')), 10000);
      video.addEventListener('loadeddata', () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }
  try { await video.play(); } catch { /* autoplay of a muted inline video is allowed; a refusal still shows frames */ }
}

// Thresholds of the pre-shot hint, on a 320-pixel-wide grey copy of the guide region:
// mean luma below DARK is too dark; more than GLARE of the pixels at 250+ is glare (a white page
// itself stays well under it); a variance of the 4-neighbour Laplacian below BLURRY is blurry
// (a sharp page is in the thousands; a Gaussian blur of sigma 3 falls to about 130).
const DARK = 60, GLARE = 0.06, BLURRY = 150;
const probe = document.createElement('canvas');

/// Judges the current frame of `video` inside a centred region (`region`: fractions of width and
/// height). Returns {brightness, glare, sharpness, verdict: 'good'|'dark'|'glare'|'blurry'|'waiting'}.
export function frameQuality(video, region = { w: 0.85, h: 0.8 }) {
  const vw = video.videoWidth, vh = video.videoHeight;
  if (!vw || !vh) return { verdict: 'waiting' };
  const sw = Math.round(vw * region.w), sh = Math.round(vh * region.h);
  const w = 320, hgt = Math.max(8, Math.round((320 * sh) / sw));
  probe.width = w; probe.height = hgt;
  const ctx = probe.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(video, (vw - sw) / 2, (vh - sh) / 2, sw, sh, 0, 0, w, hgt);
  const px = ctx.getImageData(0, 0, w, hgt).data;
  const y = new Float32Array(w * hgt);
  let sum = 0, bright = 0;
  for (let i = 0, j = 0; j < y.length; i += 4, j++) {
    const v = 0.299 * px[i] + 0.587 * px[i + 1] + 0.114 * px[i + 2];
    y[j] = v; sum += v; if (v >= 250) bright++;
  }
  let ls = 0, ls2 = 0, n = 0;
  for (let r = 1; r < hgt - 1; r++) {
    for (let c = 1; c < w - 1; c++) {
      const k = r * w + c;
      const lap = y[k - 1] + y[k + 1] + y[k - w] + y[k + w] - 4 * y[k];
      ls += lap; ls2 += lap * lap; n++;
    }
  }
  const brightness = sum / y.length, glare = bright / y.length;
  const sharpness = n ? ls2 / n - (ls / n) ** 2 : 0;
  const verdict = brightness < DARK ? 'dark' : glare > GLARE ? 'glare' : sharpness < BLURRY ? 'blurry' : 'good';
  return { brightness, glare, sharpness, verdict };
}

function toBlob(canvas, quality) {
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new CameraError('failed'))), 'image/jpeg', quality));
}

/// Standard base64 of a blob's bytes (no data: prefix), as the upload challenges take it.
export function base64Of(blob) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).slice(String(r.result).indexOf(',') + 1));
    r.onerror = () => reject(new CameraError('failed'));
    r.readAsDataURL(blob);
  });
}

/// A still of the current frame as JPEG: {blob, width, height}, at most `maxSide` pixels on its long side.
export async function takeStill(video, { maxSide = 2400, quality = 0.92 } = {}) {
  const vw = video.videoWidth, vh = video.videoHeight;
  const s = Math.min(1, maxSide / Math.max(vw, vh));
  const c = document.createElement('canvas');
  c.width = Math.round(vw * s); c.height = Math.round(vh * s);
  c.getContext('2d').drawImage(video, 0, 0, c.width, c.height);
  return { blob: await toBlob(c, quality), width: c.width, height: c.height };
}

/// Records `count` frames of `video` at `fps` (one frame per 1/fps s of camera time, read with
/// requestVideoFrameCallback where the browser has it, else a timer), each a JPEG of at most
/// `maxSide` pixels. `onFrame(i)` is called as frame i is taken. Resolves to
/// {frames: [base64], fps: measured rate, times: each frame's capture time (ms, the
/// performance.now() clock)}. Rejects with CameraError('failed') when the camera stalls.
export function recordSequence(video, { fps = 10, count = 30, maxSide = 640, quality = 0.85, onFrame = () => {} } = {}) {
  const interval = 1000 / fps;
  const tolerance = interval / 6;
  const vw = video.videoWidth, vh = video.videoHeight;
  const s = Math.min(1, maxSide / Math.max(vw, vh));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(vw * s); canvas.height = Math.round(vh * s);
  const ctx = canvas.getContext('2d');
  const blobs = [], times = [];
  return new Promise((resolve, reject) => {
    let due = null, done = false, timer = null;
    const watchdog = setTimeout(() => finish(new CameraError('failed')), 5000 + count * interval * 3);
    function finish(err) {
      if (done) return;
      done = true;
      clearTimeout(watchdog);
      if (timer) clearInterval(timer);
      if (err) { reject(err); return; }
      Promise.all(blobs).then((bs) => Promise.all(bs.map(base64Of))).then((frames) => {
        const span = (times[times.length - 1] - times[0]) / 1000;
        const measured = span > 0 ? (times.length - 1) / span : fps;
        resolve({ frames, fps: Math.round(measured * 100) / 100, times });
      }, reject);
    }
    function take(t) {
      if (done) return;
      if (due === null) due = t;
      if (t + tolerance < due) return;          // not yet time for the next frame
      if (t - due > interval / 2) due = t;      // the camera stalled: keep the spacing, not the slot
      ctx.drawImage(video, 0, 0, canvas.width, canvas.height);
      blobs.push(toBlob(canvas, quality));       // the canvas is copied when toBlob is called
      times.push(t);
      onFrame(times.length - 1);
      due += interval;
      if (times.length >= count) finish();
    }
    if ('requestVideoFrameCallback' in HTMLVideoElement.prototype) {
      let useCaptureTime = null;   // decided at the first frame, so all times share one clock
      const step = (now, meta) => {
        if (useCaptureTime === null) useCaptureTime = !!(meta && typeof meta.captureTime === 'number' && meta.captureTime > 0);
        take(useCaptureTime ? meta.captureTime : now);
        if (!done) video.requestVideoFrameCallback(step);
      };
      video.requestVideoFrameCallback(step);
    } else {
      timer = setInterval(() => take(performance.now()), interval / 3);
    }
  });
}
