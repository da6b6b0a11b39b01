#!/usr/bin/env python3
"""The hosted verification page (/verify/) end to end in headless Chromium with a fake camera.

Run by Tests/IDVWebTests/BrowserFlowTests.swift (so by `make test`); by hand:

    python3 Tests/IDVWebTests/browser/verify_flows.py --idvd .build/debug/idvd \
        --fixtures Tests/Fixtures --out .build/web-artifacts [--scenario NAME …]

Each scenario starts a real `idvd serve` on loopback (its own SQLite file), a Debian `chromium`
driven through `chromedriver` (Selenium, offline: SE_OFFLINE=true, so Selenium Manager never
fetches anything), whose camera is Chromium's fake device fed from a Y4M file
(--use-fake-device-for-media-stream --use-file-for-fake-video-capture). The files are made at
test time with ffmpeg: a document video from an `idvd specimen` page (portrait: the committed
talking-face fixture's still), a selfie video from the committed talking-face frames
(Tests/Fixtures/selfie/katie_live, 10 fps), a held-photo attack from `idvd liveness make-attack`,
and a dark scene. The camera file is a symlink the driver repoints between the document and the
selfie step (Chromium opens the file whenever the page opens the camera).

Every scenario asserts what the page shows AND the server's outcome (`idvd admin list-users`,
`idvd admin audit`), that the page made no request outside the idvd origin (Chrome's performance
log: every Network.requestWillBeSent of the page), and that the console has no error and no
Content-Security-Policy violation. A screenshot of every screen is written to OUT/<scenario>/.

Prints one JSON line per scenario ({"scenario", "passed", "failures", "seconds", "screens"}) and
exits 1 when any scenario failed, 2 when the environment is unusable (no chromium, no selenium).
"""
import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

os.environ['SE_OFFLINE'] = 'true'          # Selenium Manager must never download a driver or a browser
try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError as e:  # pragma: no cover - reported to the XCTest
    print(json.dumps({'environment': f'selenium is not importable: {e}'}))
    sys.exit(2)

CHROMIUM = os.environ.get('IDV_CHROMIUM', '/usr/bin/chromium')
CHROMEDRIVER = os.environ.get('IDV_CHROMEDRIVER', '/usr/bin/chromedriver')
PASSWORD = 'Katie flows 2026'
PHONE = {'width': 360, 'height': 780, 'deviceScaleFactor': 2, 'mobile': True}
DESKTOP = {'width': 1280, 'height': 860, 'deviceScaleFactor': 1, 'mobile': False}
SPECIMEN_DOCUMENT_NUMBER = 'GC3664952'   # `idvd specimen --format td3 --seed 10`


class Failure(AssertionError):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


# MARK: media (made at test time; never committed)

class Media:
    """The fake-camera videos, 640×480 YUV 4:2:0 Y4M at 30 fps (a common webcam mode). The selfie
    frames (10 fps) are each shown for three camera frames, as a 30 fps camera films a face."""

    def __init__(self, idvd, fixtures, folder):
        self.idvd, self.fixtures, self.dir = idvd, fixtures, folder
        os.makedirs(folder, exist_ok=True)
        self.doc = self.path('document.y4m')
        self.selfie = self.path('selfie.y4m')
        self.attack = self.path('attack.y4m')
        self.dark = self.path('dark.y4m')
        self.away = self.path('away.y4m')

    def path(self, name):
        return os.path.join(self.dir, name)

    def ffmpeg(self, *args):
        subprocess.run(['ffmpeg', '-loglevel', 'error', '-y', *args], check=True)

    def build(self):
        portrait = os.path.join(self.fixtures, 'selfie', 'katie_portrait.jpg')
        spec_dir = self.path('specimen')
        png = os.path.join(spec_dir, 'specimen-10.png')
        if not os.path.exists(png):
            subprocess.run([self.idvd, 'specimen', '--format', 'td3', '--seed', '10', '--portrait', portrait, '--out', spec_dir],
                           check=True, stdout=subprocess.DEVNULL)
        scene = 'scale=544:-2,pad=640:480:(ow-iw)/2:(oh-ih)/2:color=0x4a4a4a'
        if not os.path.exists(self.doc):
            self.ffmpeg('-loop', '1', '-i', png, '-vf', f'{scene},format=yuv420p', '-frames:v', '6', '-r', '30', self.doc)
        if not os.path.exists(self.dark):
            self.ffmpeg('-loop', '1', '-i', png, '-vf', f'{scene},eq=brightness=-0.5:contrast=0.5,format=yuv420p', '-frames:v', '6', '-r', '30', self.dark)
        face = 'scale=-2:480,pad=640:480:(ow-iw)/2:0:color=0x606060,fps=30,format=yuv420p'
        if not os.path.exists(self.selfie):
            frames = os.path.join(self.fixtures, 'selfie', 'katie_live', 'frame_%03d.jpg')
            self.ffmpeg('-framerate', '10', '-i', frames, '-vf', face, '-r', '30', self.selfie)
        if not os.path.exists(self.attack):
            held = self.path('held_photo')
            subprocess.run([self.idvd, 'liveness', 'make-attack', '--from', portrait, '--out', held, '--frames', '30', '--seed', '7'],
                           check=True, stdout=subprocess.DEVNULL)
            self.ffmpeg('-framerate', '10', '-i', os.path.join(held, 'frame_%03d.jpg'), '-vf', face, '-r', '30', self.attack)
        if not os.path.exists(self.away):
            # The face for 1 s, then 1.2 s of an empty grey scene, looped: any 3 s capture loses the face
            # for longer than the 0.5 s the analyser allows (FACE_LOST), which the server is unsure about.
            seq = self.path('away_frames')
            os.makedirs(seq, exist_ok=True)
            grey = os.path.join(seq, 'grey.jpg')
            self.ffmpeg('-f', 'lavfi', '-i', 'color=c=gray:s=384x384', '-frames:v', '1', grey)
            for i in range(22):
                src = os.path.join(self.fixtures, 'selfie', 'katie_live', f'frame_{i + 1:03d}.jpg') if i < 10 else grey
                shutil.copyfile(src, os.path.join(seq, f'frame_{i + 1:03d}.jpg'))
            self.ffmpeg('-framerate', '10', '-i', os.path.join(seq, 'frame_%03d.jpg'), '-vf', face, '-r', '30', self.away)


# MARK: server

