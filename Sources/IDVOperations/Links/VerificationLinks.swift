import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

// Verification links: `idvd admin create-link` and `POST /v1/rp/verifications` issue them,
// `POST /v1/links/redeem` (the hosted page) redeems them.

extension Admin {
    /// What `create-link` prints. The token is shown once (in `token`, `path` and `url`); the
    /// store keeps its SHA-256 only.
    public struct IssuedLink: Codable, Sendable {
        public let linkID: String
        public let userID: String
        public let flow: String
        public let expiresAt: Int
        public let token: String
        /// `/verify/#link=TOKEN`
        public let path: String
        /// ``ServerConfig/webOrigin`` + ``path``.
        public let url: String
        enum CodingKeys: String, CodingKey {
            case linkID = "link_id", userID = "user_id", flow, expiresAt = "expires_at", token, path, url
        }
    }

    /// Creates a single-use verification link for `userID` and `flow` (default: activation for a
    /// user pending activation, KYC for an active one), valid `ttlSeconds` (default
    /// `links.ttl_seconds`; 1 s … 30 days). Audited as `admin.create_link` (link id, flow, expiry).
    /// Throws 1016 unknown user, 1011 locked user, 1025 a flow that is not a link flow, an
    /// activation link for a user who is already active, a post-login link for a user pending
    /// activation, or a lifetime out of range.
    public func createLink(_ userID: String, flow: String? = nil, ttlSeconds: Int? = nil,
                           now: Int = Int(Date().timeIntervalSince1970)) throws -> IssuedLink {
        let ttl = ttlSeconds ?? config.web.linkTTLSeconds
        guard (1...WebSettings.maxLinkTTLSeconds).contains(ttl) else {
            throw IDVError(.invalidArgument, "the link's lifetime (--ttl, expires_in) must be 1…\(WebSettings.maxLinkTTLSeconds) seconds")
        }
        return try store.withTransaction {
            guard let user = try store.user(userID) else { throw IDVError(.userNotFound) }
            if PasswordLockout.isLocked(user, now: now, config.engine.limits) {
                throw IDVError(.userLocked, "user \(userID) is locked after too many wrong passwords; `idvd admin unlock-user` first (docs/LIMITS.md)")
            }
            let chosen = flow ?? (user.state == .pendingActivation ? WireLinks.activationFlow : WireLinks.defaultPostLoginFlow)
            guard WireLinks.flows.contains(chosen) else {
                throw IDVError(.invalidArgument, "the flow (--flow, flow) must be one of \(WireLinks.flows.joined(separator: ", "))")
            }
            if chosen != WireLinks.activationFlow, user.state == .pendingActivation {
                // Post-login flows need a logged-in user: redeeming would only ask for the activation code.
                throw IDVError(.invalidArgument, "user \(userID) is pending activation; a \(chosen) link is for an active user (make an activation link first)")
            }
            if chosen == WireLinks.activationFlow, user.state != .pendingActivation {
                throw IDVError(.invalidArgument, "user \(userID) is already active; an activation link is for a user pending activation")
            }
            let token = crypto.token()
            let rec = VerificationLinkRecord(linkID: crypto.randomID(), tokenHash: crypto.sha256Hex(token), userID: userID, flow: chosen,
                                             createdAt: now, expiresAt: now + ttl)
            try store.createVerificationLink(rec)
            try store.appendAudit(action: "admin.create_link", userID: userID, sessionID: nil,
                                  details: ["link_id": .string(rec.linkID), "flow": .string(chosen), "expires_at": .integer(rec.expiresAt)], at: now)
            let path = "\(IDVWebPaths.prefix)/#\(WireLinks.fragmentKey)=\(token)"
            return IssuedLink(linkID: rec.linkID, userID: userID, flow: chosen, expiresAt: rec.expiresAt, token: token,
                              path: path, url: config.webOrigin + path)
        }
    }
}

/// The page's URL prefix (kept here so the admin command needs no web assets).
enum IDVWebPaths {
    static let prefix = "/verify"
}

/// Redeems verification links over the engine's public session API: one redemption starts a
/// session and answers its `getUser` for the link's user, as a client would.
public struct LinkRedemption: Sendable {
    public let engine: FlowEngine
    public init(engine: FlowEngine) { self.engine = engine }

    /// Redeems a verification link (`POST /v1/links/redeem`): checks it, marks it used
    /// (compare-and-set: of concurrent redemptions exactly one wins), starts a session and answers
    /// its `getUser` with the link's user, so the answer is the next challenge for that user
    /// (`getActivationCode`, or `getPassword` — a link names the user, it does not log them in).
    /// Audits `link.redeemed` (link id, flow) or `link.refused` (link id, reason `used`/`expired`).
    /// Throws 1040 ``IDVErrorCode/linkInvalid`` — unknown, expired or used; nothing changed.
    public func redeem(_ token: String, requestID: String) throws -> WireLinkRedemption {
        let store = engine.store
        guard (16...128).contains(token.count), token.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }),
              let link = try store.verificationLink(tokenHash: engine.crypto.sha256Hex(token)) else {
            throw IDVError(.linkInvalid, "This verification link is not valid")
        }
        let now = engine.clock.now()
        func refuse(_ reason: String, _ message: String) throws -> Never {
            try store.appendAudit(action: "link.refused", userID: link.userID, sessionID: nil,
                                  details: ["link_id": .string(link.linkID), "reason": .string(reason)], at: now)
            throw IDVError(.linkInvalid, message)
        }
        if link.usedAt != nil { try refuse("used", "This verification link was already used") }
        if now >= link.expiresAt { try refuse("expired", "This verification link has expired") }
        guard try store.consumeVerificationLink(linkID: link.linkID, at: now) else { try refuse("used", "This verification link was already used") }
        // Used from here on, whatever happens next: a link opens one session, never two.
        let started = try engine.startSession(WireSessionStart(), requestID: requestID)
        guard let sessionToken = started.session.token, let ask = started.challenge, ask.name == WireName.getUser else {
            throw IDVError(.internalError, "a new session did not ask getUser")
        }
        let answered = try engine.answer(session: engine.authenticate(sessionToken), WireAnswer(to: ask, payload: ["user_id": .string(link.userID)]),
                                         viaUpload: false, requestID: requestID)
        try store.bindVerificationLink(linkID: link.linkID, sessionID: started.session.sessionID)
        try store.appendAudit(action: "link.redeemed", userID: link.userID, sessionID: started.session.sessionID,
                              details: ["link_id": .string(link.linkID), "flow": .string(link.flow)], at: now)
        var session = answered.session
        session.token = sessionToken
        return WireLinkRedemption(envelope: WireEnvelope(requestID: requestID, session: session, challenge: answered.challenge, event: answered.event),
                                  link: WireLinkInfo(userID: link.userID, flow: link.flow, expiresAt: link.expiresAt))
    }
}
