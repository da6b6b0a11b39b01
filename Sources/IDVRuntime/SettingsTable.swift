import Foundation
import IDVCore
import IDVEngine

/// The one table of settings (`idvd serve --help`): every key, its `IDVD_…` environment variable,
/// its description, and where it lands in ``ServerConfig`` — a key path, so one builder per value
/// type parses and checks every setting the same way and says the same thing when one is wrong.
enum SettingsTable {
    typealias Setting = ServerConfig.Setting
    typealias Path<T> = WritableKeyPath<ServerConfig, T> & Sendable

    /// `true`/`yes`/`on`/`1` or `false`/`no`/`off`/`0` (any case); nil for anything else.
    static func parseBool(_ v: String) -> Bool? {
        switch v.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: return nil
        }
    }

    /// An integer in `min...max` (surrounding blanks ignored).
    static func int(_ key: String, _ kp: Path<Int>, min: Int, max: Int = .max, _ summary: String) -> Setting {
        Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            guard let n = Int(v.trimmingCharacters(in: .whitespaces)), n >= min, n <= max else {
                throw IDVServerError.configuration(max == .max ? "\(key) must be an integer ≥ \(min), got '\(v)'"
                                                               : "\(key) must be an integer from \(min) to \(max), got '\(v)'")
            }
            c[keyPath: kp] = n
        }, current: { "\($0[keyPath: kp])" })
    }

    /// A number in `0...max` (surrounding blanks ignored).
    static func number(_ key: String, _ kp: Path<Double>, max: Double, _ summary: String) -> Setting {
        Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            guard let x = Double(v.trimmingCharacters(in: .whitespaces)), x >= 0, x <= max else {
                throw IDVServerError.configuration("\(key) must be a number from 0 to \(max), got '\(v)'")
            }
            c[keyPath: kp] = x
        }, current: { "\($0[keyPath: kp])" })
    }

    static func bool(_ key: String, _ kp: Path<Bool>, _ summary: String) -> Setting {
        Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            guard let b = parseBool(v) else { throw IDVServerError.configuration("\(key) must be true or false, got '\(v)'") }
            c[keyPath: kp] = b
        }, current: { $0[keyPath: kp] ? "true" : "false" })
    }

    /// A string, refused when empty unless `allowEmpty`.
    static func string(_ key: String, _ kp: Path<String>, allowEmpty: Bool = false, _ summary: String) -> Setting {
        Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            guard allowEmpty || !v.isEmpty else { throw IDVServerError.configuration("\(key) must not be empty") }
            c[keyPath: kp] = v
        }, current: { $0[keyPath: kp] })
    }

    /// A string; empty means unset (nil).
    static func optionalString(_ key: String, _ kp: Path<String?>, _ summary: String) -> Setting {
        Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in c[keyPath: kp] = v.isEmpty ? nil : v },
                current: { $0[keyPath: kp] ?? "" })
    }

    /// A value parsed from the trimmed text: `parse` gives the value (nil: refused with "`key`
    /// `requirement`, got …"), `show` its text for `--help`.
    static func parsed<T: Sendable>(_ key: String, _ kp: Path<T>, requirement: String, parse: @escaping @Sendable (String) -> T?,
                                    show: @escaping @Sendable (T) -> String, _ summary: String) -> Setting {
        Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            guard let value = parse(v.trimmingCharacters(in: .whitespaces)) else {
                throw IDVServerError.configuration("\(key) \(requirement), got '\(v)'")
            }
            c[keyPath: kp] = value
        }, current: { show($0[keyPath: kp]) })
    }

    /// Every setting, in `--help` order: the process and its store, the workflow policy, the page,
    /// review, the relying-party API, webhooks, the abuse limits, the analysis pool and the HTTP edge.
    static let all: [Setting] = process + workflow + web + review + rp + webhooks + retention + limits + edge

    static let process: [Setting] = [
        string("listen.address", \.listenAddress, "IPv4 address to listen on"),
        int("listen.port", \.port, min: 0, max: 65535, "TCP port, 0–65535 (0 = any free port)"),
        int("http.threads", \.threads, min: 1, "libmicrohttpd thread-pool size (epoll): network I/O and the quick routes"),
        int("http.workers", \.workers, min: 1, "handler threads for the routes that may take long (hashing, face match, document read); default 2 × cores, at least 4"),
        optionalString("tls.cert", \.tlsCertPath, "PEM certificate file; with tls.key enables HTTPS"),
        optionalString("tls.key", \.tlsKeyPath, "PEM private-key file"),
        string("db.path", \.dbPath, "SQLite database file, or a postgresql:// URL (no password in it: see db.password_file); also IDVD_DB; created/migrated at start"),
        int("limits.body_bytes", \.bodyLimit, min: 256, "body limit of JSON routes, bytes"),
        int("limits.upload_bytes", \.uploadLimit, min: 1024, "body limit of image-carrying routes, bytes"),
        int("session.idle_seconds", \.engine.sessionIdleSeconds, min: 1, "session idle expiry, seconds"),
        int("session.absolute_seconds", \.engine.sessionAbsoluteSeconds, min: 1, "session absolute expiry, seconds"),
        int("session.sweep_seconds", \.sessionSweepSeconds, min: 0, "idvd serve: purge expired/revoked sessions (closing their flow runs as expired) every N seconds; 0 = never"),
        int("activation.code_ttl_seconds", \.engine.activationCodeTTLSeconds, min: 1, "activation-code lifetime, seconds"),
        int("activation.code_attempts", \.engine.activationCodeAttempts, min: 1, "wrong activation codes one client may send for a user before it backs off (limits.backoff_seconds, doubling); the code itself stays usable"),
        int("password.attempts", \.engine.passwordAttempts, min: 1, "wrong passwords one client may send for a user before it backs off (limits.backoff_seconds, doubling); the user locks at password.lock_threshold"),
        int("password.min_length", \.engine.passwordMinLength, min: 1, "password policy: minimum length (characters)"),
        int("argon2.opslimit", \.engine.argon2OpsLimit, min: 1, "Argon2id passes (crypto_pwhash opslimit)"),
        int("argon2.memlimit_kib", \.engine.argon2MemLimitKiB, min: 8, "Argon2id memory, KiB (crypto_pwhash memlimit)"),
        int("shutdown.grace_seconds", \.shutdownGraceSeconds, min: 0, "on SIGTERM/SIGINT: wait this long for in-flight requests"),
        bool("log.requests", \.logRequests, "one JSON log line per request (true/false)"),
        bool("documents.warm_up", \.documentsWarmUp, "idvd serve: load the OCR-B classifier's shipped parameters (a few ms) in the background at start, not at the first document upload (true/false)"),
        string("db.password_file", \.db.passwordFile, allowEmpty: true, "PostgreSQL: file holding the database password (mode 0600); else IDVD_DB_PASSWORD, PGPASSWORD or ~/.pgpass"),
        int("db.pool_size", \.db.poolSize, min: 1, max: 512, "PostgreSQL: connections per node"),
    ]

    static let workflow: [Setting] = [
        number("idv.face_match_max_distance", \.engine.workflow.faceMatchMaxDistance, max: 4, "largest face-descriptor distance that is MATCHED when idv.face_match_operating_point = distance or the analyser reports no calibration (default \(WorkflowPolicy.lfwCalibratedMaxDistance): one image against one, FMR 0.11 % on LFW)"),
        number("idv.face_match_max_cosine_distance", \.engine.workflow.faceMatchMaxCosineDistance, max: 2, "largest cosine distance of the face recogniser's descriptors (portraits, version-3 templates) that is MATCHED when idv.face_match_operating_point = distance or the analyser reports no calibration (default \(WorkflowPolicy.recognizerMaxCosineDistance): one image against one, FMR 0.1 % on LFW)"),
        bool("idv.optin_enrolment", \.engine.workflow.optInEnrolment, "biometric opt-in (seed 004) may enrol a template; it has no reference face, so whoever holds the password can replace the template with his own face (docs/LIMITS.md); false: opt-in answers 1033 and templates are enrolled only after a selfie that matched an identity document (KYC, activation with IDV) (true/false)"),
        bool("idv.upgrade_legacy_templates", \.engine.workflow.upgradeLegacyTemplates, "replace a version-1/2 (dlib) template with the capture's version-3 template when its owner matches it at or under the fmr_0.01 line in a biometric authentication against it"),
        parsed("idv.face_match_operating_point", \.engine.workflow.faceMatchOperatingPoint, requirement: "must be fmr_0.1, fmr_0.01 or distance",
               parse: { $0.lowercased() == "distance" ? .some(nil) : MatchOperatingPoint(rawValue: $0.lowercased()).map { .some($0) } },
               show: { $0?.rawValue ?? "distance" },
               "face-match operating point: fmr_0.1 (default), fmr_0.01 (the analyser's calibrated distances), or distance (idv.face_match_max_distance)"),
        bool("idv.selfie_recapture_on_poor_quality", \.engine.workflow.recaptureOnPoorCapture, "ask a too dark, bright, blurred, small or off-pose selfie capture again (1060–1065) instead of judging it"),
        int("idv.liveness_threshold", \.engine.workflow.livenessThreshold, min: 1, max: 100, "liveness score (1–100) below which the verdict is LIVENESS_FAILED"),
        bool("idv.doc.reject_expired", \.engine.workflow.rejectExpiredDocuments, "an expired document is INVALID"),
        bool("idv.doc.reject_check_digits", \.engine.workflow.rejectFailedCheckDigits, "a failed MRZ check digit makes the document INVALID"),
        bool("idv.doc.require_portrait", \.engine.workflow.requirePortrait, "document flows with a selfie need a portrait on the document"),
        bool("idv.doc.require_name_confirmation", \.engine.workflow.requireNameConfirmation, "the MRZ's names (no check digit) are VALID only when the visual zone or the card's front prints them the same; otherwise WARNING naming the part"),
        bool("idv.doc.accept_specimen_documents", \.engine.workflow.acceptSpecimenDocuments, "judge documents of ICAO's fictional state UTO (specimens) like real ones; a test-deployment setting (the demo, the tests), false by default"),
        bool("idv.continue_anyway", \.engine.workflow.continueAnywayAfterNotMatched, "offer 'Continue Anyway' (continue-flow) after NOT_MATCHED"),
        int("idv.document_attempts", \.engine.workflow.documentAttempts, min: 1, max: 20, "document uploads per flow"),
        int("idv.selfie_attempts", \.engine.workflow.selfieAttempts, min: 1, max: 20, "selfie captures per flow"),
        int("idv.reauth_attempts", \.engine.workflow.reauthAttempts, min: 1, max: 20, "password re-authentication attempts (opt-in/opt-out)"),
        int("idv.biometric_attempts", \.engine.workflow.biometricAttempts, min: 1, max: 100, "consecutive failed server biometric authentications before lockout; also the liveness failures across KYC, opt-in and server biometric authentication within idv.lockout_seconds, and the size of the user's liveness-challenge budget (idv.pad.challenge_window_seconds)"),
        int("idv.lockout_seconds", \.engine.workflow.biometricLockoutSeconds, min: 1, "window of the biometric failure count, seconds"),
        int("idv.flow_timeout_seconds", \.engine.workflow.flowTimeoutSeconds, min: 1, "an IDV flow expires this long after it started, seconds"),
        string("idv.consent_text_version", \.engine.workflow.consentTextVersion, "version of the biometric consent text (recorded with each consent)"),
        string("templates.key_file", \.keys.keyFile, allowEmpty: true, "32-byte key file (64 hex digits, mode 0600) for templates, kept images and session states; empty = a per-database file in IDVD_KEY_DIR or $XDG_STATE_HOME/openidv/keys (~/.local/state/openidv/keys), apart from the database; an old <db.path>.key is still used, with a warning (`idvd admin where`)"),
        string("templates.previous_key_files", \.keys.previousKeyFiles, allowEmpty: true, "comma-separated key files of retired keys: still opened; `idvd admin rekey` re-seals under templates.key_file"),
        int("idv.media_retention_seconds", \.engine.workflow.mediaRetentionSeconds, min: 0, "keep uploaded images (encrypted) this long after the flow ends; 0 = delete at flow end"),
        int("idv.max_pages", \.engine.workflow.maxPages, min: 1, max: 8, "document pages per upload"),
        int("idv.max_frames", \.engine.workflow.maxFrames, min: 1, max: 300, "selfie frames per upload"),
        parsed("idv.liveness_mode", \.engine.workflow.livenessMode, requirement: "must be passive or active",
               parse: { ["passive", "active"].contains($0.lowercased()) ? $0.lowercased() : nil }, show: { $0 },
               "liveness evidence: passive (blink + non-rigid motion) or active (server-issued challenge actions)"),
        int("idv.active_challenge_duration_seconds", \.engine.workflow.activeChallengeDurationSeconds, min: 2, max: 30, "active liveness (and the passive mode's challenge for a pair without life, and presence's head-movement fallback): sequence time for the challenged actions, seconds"),
        int("idv.active_challenge_deadline_seconds", \.engine.workflow.activeChallengeDeadlineSeconds, min: 10, max: 3600, "active liveness (and the passive mode's challenge for a pair without life, and presence's head-movement fallback): the frames must arrive within this many seconds of the challenge"),
        parsed("idv.presence", \.engine.workflow.presence.mode, requirement: "must be illumination or off",
               parse: { PresencePolicy.Mode(rawValue: $0.lowercased()) }, show: { $0.rawValue },
               "selfie presence check: illumination (the screen flashes a server-chosen colour sequence the face must reflect; default) or off"),
        parsed("idv.presence_fallback", \.engine.workflow.presence.fallback, requirement: "must be active, passive or refuse",
               parse: { PresencePolicy.Fallback(rawValue: $0.lowercased()) }, show: { $0.rawValue },
               "for a client that cannot flash: active (head-movement challenge; default), passive, or refuse — active and passive are recorded as a lower assurance"),
        int("idv.presence_deadline_seconds", \.engine.workflow.presence.deadlineSeconds, min: 10, max: 3600,
            "the frames must arrive within this many seconds of the illumination challenge"),
        number("idv.presence_retake_p", \.engine.workflow.presence.retakePValue, max: 0.5,
               "a capture whose reflected light did not pass the illumination check but came close (its p-value at most this) is asked again once per attempt under a new sequence, no attempt used (1071); 0 = never"),
        int("idv.capture_replay_seconds", \.engine.workflow.presence.replaySeconds, min: 0, max: 31_536_000,
            "keep the digests of judged selfie frames this long; a frame uploaded again byte for byte fails (0 = no replay check)"),
        bool("chip.require_trusted_csca", \.engine.workflow.requireTrustedCSCA, "a chip that does not chain to a trusted CSCA (unknown CSCA, wrong CSCA key, no document signer) makes the document INVALID, not WARNING"),
        bool("chip.require_genuine", \.engine.workflow.requireGenuineChip, "a chip that did not prove itself genuine by Active Authentication over the server's challenge (not run, no DG15 key, an algorithm that cannot be checked: a copy is not excluded) makes the document INVALID, not WARNING; a failed or replayed one is INVALID always"),
        // Presentation-attack detection (IDVEngine Workflows/PADJudgement.swift; docs/LIVENESS.md).
        parsed("idv.pad.texture_line", \.engine.workflow.pad.textureLine, requirement: "must be a number from -20 to 20",
               parse: { Double($0).flatMap { $0.isFinite && abs($0) <= 20 ? $0 : nil } }, show: { "\($0)" },
               "PAD: calibrated texture log-odds from which the texture speaks for a live face — the APCER operating point (`idvd liveness calibrate` sets it); default \(PADPolicy.defaultTextureLine)"),
        number("idv.pad.unsure_margin", \.engine.workflow.pad.unsureMargin, max: 20, "PAD: texture up to this many log-odds below idv.pad.texture_line is unsure — asked again (1066, no attempt used) — rather than an attack; default \(PADPolicy.defaultUnsureMargin)"),
        int("idv.pad.min_good_frames", \.engine.workflow.pad.minimumGoodFrames, min: 1, max: 150, "PAD: texture resting on fewer good frames is unsure, never an attack; default \(PADPolicy.defaultMinimumGoodFrames)"),
        number("idv.pad.plane_motion_level", \.engine.workflow.pad.planeMotionLevel, max: 10, "PAD: plane motion (inter-eye distances) from which a capture with neither facial action nor non-rigid motion is a flat picture moved by a hand — an attack unless its texture speaks strongly for a live face (then unsure); below it the face was held still: asked again (1066), never an attack; default \(PADPolicy.defaultPlaneMotionLevel)"),
        bool("idv.pad.retake_on_unsure", \.engine.workflow.pad.retakeOnUnsure, "PAD: ask a capture the policy is unsure about again once (no attempt used) and decide on both captures (true/false)"),
        bool("idv.pad.challenge_on_unsure", \.engine.workflow.pad.challengeOnUnsure, "PAD, passive mode: a capture and its retake with no sign of life and no confident attack evidence are asked once more under an active challenge (no attempt used) instead of failing; false also turns off the step-up (idv.pad.challenge_below) (true/false)"),
        int("idv.pad.challenge_window_seconds", \.engine.workflow.pad.challengeWindowSeconds, min: 60, max: 31_536_000,
            "a user may be shown idv.biometric_attempts liveness challenges (active mode's at each capture, presence's head-movement fallback, the PAD step-up, a pair without life) at once, then one more every this many seconds / idv.biometric_attempts (a bucket), counted when shown, across sessions, runs and flows; a run whose capture answers one and MATCHES gives back its draws; none left: a run that would show one ends with 1010; default 86400"),
        parsed("idv.pad.challenge_below", \.engine.workflow.pad.challengeBelow, requirement: "must be a number from -20 to 20",
               parse: { Double($0).flatMap { $0.isFinite && abs($0) <= 20 ? $0 : nil } }, show: { "\($0)" },
               "PAD, passive mode (with idv.pad.challenge_on_unsure): a capture that would pass on passive evidence with texture log-odds below this is asked once more under an active challenge (no attempt used) — a screen filling the camera's view shows real life with such texture; at or below idv.pad.texture_line off; default \(PADPolicy.defaultChallengeBelow)"),
    ]

    static let web: [Setting] = [
        bool("web.enabled", \.web.enabled, "serve the hosted verification page under /verify/ (true/false)"),
        string("web.assets_dir", \.web.assetsDirectory, allowEmpty: true, "serve the page from this folder (index.html, app.js, …) instead of the bundled assets"),
        // No trailing slash kept: links are the origin + `/verify/#link=…`.
        parsed("web.public_url", \.web.publicURL, requirement: "must start with https:// (or http://)",
               parse: { t in t.isEmpty || t.hasPrefix("https://") || t.hasPrefix("http://") ? (t.hasSuffix("/") ? String(t.dropLast()) : t) : nil },
               show: { $0 }, "public origin of the page for the links create-link prints, e.g. https://idv.example.com"),
        int("links.ttl_seconds", \.web.linkTTLSeconds, min: 1, max: WebSettings.maxLinkTTLSeconds, "lifetime of a verification link (create-link without --ttl), seconds"),
    ]

    static let review: [Setting] = [
        bool("review.document_warning", \.engine.workflow.review.documentWarning, "send a KYC whose document is WARNING to human review (true/false)"),
        number("review.match_band", \.engine.workflow.review.matchBand, max: 2, "send a KYC whose face-descriptor distance is within this much of the match threshold to review (0 = off)"),
        int("review.liveness_band", \.engine.workflow.review.livenessBand, min: 0, max: 100, "send a KYC whose liveness score is within this many points of idv.liveness_threshold to review (0 = off)"),
        bool("review.chip_unknown_csca", \.engine.workflow.review.chipUnknownCSCA, "send a KYC whose chip chains to no trusted CSCA to review (true/false)"),
    ]

    static let rp: [Setting] = [
        parsed("evidence.trust_framework", \.rp.trustFramework, requirement: "must be 1–64 characters of A–Z a–z 0–9 _ . : -",
               parse: { RelyingPartySettings.isTrustFramework($0) ? $0 : nil }, show: { $0 },
               "trust_framework of the signed verified_claims (OIDC4IDA 1.0): the framework the operator verifies under, e.g. de_aml, uk_tfida, eidas; default \(RelyingPartySettings.defaultTrustFramework)"),
        int("rp.rate_limit_per_minute", \.rp.requestsPerMinute, min: 1, max: 1_000_000, "requests per minute one relying-party API client may send (per idvd process); above it 429 (1133)"),
    ]

    static let webhooks: [Setting] = [
        bool("webhooks.deliver", \.webhooks.deliver, "idvd serve: deliver the webhook outbox from this node (true/false; any number of nodes may)"),
        bool("webhooks.allow_http", \.webhooks.allowHTTP, "allow plain http:// webhook URLs to non-loopback hosts (default: https, or http to 127.0.0.1/::1/localhost only)"),
        int("webhooks.poll_ms", \.webhooks.pollMilliseconds, min: 10, "how often the delivery worker looks for due deliveries, milliseconds"),
        int("webhooks.timeout_seconds", \.webhooks.timeoutSeconds, min: 1, "one delivery attempt's time limit, seconds"),
        int("webhooks.retry_base_seconds", \.webhooks.retryBaseSeconds, min: 1, "first retry delay, seconds; doubles per attempt (equal jitter)"),
        int("webhooks.retry_max_seconds", \.webhooks.retryMaxSeconds, min: 1, "longest retry delay, seconds"),
        int("webhooks.max_age_seconds", \.webhooks.maxAgeSeconds, min: 1, "give up delivering an event this long after it, seconds"),
        int("webhooks.batch", \.webhooks.batch, min: 1, "deliveries claimed per poll"),
        int("webhooks.retention_seconds", \.webhooks.retentionSeconds, min: 60, "keep delivered/failed events and their delivery log this long, seconds"),
    ]

    /// How long each class of personal data is kept (docs/DATA-PROTECTION.md "How long"); the
    /// expiry sweep deletes rows past their period. 0 = no time limit (kept until erased).
    static let retention: [Setting] = [
        int("retention.templates_seconds", \.engine.retention.templatesSeconds, min: 0, "delete a biometric template this long after enrolment, seconds; 0 = kept until the person opts out or is erased"),
        int("retention.scan_reports_seconds", \.engine.retention.scanReportsSeconds, min: 0, "delete a document scan report (names, document number, chip evidence) this long after the scan, seconds (the report of a run still open or under an open review case stays); 0 = kept until erased"),
        int("retention.flow_runs_seconds", \.engine.retention.flowRunsSeconds, min: 0, "delete an ended flow run (its outcome; the relying party then reads 404) this long after it ended, seconds; a run with an open review case stays; 0 = kept until erased"),
        int("retention.review_cases_seconds", \.engine.retention.reviewCasesSeconds, min: 0, "delete a decided review case this long after the decision, seconds; 0 = kept until erased"),
        int("retention.consents_seconds", \.engine.retention.consentsSeconds, min: 0, "delete a consent record this long after it was given, seconds, unless a kept template rests on it; 0 = kept until erased"),
        int("retention.erasure_receipts_seconds", \.engine.retention.erasureReceiptsSeconds, min: 0, "delete an erasure receipt this long after the erasure, seconds; 0 = kept"),
    ]

    static let limits: [Setting] = [
        int("limits.sessions_per_client", \.engine.limits.sessionsPerClientPerMinute, min: 0, "new sessions per client address per minute (and burst); beyond: 429 + 1110 with Retry-After; 0 = no limit"),
        int("limits.sessions_per_device", \.engine.limits.sessionsPerDevicePerMinute, min: 0, "new sessions per registered device per minute (and burst); 0 = no limit"),
        int("limits.devices_per_client", \.engine.limits.devicesPerClientPerMinute, min: 0, "device registrations per client address per minute (and burst); beyond: 429 + 1110; 0 = no limit"),
        int("limits.auth_failures_per_client", \.engine.limits.authFailuresPerClient, min: 0, "failed passwords/activation codes (any user) per client address or device per limits.auth_failure_window_seconds; beyond: 429 + 1111; 0 = no limit"),
        int("limits.auth_failure_window_seconds", \.engine.limits.authFailureWindowSeconds, min: 1, "window of limits.auth_failures_per_client, seconds"),
        int("limits.backoff_seconds", \.engine.limits.backoffSeconds, min: 1, "first back-off of a client for a user after password.attempts wrong passwords (activation.code_attempts wrong codes); doubles per further failure"),
        int("limits.backoff_max_seconds", \.engine.limits.backoffMaxSeconds, min: 1, "longest back-off of a client for a user, seconds"),
        int("password.lock_threshold", \.engine.limits.passwordLockThreshold, min: 1, "consecutive wrong passwords (all clients, every path) that lock the user temporarily"),
        int("password.lock_seconds", \.engine.limits.passwordLockSeconds, min: 1, "first user lock, seconds; doubles per wrong password after a lock ended"),
        int("password.lock_max_seconds", \.engine.limits.passwordLockMaxSeconds, min: 1, "longest user lock, seconds"),
        int("activation.idv_runs", \.engine.limits.activationIDVRuns, min: 1, "identity-verification runs one activation code may start"),
        int("limits.unbound_device_ttl_seconds", \.engine.limits.unboundDeviceTTLSeconds, min: 0, "a registered device never bound to a user is deleted by the expiry sweep once unused this long, seconds; 0 = kept"),
    ]

    static let edge: [Setting] = [
        int("analysis.threads", \.analysis.threads, min: 1, "threads that analyse document pages and selfie frames (never shared with light requests); default cores − 1, at least 1"),
        int("analysis.queue_limit", \.analysis.queueLimit, min: 0, "analyses that may wait for an analysis thread; beyond it an upload is refused at once with 1100 (503, Retry-After); default 2 × analysis.threads"),
        int("analysis.max_request_megapixels", \.analysis.maxRequestMegapixels, min: 1, "most pixels one upload's images may hold, summed over all pages or frames, read from the image headers before decoding (1102, 413)"),
        int("analysis.memory_budget_mib", \.analysis.memoryBudgetMiB, min: 1, "estimated memory all analyses in flight may use together, MiB; an upload that does not fit now is refused with 1100 (503, Retry-After)"),
        int("analysis.max_analysis_mib", \.analysis.maxAnalysisMiB, min: 1, "estimated memory one analysis may use, MiB (1102, 413 above it)"),
        int("analysis.max_retry_after_seconds", \.analysis.maxRetryAfterSeconds, min: 1, "the longest Retry-After the server suggests on 1100/1101"),
        int("http.header_deadline_seconds", \.clients.headerDeadlineSeconds, min: 0, "a connection is closed when its request header is not complete this many seconds after it opened (a kept-alive one: max(this, 30) after its previous answer); 0 = off"),
        int("http.min_body_bytes_per_second", \.clients.minBodyBytesPerSecond, min: 0, "a request body slower than this (after a grace of http.header_deadline_seconds) is cut off (0 = off)"),
        int("http.per_address_connections", \.clients.perAddressConnections, min: 0, "connections one client IP address may hold at once (0 = no limit)"),
        int("http.connection_limit", \.clients.connectionLimit, min: 16, "connections the server holds at once; idvd serve raises its open-file limit to fit"),
    ]
}