class Server:
    # The fake camera cannot reflect the screen's light, and every scenario films the same clip: the
    # scenarios about other things run without the presence check and the replay check; the presence
    # scenario turns both on. A recording cannot follow the active challenge of the PAD step-up either
    # (idv.pad.challenge_below): off here, as in the Swift tests' settings.
    SETTINGS = {'argon2.opslimit': '1', 'argon2.memlimit_kib': '8', 'http.threads': '4', 'shutdown.grace_seconds': '2',
                'documents.warm_up': 'true', 'session.sweep_seconds': '0', 'idv.presence': 'off', 'idv.capture_replay_seconds': '0',
                'idv.pad.challenge_below': '-20',
                'idv.doc.accept_specimen_documents': 'true'}   # the scenarios' pages are ICAO specimens (UTO)

    def __init__(self, idvd, folder, settings=None):
        self.idvd, self.dir = idvd, folder
        self.settings = dict(self.SETTINGS, **(settings or {}))
        self.db = os.path.join(folder, 'idvd.sqlite')
        # The default key directory (IDVD_KEY_DIR) inside the scenario's folder, removed with it:
        # no key file is left in ~/.local/state/openidv/keys.
        self.env = dict(os.environ, IDVD_KEY_DIR=os.path.join(folder, 'keys'))
        self.proc = None
        self.port = 0

    def args(self):
        out = []
        for k, v in sorted(self.settings.items()):
            out += ['--set', f'{k}={v}']
        return out

    def start(self):
        self.log = open(os.path.join(self.dir, 'server.log'), 'wb')
        self.proc = subprocess.Popen([self.idvd, 'serve', '--db', self.db, '--port', '0', *self.args()],
                                     stdout=subprocess.PIPE, stderr=self.log, env=self.env)
        line = self.proc.stdout.readline()
        check(line, 'idvd serve did not print its ready line (see server.log)')
        ready = json.loads(line)
        self.port = ready['port']
        self.origin = f'http://127.0.0.1:{self.port}'
        return self

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None
            self.log.close()

    def admin(self, *args):
        r = subprocess.run([self.idvd, 'admin', *args, '--db', self.db, *self.args()], capture_output=True, env=self.env)
        check(r.returncode == 0 or args[0] == 'audit', f'idvd admin {args[0]} failed: {r.stderr.decode()}')
        return json.loads(r.stdout)

    def user(self, user_id):
        return next((u for u in self.admin('list-users') if u['user_id'] == user_id), None)

    def audit(self):
        a = self.admin('audit', '--limit', '100000')
        check(a['chain_valid'], 'the audit chain does not verify')
        return a['entries']

    def actions(self):
        return [e['action'] for e in self.audit()]

    def create_user(self, user_id, idv=True):
        return self.admin('create-user', user_id, *([] if idv else ['--no-idv']))['activation_code']


# MARK: browser

class Browser:
    def __init__(self, scenario, server, out_dir, media, fake_ui=True, fake_device=True):
        self.scenario, self.server, self.media = scenario, server, media
        self.shots_dir = os.path.join(out_dir, scenario)
        os.makedirs(self.shots_dir, exist_ok=True)
        self.screens_seen = []
        self.camera = os.path.join(server.dir, 'camera.y4m')
        self.use_camera(media.doc)
        o = webdriver.ChromeOptions()
        o.binary_location = CHROMIUM
        flags = ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run',
                 '--no-default-browser-check', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--disable-default-apps', '--disable-extensions', '--metrics-recording-only',
                 '--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication',
                 '--window-size=1280,900', '--lang=en-US']
        if fake_device:
            flags += ['--use-fake-device-for-media-stream', f'--use-file-for-fake-video-capture={self.camera}']
        if fake_ui:
            flags.append('--use-fake-ui-for-media-stream')
        for f in flags:
            o.add_argument(f)
        o.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
        self.d = webdriver.Chrome(service=Service(CHROMEDRIVER, log_output=os.path.join(server.dir, 'chromedriver.log')), options=o)
        self.d.set_script_timeout(30)
        self.cdp('Network.enable', {})
        self.phone()
        self.requests = []
        self.console = []

    def cdp(self, cmd, params):
        return self.d.execute_cdp_cmd(cmd, params)

    def phone(self):
        self.cdp('Emulation.setDeviceMetricsOverride', PHONE)
        self.cdp('Emulation.setTouchEmulationEnabled', {'enabled': True})

    def desktop(self):
        self.cdp('Emulation.setDeviceMetricsOverride', DESKTOP)
        self.cdp('Emulation.setTouchEmulationEnabled', {'enabled': False})

    def use_camera(self, y4m):
        """Points the fake camera at `y4m` (atomically); takes effect the next time the page opens the camera."""
        tmp = self.camera + '.new'
        if os.path.lexists(tmp):
            os.remove(tmp)
        os.symlink(y4m, tmp)
        os.replace(tmp, self.camera)

    def open(self, path):
        self.d.get(self.server.origin + path)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def current(self):
        return self.js("const s = document.querySelector('#app > [data-screen]'); return s ? [s.dataset.screen, s.getAttribute('aria-busy')] : [null, null]")

    def wait(self, predicate, timeout, what):
        end = time.time() + timeout
        last = None
        while time.time() < end:
            try:
                last = predicate()
                if last:
                    return last
            except WebDriverException:
                pass
            time.sleep(0.1)
        self.shot('timeout')
        raise Failure(f'timed out after {timeout} s waiting for {what} (screen: {self.current()})')

    def screen(self, name, timeout=60, shot=True, desktop=False):
        """Waits until screen `name` is shown and idle; screenshots it (phone, or desktop too)."""
        self.wait(lambda: self.current() == [name, None] or self.current() == [name, 'false'], timeout, f'screen {name}')
        self.screens_seen.append(name)
        self.check_accessible(name)
        if shot:
            self.shot(name)
            if desktop:
                self.desktop()
                time.sleep(0.3)
                self.shot(name + '-desktop')
                self.phone()
        return self.section()

    A11Y = r'''
        const s = document.querySelector('#app > [data-screen]');
        const problems = [];
        const visible = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
        if (s.querySelectorAll('h1').length !== 1) problems.push('not exactly one h1');
        const h = document.getElementById(s.getAttribute('aria-labelledby') || '');
        if (!h || h.tagName !== 'H1') problems.push('section not labelled by its h1');
        for (const b of s.querySelectorAll('button')) if (visible(b) && !(b.textContent.trim() || b.getAttribute('aria-label'))) problems.push('button without a name');
        for (const i of s.querySelectorAll('input')) if (!i.labels || i.labels.length === 0) problems.push('input without a label: ' + i.name);
        for (const i of s.querySelectorAll('img')) if (!i.hasAttribute('alt')) problems.push('img without alt');
        for (const v of s.querySelectorAll('video')) if (!v.getAttribute('aria-label')) problems.push('video without a label');
        if (!document.getElementById('status-region') || !document.getElementById('alert-region')) problems.push('no live regions');
        const shown = s.innerText;
        for (const junk of [/\bnull\b/, /\bundefined\b/, /\[object /, /\bNaN\b/]) if (junk.test(shown)) problems.push('stray text ' + junk);
        return problems;'''

    def check_accessible(self, name):
        """Every screen: one h1 labelling it, named buttons, labelled inputs, alt texts, live regions."""
        problems = self.js(self.A11Y)
        check(not problems, f'screen {name}: {problems}')

    def section(self):
        return self.d.find_element(By.CSS_SELECTOR, '#app > [data-screen]')

    def attr(self, name):
        return self.section().get_attribute(name)

    shot_counts = {}

    def shot(self, name):
        n = Browser.shot_counts[self.scenario] = Browser.shot_counts.get(self.scenario, 0) + 1
        time.sleep(0.15)
        png = self.cdp('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True})['data']
        with open(os.path.join(self.shots_dir, f'{n:02d}-{name}.png'), 'wb') as f:
            f.write(base64.b64decode(png))

    def click(self, action, extra=''):
        sel = f'#app > [data-screen] [data-action="{action}"]{extra}'
        el = self.wait(lambda: next((e for e in self.d.find_elements(By.CSS_SELECTOR, sel) if e.is_displayed() and e.is_enabled()), None),
                       20, f'an enabled button {sel}')
        el.click()

    def fill(self, selector, text):
        el = self.d.find_element(By.CSS_SELECTOR, f'#app > [data-screen] {selector}')
        el.clear()
        el.send_keys(text)

    def text(self):
        return self.section().text

    def collect_logs(self):
        for entry in self.d.get_log('performance'):
            msg = json.loads(entry['message'])['message']
            if msg.get('method') == 'Network.requestWillBeSent':
                self.requests.append(msg['params']['request']['url'])
        self.console += self.d.get_log('browser')

    def assert_clean(self):
        """No request left the idvd origin; no console error; no CSP violation."""
        self.collect_logs()
        outside = [u for u in self.requests if not (u.startswith(self.server.origin + '/') or u.startswith('data:') or u.startswith('blob:'))]
        check(self.requests, 'no page request was recorded (performance log empty)')
        check(not outside, f'the page made requests outside {self.server.origin}: {outside}')
        problems = [c['message'] for c in self.console
                    if c['level'] == 'SEVERE' and '/v1/' not in c['message'] and 'favicon' not in c['message']]
        csp = [c['message'] for c in self.console if any(k in c['message'] for k in ('Content Security Policy', 'Content-Security-Policy', 'TrustedHTML', 'TrustedScript'))]
        check(not csp, f'CSP violations: {csp}')
        check(not problems, f'console errors: {problems}')

    def quit(self):
        try:
            self.d.quit()
        except Exception:
            pass


# MARK: steps shared by scenarios

def document_step(b, media, expect_confirm=True):
    """document-start → document-capture (hint good, capture, review) → upload → document-confirm."""
    b.screen('document-start')
    b.use_camera(media.doc)
    b.click('confirm')
    capture_document(b)
    if expect_confirm:
        b.screen('document-confirm', timeout=120, desktop=True)
        number = b.js("return document.querySelector('[data-field=document_number] dd')?.textContent")
        check(number == SPECIMEN_DOCUMENT_NUMBER, f'document number shown: {number!r}')
        status = b.attr('data-status')
        check(status in ('VALID', 'WARNING'), f'overall status {status}')
        check(b.js("return document.querySelectorAll('.checks li').length") > 0, 'no checks listed')
        check(b.js("return !!document.querySelector('img.portrait')"), 'no portrait shown')


def capture_document(b):
    b.screen('document-capture', shot=False)
    b.wait(lambda: b.js("return document.querySelector('.hint')?.dataset.hint") == 'good', 20, 'the sharpness/glare hint to say good')
    b.shot('document-capture')
    b.click('capture')
    b.wait(lambda: b.js("return !document.querySelector('.review').hidden"), 10, 'the review of the shot')
    b.check_accessible('document-capture (review)')
    b.shot('document-capture-review')
    b.click('confirm')


def selfie_step(b, media, video=None, shot_confirm=True):
    """selfie-start → selfie-capture (record) → upload; returns nothing (the caller waits for what follows)."""
    b.screen('selfie-start')
    b.use_camera(video or media.selfie)
    b.click('confirm')
    capture_selfie(b)


def capture_selfie(b):
    b.screen('selfie-capture', shot=False)
    b.wait(lambda: b.js("return document.querySelector('video.preview')?.videoWidth > 0"), 20, 'the selfie preview')
    b.shot('selfie-capture')
    b.click('capture')


def login(b, user):
    """Signs in with the keyboard only: the field has focus, Enter submits."""
    b.open('/verify/')
    b.screen('check-user')
    check(b.js("return document.activeElement?.name") == 'username', 'the user ID field has focus')
    b.d.switch_to.active_element.send_keys(user + Keys.ENTER)
    b.screen('verify-password')
    check(b.js("return document.activeElement?.type") == 'password', 'the password field has focus')
    b.d.switch_to.active_element.send_keys(PASSWORD + Keys.ENTER)
    b.screen('home')


def activate_without_idv(srv, user):
    """A user activated over the API (no IDV): code → password, as an SDK would."""
    code = srv.create_user(user, idv=False)

    def post(path, body, token=None):
        req = urllib.request.Request(srv.origin + path, data=json.dumps(body).encode(), method='POST',
                                     headers={'Content-Type': 'application/json', **({'Authorization': f'Bearer {token}'} if token else {})})
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())
    env = post('/v1/sessions', {})
    token = env['session']['token']
    for payload in ({'user_id': user}, {'activation_code': code}, {'password': PASSWORD}):
        ch = env['challenge']
        env = post('/v1/session/answer', {'challenge_id': ch['challenge_id'], 'challenge': ch['name'], 'challenge_mode': ch['challenge_mode'], 'payload': payload}, token)
    check(env.get('event', {}).get('name') == 'onUserLoggedIn', f'API activation of {user}: {env}')


