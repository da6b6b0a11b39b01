import Foundation
import IDVEngine

extension ServerConfig {
    /// The settings of this configuration that are not for production, one plain sentence each
    /// (empty for the defaults and for `docs/idvd.production.json`). `idvd serve` logs each as a
    /// warning at start, so a test configuration that reached production shows in the first lines
    /// of the log (docs/OPERATIONS.md, "Production-safe defaults").
    public var nonProductionWarnings: [String] {
        var w: [String] = []
        let production = ServerConfig()
        let policy = engine.workflow
        if policy.acceptSpecimenDocuments {
            w.append("accepting ICAO specimen documents (issuing state or nationality UTO) like real ones: idv.doc.accept_specimen_documents=true is a test-deployment setting")
        }
        if !policy.rejectExpiredDocuments { w.append("expired documents are not rejected (idv.doc.reject_expired=false)") }
        if !policy.rejectFailedCheckDigits { w.append("documents with failed MRZ check digits are not rejected (idv.doc.reject_check_digits=false)") }
        if !policy.requirePortrait { w.append("documents without a portrait are accepted in selfie flows (idv.doc.require_portrait=false)") }
        if engine.argon2OpsLimit < production.engine.argon2OpsLimit || engine.argon2MemLimitKiB < production.engine.argon2MemLimitKiB {
            w.append("passwords are hashed below Argon2id's production cost (argon2.opslimit=\(engine.argon2OpsLimit), argon2.memlimit_kib=\(engine.argon2MemLimitKiB); production: \(production.engine.argon2OpsLimit), \(production.engine.argon2MemLimitKiB))")
        }
        if tlsCertPath == nil && !Self.isLoopback(listenAddress) {
            w.append("plain HTTP on \(listenAddress), not a loopback address: terminate TLS in front of it, or set tls.cert and tls.key")
        }
        if sessionSweepSeconds == 0 {
            w.append("the expiry sweep is off (session.sweep_seconds=0): expired sessions and their sealed media stay until `idvd admin purge-expired`")
        }
        if webhooks.allowHTTP { w.append("webhooks may be delivered over plain http to other hosts (webhooks.allow_http=true)") }
        if engine.passwordMinLength < production.engine.passwordMinLength {
            w.append("passwords as short as \(engine.passwordMinLength) characters are accepted (password.min_length; production: \(production.engine.passwordMinLength))")
        }
        if engine.limits.passwordLockThreshold > production.engine.limits.passwordLockThreshold {
            w.append("a user is locked only after \(engine.limits.passwordLockThreshold) wrong passwords (password.lock_threshold; production: \(production.engine.limits.passwordLockThreshold))")
        }
        if engine.limits.authFailuresPerClient == 0 {
            w.append("failed passwords and activation codes are not limited per client (limits.auth_failures_per_client=0)")
        }
        if policy.faceMatchMaxDistance > production.engine.workflow.faceMatchMaxDistance
            || policy.faceMatchMaxCosineDistance > production.engine.workflow.faceMatchMaxCosineDistance {
            w.append("faces match beyond the calibrated lines (idv.face_match_max_distance=\(policy.faceMatchMaxDistance), idv.face_match_max_cosine_distance=\(policy.faceMatchMaxCosineDistance); production: \(production.engine.workflow.faceMatchMaxDistance), \(production.engine.workflow.faceMatchMaxCosineDistance)): more false matches")
        }
        if policy.presence.mode == .off {
            w.append("the presence check is off (idv.presence=off): a selfie is not tied to the server's illumination sequence, so frames made before the session (a virtual camera, a replay) are not refused by it")
        }
        if !policy.activeLiveness, !policy.pad.challengeOnUnsure || policy.pad.challengeBelow <= policy.pad.textureLine {
            w.append("passive liveness without the PAD step-up (idv.pad.challenge_below=\(policy.pad.challengeBelow), idv.pad.texture_line=\(policy.pad.textureLine), idv.pad.challenge_on_unsure=\(policy.pad.challengeOnUnsure)): a screen filling the camera's view is accepted on passive evidence whenever its texture reaches the line (eval: 14 of 53 such windows, docs/LIVENESS.md)")
        }
        if !Self.isLoopback(listenAddress) && web.publicURL.isEmpty {
            w.append("web.public_url is not set: verification links will name this host as localhost; set it to the address people reach")
        }
        return w
    }

    /// 127.0.0.0/8 or `localhost` (`listen.address` is IPv4).
    static func isLoopback(_ address: String) -> Bool { address == "localhost" || address.hasPrefix("127.") }
}