def result(b, outcome=None, shot=True):
    b.screen('result', timeout=120, shot=shot)
    if outcome:
        check(b.attr('data-outcome') == outcome, f"result outcome {b.attr('data-outcome')} (expected {outcome}): {b.text()!r}")
    return b.section()


def done(b, then='home'):
    b.click('confirm')
    b.screen(then, shot=False)


ENTRY = {'idv.postlogin.kyc': 'kyc', 'idv.postlogin.document_scan': 'document-scan', 'idv.postlogin.server_biometric': 'server-biometric',
         'idv.postlogin.optin': 'optin', 'idv.postlogin.optout': 'optout'}


def entry(b, flow, shot=True):
    """Opens the entry screen of `flow` from the menu and waits until it is ready (the gated ones
    after their template status arrived); returns the section."""
    b.click('start-flow', f'[data-flow="{flow}"]')
    name = ENTRY[flow]
    b.screen(name, shot=False)
    b.wait(lambda: b.attr('data-template') != 'checking', 60, f'the template status on {name}')
    if shot:
        b.shot(name)
    return b.section()


def start_flow(b, flow, shot=False):
    """Menu → the flow's entry screen → its start button."""
    entry(b, flow, shot=shot)
    b.click('start')


def busy_title(b, action, expected):
    """Clicks `action` with a slow network (2 s latency) and returns True when the pressed button
    shows `expected` (the codelabs' "…ing…" title) while the request is under way."""
    b.cdp('Network.emulateNetworkConditions', {'offline': False, 'latency': 2000, 'downloadThroughput': -1, 'uploadThroughput': -1})
    try:
        b.click(action)
        seen = b.wait(lambda: b.js("return [...document.querySelectorAll('#app [data-action]')].map(e => e.textContent).includes(arguments[0])", expected),
                      5, f'the busy title {expected!r}')
        b.shot(f'busy-{action}')
        return seen
    finally:
        b.cdp('Network.emulateNetworkConditions', {'offline': False, 'latency': 0, 'downloadThroughput': -1, 'uploadThroughput': -1})


# MARK: scenarios

def scenario_activation_link(ctx):
    """Seed 002 through a relying party's link: code → document → selfie → consent → password → logged in."""
    srv, media = ctx.server(), ctx.media
    code = srv.create_user('katie')
    link = srv.admin('create-link', 'katie')
    check(link['flow'] == 'idv.activation' and link['path'].startswith('/verify/#link='), f'create-link: {link}')
    b = ctx.browser(srv)
    b.open(link['path'])
    b.screen('activation-code')
    check('katie' in b.text(), 'the activation screen names the user from the link')
    b.fill('input[name=code]', code)
    b.click('confirm')
    check(b.js('return location.hash') == '', 'the link token stays in the address bar')
    document_step(b, media)
    b.click('confirm')
    selfie_step(b, media)
    b.screen('selfie-confirm', timeout=120, desktop=True)
    check(b.attr('data-verdict') == 'MATCHED', f"selfie verdict {b.attr('data-verdict')}")
    check(b.js("return document.querySelectorAll('.compare img').length") == 2, 'document photo and selfie side by side')
    b.click('confirm')
    b.screen('consent')
    b.click('approve')
    b.screen('set-password')
    b.fill('input[name=new-password]', PASSWORD)
    b.fill('input[name=new-password-repeat]', PASSWORD)
    b.click('confirm')
    result(b, 'success')
    u = srv.user('katie')
    check(u and u['state'] == 'active', f'server: katie is {u}')
    acts = srv.actions()
    for a in ('admin.create_link', 'link.redeemed', 'activation.code_accepted', 'idv.document_read', 'idv.selfie_verified',
              'idv.consent_recorded', 'idv.template_created', 'user.activated'):
        check(a in acts, f'server audit lacks {a}: {acts}')
    # The same link again (opened anew, as from a message): single use.
    b.d.get('about:blank')
    b.open(link['path'])
    result(b, 'failure')
    check(b.attr('data-screen-reason') == 'link-invalid', 'a used link shows the link-invalid result')
    check('already used' in b.text(), f'a used link says so: {b.text()!r}')
    check(any(e['action'] == 'link.refused' and e['details'].get('reason') == 'used' for e in srv.audit()), 'server audit: link.refused used')
    b.assert_clean()


def scenario_postlogin(ctx):
    """After a password login: KYC (seed 000), additional document scan (003), template status,
    server biometric authentication (001), opt-out and opt-in (004), each from its codelab entry
    screen to its server outcome and its codelab alert."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')
    b.shot('home')
    b.desktop(); time.sleep(0.3); b.shot('home-desktop'); b.phone()

    # KYC: the entry screen, document, selfie MATCHED, consent approved → 0/100, a template.
    start_flow(b, 'idv.postlogin.kyc', shot=True)
    document_step(b, media)
    b.click('confirm')
    selfie_step(b, media)
    b.screen('selfie-confirm', timeout=120)
    check(b.attr('data-verdict') == 'MATCHED', f"KYC selfie verdict {b.attr('data-verdict')}")
    name = b.js("return document.querySelector('[data-field=name]')?.textContent")
    check(name == 'JOHN GARCIA LOPEZ', f"the holder's name on the selfie result: {name!r}")
    b.click('confirm')
    b.screen('consent')
    bullets = b.js("return [...document.querySelectorAll('.consent-bullets li')].map(e => e.textContent)")
    check(bullets == ['Your biometric data will be encrypted and stored securely', 'This enables faster authentication for future sessions',
                      'You can manage your consent preferences at any time', 'Rejecting will not affect your current authentication'],
          f'the consent screen four bullets: {bullets}')
    b.click('approve')
    result(b, 'success')
    check(b.attr('data-event') == 'onIDVActivatedCustomerKYCResponse', 'KYC result event')
    text = b.text()
    check(text.startswith('Success') and 'KYC verification completed successfully! Your identity has been verified.' in text, f'KYC success alert: {text!r}')
    check(b.js("return document.querySelector('[data-action=confirm]').textContent") == 'Go to Dashboard', 'KYC alert button')
    check('Reference: txn_' in text, 'KYC result shows the transaction reference')
    done(b)

    # Additional document scan with two pages (front, then "Add the back page"), then its seed-003 result.
    start_flow(b, 'idv.postlogin.document_scan', shot=True)
    b.screen('document-start')
    b.use_camera(media.doc)
    b.click('confirm')
    b.screen('document-capture', shot=False)
    b.wait(lambda: b.js("return document.querySelector('.hint')?.dataset.hint") == 'good', 20, 'the hint to say good')
    b.click('capture')
    b.wait(lambda: b.js("return !document.querySelector('.review').hidden"), 10, 'the review of the front')
    b.click('add-page')
    b.wait(lambda: b.js("return document.querySelector('.page-label')?.dataset.page") == '1', 10, 'the back-page step')
    b.click('capture')
    b.wait(lambda: b.js("return document.querySelectorAll('.review img.shot').length") == 2, 10, 'the review of both pages')
    b.check_accessible('document-capture (two pages)')
    b.shot('document-capture-two-pages')
    b.click('confirm')
    result(b, 'success')
    check(b.attr('data-event') == 'onIDVAdditionalDocumentScan', 'document scan result event')
    text = b.text()
    check(SPECIMEN_DOCUMENT_NUMBER in text, 'the scan result lists the identity data')
    for words in ('Is NFC Document', 'NFC Scan Status', 'Reason', 'Category: MRZ'):
        check(words in text, f'the scan result shows seed 003 {words!r}: {text!r}')
    check(b.js("return document.querySelector('[data-nfc=is-nfc-document] dd')?.textContent") == 'No', 'Is NFC Document: No (no chip read)')
    check(b.js("return document.querySelector('[data-action=confirm]').textContent") == 'Done', 'the result screen button is Done')
    done(b, then='document-scan')     # Done leads back to the entry screen (seed 003 L1439)
    b.click('back')
    b.screen('home', shot=False)

    # Template status: the KYC consent stored one.
    b.click('start-flow', '[data-flow="idv.template_status"]')
    result(b, 'success')
    check(b.attr('data-status-code') == '100', f"template status {b.attr('data-status-code')}")
    check('Your biometric template is stored on the server.' in b.text(), 'the template card text')
    done(b)

    # Server biometric authentication: the entry screen finds the template and enables Start; the same face: MATCHED.
    entry(b, 'idv.postlogin.server_biometric')
    check(b.attr('data-template') == 'exists', 'the template card says it exists')
    check('✅ Biometric Template Status' in b.text(), f'the template card: {b.text()!r}')
    b.click('start')
    selfie_step(b, media)
    result(b, 'success')
    check(b.attr('data-verdict') == 'MATCHED', f"server biometric verdict {b.attr('data-verdict')}")
    text = b.text()
    check(text.startswith('✅ Authentication Success') and 'Biometric Result: MATCHED' in text and 'Use Case: RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC' in text,
          f'seed 001 success alert: {text!r}')
    check(b.js("return document.querySelector('[data-action=confirm]').textContent") == 'Back to Dashboard', 'seed 001 alert button')
    done(b)

    # Opt-out: Start Opt-Out enabled (a template exists), password (mode 7) → template erased → Success → back to the screen, now disabled.
    entry(b, 'idv.postlogin.optout')
    check(b.js("return document.querySelector('[data-action=start]').disabled") is False, 'Start Opt-Out is enabled with a template')
    b.click('start')
    b.screen('verify-password')
    check(b.attr('data-mode') == '7', 'opt-out re-authentication is getPassword mode 7')
    check(b.text().startswith('🔐 Biometric Opt-Out Authentication'), f'the opt-out password dialog: {b.text()!r}')
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    result(b, 'success')
    check(b.attr('data-event') == 'onIDVBiometricOptOutStatus' and b.attr('data-status-code') == '100', 'opt-out 100')
    check('Biometric template deleted successfully! You have opted out from biometric authentication.' in b.text(), 'opt-out success alert')
    b.click('confirm')
    b.screen('optout', shot=False)
    b.wait(lambda: b.attr('data-template') == 'none', 60, 'the opt-out screen to check the template again')
    check(b.js("return document.querySelector('[data-action=start]').disabled") is True, 'Start Opt-Out is disabled without a template')
    b.shot('optout-disabled')
    b.click('back')
    b.screen('home', shot=False)

    # Opt-in: password (mode 6) → selfie → captured frame approved → template stored.
    entry(b, 'idv.postlogin.optin')
    check(b.js("return document.querySelector('[data-action=start]').disabled") is False, 'Start Opt-In is enabled without a template')
    b.click('start')
    b.screen('verify-password')
    check(b.attr('data-mode') == '6', 'opt-in re-authentication is getPassword mode 6')
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    selfie_step(b, media)
    b.screen('selfie-confirm', timeout=120)
    check(b.attr('data-variant') == 'optin-frame', 'opt-in shows the captured frame for approval')
    b.click('approve')
    result(b, 'success')
    check(b.attr('data-event') == 'onIDVBiometricOptInStatus' and b.attr('data-status-code') == '100', 'opt-in 100')
    check('Biometric template stored successfully! You can now use biometric authentication.' in b.text(), 'opt-in success alert')
    b.click('confirm')
    b.screen('optin', shot=False)
    b.wait(lambda: b.attr('data-template') == 'exists', 60, 'the opt-in screen to check the template again')
    check(b.js("return document.querySelector('[data-action=start]').disabled") is True, 'Start Opt-In is disabled with a template')
    b.click('back')
    b.screen('home', shot=False)

    acts = srv.actions()
    for a in ('idv.template_created', 'idv.template_erased', 'idv.reauthenticated', 'idv.frame_confirmation'):
        check(a in acts, f'server audit lacks {a}')
    txns = [e['details'] for e in srv.audit() if e['action'] == 'idv.transaction']
    cases = {t.get('orchestration_use_case'): t for t in txns}
    for uc in ('RDNA_IDV_POSTLOGIN_KYC', 'RDNA_IDV_POSTLOGIN_DOC_SCAN_ONLY', 'RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC',
               'RDNA_IDV_POSTLOGIN_OPTIN', 'RDNA_IDV_POSTLOGIN_OPTOUT'):
        check(uc in cases, f'no idv.transaction for {uc}: {sorted(cases)}')
    b.click('logoff')
    b.screen('check-user')
    b.assert_clean()


def scenario_codelab_screens(ctx):
    """The codelabs' entry screens, their gating and busy titles, Recapture, visible errors and the
    close paths (issue #35): the KYC screen's texts; Biometric Authentication and Opt-Out disabled
    without a template; KYC's "Initiating..."; Recapture on the KYC details rescans (no 240); an
    unreadable page and a refused answer told on the screen they happened on; KYC's selfie Close
    goes back to the KYC screen and the next KYC starts without an old "failed" alert; the opt-in
    password dialog's Cancel ends the opt-in ("Opt-In Failed", User Cancelled)."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')

    # Gating with no template: Biometric Authentication and Opt-Out disabled, with the card and the note.
    entry(b, 'idv.postlogin.server_biometric')
    check(b.attr('data-template') == 'none', 'no template yet')
    text = b.text()
    for words in ('⚠️ Biometric Template Status', 'No biometric template found on the server. Please complete biometric opt-in first.',
                  'Status: No biometric template exists for the user (Code: 600)', 'Please complete biometric opt-in first'):
        check(words in text, f'server biometric entry shows {words!r}: {text!r}')
    check(b.js("return document.querySelector('[data-action=start]').textContent") == 'Start Authentication', 'the start button title')
    check(b.js("return document.querySelector('[data-action=start]').disabled") is True, 'Start Authentication is disabled without a template')
    b.click('back')
    b.screen('home', shot=False)
    entry(b, 'idv.postlogin.optout')
    check(b.js("return document.querySelector('[data-action=start]').disabled") is True, 'Start Opt-Out is disabled without a template')
    b.click('back')
    b.screen('home', shot=False)

    # The KYC entry screen: seed 000 L911–L925, its button and busy title.
    entry(b, 'idv.postlogin.kyc')
    text = b.text()
    for words in ('Activated Customer KYC', 'Complete your identity verification', 'What is KYC?',
                  'KYC (Know Your Customer) is a verification process to confirm your identity.',
                  '1. Document Scan', '2. Confirm Document Details', '3. Selfie Capture', '4. Biometric Consent',
                  '• Have a valid government-issued ID ready', '• Ensure good lighting for document scanning',
                  '• Position your face clearly for selfie capture', '• Allow camera permissions when prompted', 'Start KYC Verification'):
        check(words in text, f'the KYC screen shows {words!r}: {text!r}')
    check(busy_title(b, 'start', 'Initiating...'), 'Start KYC Verification shows "Initiating..." while it starts')

    # An unreadable page (the selfie video at the document step): the document start again, saying why.
    b.screen('document-start')
    b.use_camera(media.selfie)
    b.click('confirm')
    b.screen('document-capture', shot=False)
    b.wait(lambda: b.js("return document.querySelector('video.preview')?.videoWidth > 0"), 20, 'the preview')
    b.click('capture')
    b.wait(lambda: b.js("return !document.querySelector('.review').hidden"), 10, 'the review')
    b.click('confirm')
    b.screen('document-start', timeout=120)
    check(b.attr('data-retry') == 'true', 'the re-asked upload shows the document start again')
    check('We could not read the document' in b.text(), f'the unreadable page is told on the screen: {b.text()!r}')

    # A good page, then Recapture on the details: the document start again (not a 240 end).
    b.use_camera(media.doc)
    b.click('confirm')
    capture_document(b)
    b.screen('document-confirm', timeout=120)
    b.click('retake')
    b.screen('document-start', timeout=60)
    check(b.attr('data-retry') == 'false', 'Recapture asks the document start again')
    check('document_rescan' in ' '.join(srv.actions()), f'server audit: the rescan ({srv.actions()[-5:]})')
    document_step(b, media)

    # A refused answer (the server says 1020): the details screen stays and says so.
    b.js("""const real = window.fetch; window.fetch = (url, opts) => {
        if (String(url).endsWith('/v1/session/answer') && !window.__refusedOnce) {
          window.__refusedOnce = true;
          return Promise.resolve(new Response(JSON.stringify({ error: { long_error_code: 1020, short_error_code: 4,
            error_string: 'The action was not offered' } }), { status: 409, headers: { 'Content-Type': 'application/json' } }));
        }
        return real(url, opts); };""")
    b.click('confirm')
    b.wait(lambda: b.js("return !!document.querySelector('.banner-slot .notice.error')"), 20, 'the refusal notice')
    check(b.current()[0] == 'document-confirm', 'a refused answer keeps the screen')
    check('The action was not offered' in b.text(), f'the refusal is told on the screen: {b.text()!r}')
    b.shot('document-confirm-refused')
    b.click('confirm')
    selfie_step(b, media)
    b.screen('selfie-confirm', timeout=120)

    # KYC's selfie Close goes back to the KYC screen, no alert; the next KYC starts at once.
    b.click('cancel')
    b.screen('kyc')
    check(not b.js("return !!document.querySelector('.notice.error')"), 'no failed alert after the Close')
    b.click('start')
    b.screen('document-start', timeout=60)
    check(b.attr('data-retry') == 'false', 'the new KYC starts at its first step')
    b.click('cancel')
    result(b, 'cancelled')
    check(b.text().startswith('Error') and 'KYC verification failed: User Cancelled' in b.text(), f'KYC cancel alert: {b.text()!r}')
    done(b)

    # The opt-in password dialog's Cancel ends the opt-in (240) and says so.
    start_flow(b, 'idv.postlogin.optin')
    b.screen('verify-password')
    check(b.text().startswith('🔐 Biometric Opt-In Authentication') and 'Please verify your password to create biometric template' in b.text(),
          f'seed 004 password dialog: {b.text()!r}')
    b.fill('input[type=password]', 'not the password 1')
    b.click('confirm')
    b.screen('verify-password')
    check('2 attempt(s) remaining' in b.text(), f'the attempts badge: {b.text()!r}')
    check('password is not correct' in b.text().lower() or 'not right' in b.text(), f'the wrong password is told: {b.text()!r}')
    b.click('cancel')
    result(b, 'cancelled')
    check(b.text().startswith('Opt-In Failed'), f'the opt-in cancel alert: {b.text()!r}')
    check(b.attr('data-error-code') == '240', 'Cancel ends the opt-in with 240')
    done(b, then='optin')
    b.assert_clean()


RETAKE_WORDS = 'We could not check the selfie well enough'
CHALLENGE_RETAKE_WORDS = 'One more check: keep your face in the frame and follow the movements shown on the screen.'


def check_retake_words(b):
    """The selfie screen asked again with 1066 says what this retake is: the plain retake's guidance,
    or, when the upload request carries a liveness_challenge (its actions listed on the screen), one
    more check under those movements — never the plain retake's sentence again. Returns whether the
    retake was the challenge's."""
    challenged = bool(b.js("return document.querySelector('#app > [data-screen] [data-challenge-actions]') ? true : false"))
    text = b.text()
    check('does not use up an attempt' in text, f'the retake guidance is shown: {text!r}')
    if challenged:
        check(CHALLENGE_RETAKE_WORDS in text and RETAKE_WORDS not in text, f'the challenge has its own sentence: {text!r}')
    else:
        check(RETAKE_WORDS in text and CHALLENGE_RETAKE_WORDS not in text, f'the plain retake has its sentence: {text!r}')
    return challenged


def scenario_held_photo_attack(ctx):
    """A printed photo held up to the camera (idvd liveness make-attack) is refused: LIVENESS_FAILED
    (after at most the retake the PAD policy asks for and its challenge), shown as such; the link names the flow (server biometric) and the page starts it after login."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    # A template first (opt-in with the real face), then a link for server biometric authentication.
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.optin')
    b.screen('verify-password', shot=False)
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    selfie_step(b, media)
    b.screen('selfie-confirm', timeout=120, shot=False)
    b.click('approve')
    result(b, 'success', shot=False)
    b.click('confirm')
    b.screen('optin', shot=False)
    b.click('back')
    b.screen('home', shot=False)
    b.click('logoff')
    b.screen('check-user', shot=False)
    link = srv.admin('create-link', 'katie', '--flow', 'idv.postlogin.server_biometric', '--ttl', '600')
    b.open(link['path'])
    b.screen('verify-password')
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    # The link's flow opens on its codelab entry screen, which finds the template.
    b.screen('server-biometric')
    b.wait(lambda: b.attr('data-template') == 'exists', 60, 'the template status')
    b.click('start')
    selfie_step(b, media, video=media.attack)
    # The digital print may show spurious facial action without landmark motion, or a camera
    # photo's texture while it moves only as a plane: the server's PAD policy is then unsure and asks
    # once more (1066, no attempt used), and if the pair shows no sign of life, once more under an
    # active challenge (1066 with the actions listed); the attacker shows the same print each time
    # and the captures together are refused. (The fake camera loops the clip, so which frames a
    # capture gets varies from run to run: every path must end LIVENESS_FAILED.)
    retakes = challenged = 0
    while True:
        b.wait(lambda: b.current()[0] == 'result' or (b.current()[0] == 'selfie-start' and b.attr('data-retry') == 'true'),
               120, 'the verdict or the retake')
        if b.current()[0] != 'selfie-start':
            break
        retakes += 1
        check(retakes <= 2, 'at most a retake and a challenge before the verdict')
        challenged += check_retake_words(b)
        b.use_camera(media.attack)
        b.click('confirm')
        capture_selfie(b)
    result(b, 'failure')
    ctx.notes['retakes'] = retakes
    ctx.notes['challenged_retakes'] = challenged
    if retakes:
        decided = [e['details'] for e in srv.audit() if e['action'].endswith('selfie_verified')][-1]
        check(decided.get('pad_combined') is True and decided.get('pad_outcome') == 'attack', f'the captures decided an attack: {decided}')
    check(b.attr('data-verdict') == 'LIVENESS_FAILED', f"held photo verdict {b.attr('data-verdict')}: {b.text()!r}")
    check('live person' in b.text(), 'the result says no live person was seen')
    txn = [e['details'] for e in srv.audit() if e['action'] == 'idv.transaction'][-1]
    check(txn.get('status') == 'FAILURE' or txn.get('verdict') == 'LIVENESS_FAILED', f'server transaction: {txn}')
    b.assert_clean()


def scenario_pad_retake(ctx):
    """A capture the server's PAD policy is unsure about (the face leaves the view: FACE_LOST) is not
    refused: the selfie screen comes back with the guidance of 1066 and the same attempts left; the
    next capture is decided with it (opt-in: the frame to confirm, then success)."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.optin')
    b.screen('verify-password', shot=False)
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    b.screen('selfie-start', shot=False)
    before = b.js("return document.querySelector('[data-attempts-left]')?.dataset.attemptsLeft")
    selfie_step(b, media, video=media.away)
    b.wait(lambda: b.current()[0] == 'selfie-start' and b.attr('data-retry') == 'true', 120, 'the selfie screen asked again')
    b.screen('selfie-start')
    check(not check_retake_words(b), 'a face that left the view is asked again plainly, not under a challenge')
    check('keep your face in the frame' in b.text(), 'the guidance says what to do')
    after = b.js("return document.querySelector('[data-attempts-left]')?.dataset.attemptsLeft")
    check(before == after, f'attempts left unchanged by the retake ({before} → {after})')
    retakes = [e['details'] for e in srv.audit() if e['action'].endswith('selfie_verified')]
    check(retakes and retakes[-1].get('result') == 'retake' and 'face_not_kept' in retakes[-1].get('pad_findings', []),
          f'server audit of the retake: {retakes[-1:]}')
    b.use_camera(media.selfie)
    b.click('confirm')
    capture_selfie(b)
    b.screen('selfie-confirm', timeout=120)
    b.click('approve')
    result(b, 'success')
    decided = [e['details'] for e in srv.audit() if e['action'].endswith('selfie_verified')][-1]
    check(decided.get('pad_outcome') == 'bona_fide' and decided.get('pad_combined') is True, f'the pair decided bona fide: {decided}')
    b.assert_clean()


def scenario_reload_resume(ctx):
    """A reload mid-flow resumes the same session at the same step (GET /v1/session)."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.kyc')
    document_step(b, media)
    b.d.refresh()
    b.screen('document-confirm', shot=False)
    number = b.js("return document.querySelector('[data-field=document_number] dd')?.textContent")
    check(number == SPECIMEN_DOCUMENT_NUMBER, f'after a reload the confirm screen shows the document again: {number!r}')
    b.shot('document-confirm-after-reload')
    b.click('confirm')
    b.screen('selfie-start', shot=False)
    b.d.refresh()
    b.screen('selfie-start', shot=False)
    b.click('cancel')
    result(b, 'cancelled')
    check(b.attr('data-error-code') == '240', f"cancel after reload ends with 240: {b.attr('data-error-code')}")
    txn = [e['details'] for e in srv.audit() if e['action'] == 'idv.transaction'][-1]
    check(txn.get('long_error_code') == 240, f'server transaction: {txn}')
    b.assert_clean()


def scenario_network_lost(ctx):
    """Offline at the moment of an answer: the page says so, keeps the screen, and carries on once online."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.document_scan')
    b.screen('document-start', shot=False)
    b.cdp('Network.emulateNetworkConditions', {'offline': True, 'latency': 0, 'downloadThroughput': -1, 'uploadThroughput': -1})
    b.click('confirm')
    b.wait(lambda: b.js("return !!document.querySelector('.network-problem[data-error=network]')"), 20, 'the offline notice')
    check(b.current()[0] == 'document-start', 'the screen stays while offline')
    b.shot('document-start-offline')
    b.cdp('Network.emulateNetworkConditions', {'offline': False, 'latency': 0, 'downloadThroughput': -1, 'uploadThroughput': -1})
    # Back online: the page retries by itself (online event) or on "Try again".
    time.sleep(1)
    if b.current()[0] == 'document-start':
        b.click('retry')
    b.screen('document-capture', shot=False)
    b.click('cancel')
    result(b, 'cancelled', shot=False)
    b.assert_clean()


def scenario_camera_problems(ctx):
    """A dark scene, camera permission denied, no camera: plain words, and the flow can still be left cleanly."""
    srv, media = ctx.server(), ctx.media
    activate_without_idv(srv, 'katie')
    # Too dark: the hint says so before the shot.
    b = ctx.browser(srv)
    login(b, 'katie')
    b.use_camera(media.dark)
    start_flow(b, 'idv.postlogin.document_scan')
    b.screen('document-start', shot=False)
    b.click('confirm')
    b.screen('document-capture', shot=False)
    b.wait(lambda: b.js("return document.querySelector('.hint')?.dataset.hint") == 'dark', 20, 'the too-dark hint')
    b.shot('document-capture-too-dark')
    b.click('cancel')
    result(b, 'cancelled', shot=False)
    b.assert_clean()
    b.quit()
    # Denied: no fake-accept UI, and the permission refused for this origin.
    b = ctx.browser(srv, fake_ui=False)
    b.cdp('Browser.setPermission', {'permission': {'name': 'camera'}, 'setting': 'denied', 'origin': srv.origin})
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.document_scan')
    b.screen('document-start', shot=False)
    b.click('confirm')
    b.screen('document-capture', shot=False)
    b.wait(lambda: b.attr('data-camera-error') == 'denied', 20, 'the camera-denied notice')
    check('allow camera access' in b.text(), f'plain words for a denied camera: {b.text()!r}')
    b.shot('document-capture-camera-denied')
    b.click('cancel')
    result(b, 'cancelled')
    check(b.attr('data-error-code') == '240', 'cancel with a denied camera ends the flow with 240')
    b.assert_clean()
    b.quit()
    # No camera at all (no fake device in a headless browser): NotFoundError, told as such.
    b = ctx.browser(srv, fake_device=False)
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.document_scan')
    b.screen('document-start', shot=False)
    b.click('confirm')
    b.screen('document-capture', shot=False)
    b.wait(lambda: b.attr('data-camera-error') == 'notFound', 20, 'the no-camera notice')
    check('could not find a camera' in b.text(), f'plain words for no camera: {b.text()!r}')
    b.shot('document-capture-no-camera')
    b.click('cancel')
    result(b, 'cancelled', shot=False)
    b.assert_clean()


def scenario_expired_link(ctx):
    """An expired link ends on a plain explanation and is audited; an unknown one too; an idle
    session that expired starts over, saying so."""
    srv = ctx.server()
    srv.create_user('katie')
    link = srv.admin('create-link', 'katie', '--ttl', '1')
    time.sleep(2.2)
    b = ctx.browser(srv)
    b.open(link['path'])
    result(b, 'failure')
    check(b.attr('data-screen-reason') == 'link-invalid', 'expired link → link-invalid')
    check('expired' in b.text(), f'the page says the link expired: {b.text()!r}')
    check(any(e['action'] == 'link.refused' and e['details'].get('reason') == 'expired' for e in srv.audit()), 'server audit: link.refused expired')
    b.open('/verify/#link=' + 'A' * 43)
    result(b, 'failure', shot=False)
    check('not valid' in b.text(), f'an unknown link: {b.text()!r}')
    b.assert_clean()
    b.quit()
    # A session left idle past session.idle_seconds: the next step says it expired and starts over.
    # Idle 6 s: the login's own request gaps (a busy headless Chromium) stay well inside it.
    idle = ctx.server({'session.idle_seconds': '6'})
    activate_without_idv(idle, 'amy')
    b = ctx.browser(idle)
    login(b, 'amy')
    time.sleep(7.5)
    b.click('start-flow', '[data-flow="idv.template_status"]')
    b.screen('check-user')
    check('expired' in b.text(), f'the page says the session expired: {b.text()!r}')
    b.assert_clean()


def scenario_active_liveness(ctx):
    """Active liveness (idv.liveness_mode=active): the server's challenge is shown before the capture
    and its actions one after the other during it; the server judges the frames against it."""
    srv, media = ctx.server({'idv.liveness_mode': 'active'}), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.optin')
    b.screen('verify-password', shot=False)
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    b.screen('selfie-start')
    acts = b.js("return document.querySelector('[data-challenge-actions]')?.dataset.challengeActions")
    check(acts and len(acts.split(',')) == 2, f'the selfie start shows the server challenge: {acts!r}')
    b.use_camera(media.selfie)
    b.click('confirm')
    capture_selfie(b)
    seen = set()
    end = time.time() + 30
    while time.time() < end:
        key = b.js("return document.querySelector('.instruction')?.dataset.instruction")
        if key:
            seen.add(key)
        if key == 'done' or b.current()[0] != 'selfie-capture':
            break
        if key and key.startswith('action-') and key not in [s for s in seen if s != key]:
            pass
        time.sleep(0.1)
    shown = [s.split('-', 2)[2] for s in seen if s.startswith('action-')]
    check(sorted(shown) == sorted(acts.split(',')), f'each challenged action was shown during the capture: {sorted(seen)} vs {acts}')
    # The talking-face clip does not perform the challenge: the server refuses it and asks again.
    b.wait(lambda: b.current()[0] in ('selfie-start', 'selfie-confirm', 'result'), 120, 'the server verdict')
    b.shot('active-liveness-verdict')
    verified = [e['details'] for e in srv.audit() if e['action'] == 'idv.selfie_verified']
    ctx.notes['challenge'] = acts
    ctx.notes['server_verdict'] = verified[-1].get('result') if verified else None
    ctx.notes['page'] = b.current()[0]
    if b.current()[0] == 'selfie-start':
        check(b.attr('data-retry') == 'true', 'the re-asked capture says why')
        check('requested movements' in b.text() or 'live person' in b.text(), f'plain words for the refused capture: {b.text()!r}')
    acts_audit = [e['details'] for e in srv.audit() if e['action'] == 'idv.selfie_verified']
    check(acts_audit, 'server audit: the capture was judged')
    b.assert_clean()


def current_challenge(b):
    """The session's pending challenge, as the server keeps it (GET /v1/session with the page's token)."""
    token = b.js("return JSON.parse(sessionStorage.getItem('openidv.verify.v1') || '{}').token")
    check(token, 'the page holds no session token')
    req = urllib.request.Request(b.server.origin + '/v1/session', headers={'Authorization': f'Bearer {token}'})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read()).get('challenge') or {}


FLASH_LOG = r'''
    window.__flash = [];
    new MutationObserver((ms) => {
      for (const m of ms) {
        const d = m.target.dataset || {};
        if (m.attributeName === 'data-presence-step' && d.presenceStep !== undefined) window.__flash.push([performance.now(), Number(d.presenceStep), d.rgb]);
      }
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-presence-step'] });'''


def scenario_presence_illumination(ctx):
    """Presence (idv.presence=illumination, the default): the capture screen warns about flashing light
    and offers the head-movement check; Start flashes the server's colour sequence full screen while it
    records and uploads the frames with their times. Chromium's fake camera is a recording (a virtual
    camera: the injection the check exists for) and cannot reflect the light, so the server concludes
    'not followed' (LIVENESS_FAILED, audited with the measured steps); declining then gets the policy's
    fallback (the head-movement challenge, assurance fallback_active)."""
    # The faint-reflection retake (1071) off: the recording's p-value is uniform, so with it on one
    # capture in ten would be asked again before its refusal (PresenceRetakeTests covers that branch).
    srv, media = ctx.server({'idv.presence': 'illumination', 'idv.capture_replay_seconds': '604800', 'idv.presence_retake_p': '0'}), ctx.media
    activate_without_idv(srv, 'katie')
    b = ctx.browser(srv)
    login(b, 'katie')
    start_flow(b, 'idv.postlogin.optin')
    b.screen('verify-password', shot=False)
    b.fill('input[type=password]', PASSWORD)
    b.click('confirm')
    b.screen('selfie-start')
    b.use_camera(media.selfie)
    b.click('confirm')
    b.screen('selfie-capture', shot=False)
    check(b.attr('data-presence') == 'illumination', f"the capture screen knows the illumination challenge: {b.attr('data-presence')}")
    check(b.js("return !!document.querySelector('[data-notice=photosensitivity]')"), 'the flashing-light warning is shown before Start')
    check(b.js("return !!document.querySelector('[data-action=decline-flash]')"), 'the head-movement check is offered instead')
    steps = current_challenge(b).get('payload', {}).get('presence', {}).get('illumination') or []
    check(len(steps) >= 2, f'the upload challenge carries the sequence: {steps}')
    b.wait(lambda: b.js("return document.querySelector('video.preview')?.videoWidth > 0"), 20, 'the selfie preview')
    b.shot('presence-warning')
    b.js(FLASH_LOG)
    b.click('capture')
    b.wait(lambda: b.js("return document.querySelector('.flash-overlay')?.dataset.presenceStep") not in (None, '-1'), 15, 'the screen to flash')
    b.shot('presence-flashing')
    b.wait(lambda: b.current()[0] in ('selfie-start', 'selfie-confirm', 'result') and b.current()[1] in (None, 'false'), 120, 'the server verdict')
    log = b.js('return window.__flash') or []
    order = []
    for t, i, rgb in log:
        if i >= 0 and (not order or order[-1][1] != i):
            order.append((t, i, rgb))
    check([i for _, i, _ in order] == list(range(len(steps))), f'the page showed every step once, in order: {[i for _, i, _ in order]}')
    for (_, i, rgb) in order:
        check(rgb == ','.join(str(v) for v in steps[i]['rgb']), f'step {i} showed {rgb}, the server asked {steps[i]["rgb"]}')
    late = [(i, round(order[i + 1][0] - order[i][0]), steps[i]['ms']) for i in range(len(order) - 1)
            if abs((order[i + 1][0] - order[i][0]) - steps[i]['ms']) > 120]
    check(not late, f'steps held for their time (±120 ms): {late}')
    verified = [e['details'] for e in srv.audit() if e['action'] == 'idv.selfie_verified']
    check(verified, 'server audit: the capture was judged')
    v = verified[-1]
    ctx.notes['flashed_steps'] = len(order)
    ctx.notes['server'] = {k: v.get(k) for k in ('result', 'presence', 'presence_assurance', 'presence_score', 'presence_p', 'presence_steps')}
    check(v.get('presence') == 'not_followed' and v.get('result') == 'LIVENESS_FAILED' and v.get('presence_assurance') == 'illumination',
          f'the fake camera (a recording) cannot follow the light: {ctx.notes["server"]}')
    measured, total = (int(x) for x in str(v.get('presence_steps', '0/0')).split('/'))
    check(total == len(steps) and measured >= total - 2, f'the frames and their times covered the sequence: {v.get("presence_steps")}')
    check(b.current()[0] == 'selfie-start' and b.attr('data-retry') == 'true', f'the capture is asked again: {b.current()}')
    check('light' in b.text(), f"plain words: the screen's light was not seen: {b.text()!r}")
    b.shot('presence-not-followed')
    # The head-movement check instead: the server's fallback, at a lower assurance.
    b.click('confirm')
    b.screen('selfie-capture', shot=False)
    b.click('decline-flash')
    b.wait(lambda: b.current()[0] == 'selfie-capture' and b.attr('data-presence') == 'fallback-active', 30, 'the fallback capture screen')
    b.wait(lambda: b.js("return document.querySelector('video.preview')?.videoWidth > 0"), 20, 'the selfie preview')
    ch = current_challenge(b)
    check(ch.get('payload', {}).get('presence', {}).get('fallback') == 'active' and ch['payload'].get('liveness_challenge'),
          f'the fallback challenge carries the head movements: {ch.get("payload")}')
    b.shot('presence-fallback')
    b.click('capture')
    b.wait(lambda: b.current()[0] in ('selfie-start', 'selfie-confirm', 'result') and b.current()[1] in (None, 'false'), 120, 'the fallback verdict')
    audit = srv.audit()
    declined = [e['details'] for e in audit if e['action'] == 'idv.presence_declined']
    check(declined and declined[-1].get('how') == 'declined', f'server audit: the decline {declined}')
    last = [e['details'] for e in audit if e['action'] == 'idv.selfie_verified'][-1]
    ctx.notes['fallback'] = {k: last.get(k) for k in ('result', 'presence', 'presence_assurance', 'reasons')}
    check(last.get('presence_assurance') == 'fallback_active', f'the fallback capture is judged at the lower assurance: {ctx.notes["fallback"]}')
    b.assert_clean()


SCENARIOS = {
    'activation_link': scenario_activation_link,
    'postlogin': scenario_postlogin,
    'codelab_screens': scenario_codelab_screens,
    'held_photo_attack': scenario_held_photo_attack,
    'pad_retake': scenario_pad_retake,
    'reload_resume': scenario_reload_resume,
    'network_lost': scenario_network_lost,
    'camera_problems': scenario_camera_problems,
    'expired_link': scenario_expired_link,
    'active_liveness': scenario_active_liveness,
    'presence_illumination': scenario_presence_illumination,
}


class Context:
    def __init__(self, args, name, media):
        self.args, self.name, self.media = args, name, media
        self.servers, self.browsers = [], []
        self.notes = {}
        self.work = tempfile.mkdtemp(prefix=f'idv-web-{name}-')

    def server(self, settings=None):
        d = os.path.join(self.work, f'server{len(self.servers)}')
        os.makedirs(d)
        s = Server(self.args.idvd, d, settings).start()
        self.servers.append(s)
        return s

    def browser(self, server, **kw):
        b = Browser(self.name, server, self.args.out, self.media, **kw)
        self.browsers.append(b)
        return b

    def close(self, keep):
        for b in self.browsers:
            b.quit()
        for s in self.servers:
            s.stop()
            if keep:
                dest = os.path.join(self.args.out, self.name, f'server-{os.path.basename(s.dir)}.log')
                shutil.copy(os.path.join(s.dir, 'server.log'), dest)
        shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--idvd', required=True)
    ap.add_argument('--fixtures', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--media', help='folder for the generated camera videos (kept between runs)')
    ap.add_argument('--scenario', action='append', choices=sorted(SCENARIOS))
    args = ap.parse_args()
    # Stopped from outside (the XCTest's time limit): unwind, so browsers and servers are closed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not os.access(tool, os.X_OK):
            print(json.dumps({'environment': f'{tool} is missing (Debian packages chromium, chromium-driver)'}))
            return 2
    if not shutil.which('ffmpeg'):
        print(json.dumps({'environment': 'ffmpeg is missing'}))
        return 2
    os.makedirs(args.out, exist_ok=True)
    media = Media(args.idvd, args.fixtures, args.media or tempfile.mkdtemp(prefix='idv-web-media-'))
    media.build()
    failed = 0
    for name in args.scenario or sorted(SCENARIOS):
        ctx = Context(args, name, media)
        t0 = time.time()
        failures = []
        try:
            SCENARIOS[name](ctx)
        except Failure as f:
            failures.append(str(f))
        except Exception:
            failures.append(traceback.format_exc())
        finally:
            screens = [s for b in ctx.browsers for s in b.screens_seen]
            ctx.close(keep=bool(failures))
        failed += bool(failures)
        print(json.dumps({'scenario': name, 'passed': not failures, 'failures': failures,
                          'seconds': round(time.time() - t0, 1), 'screens': sorted(set(screens)), 'notes': ctx.notes}), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
