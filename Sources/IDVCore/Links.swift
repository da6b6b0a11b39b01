import Foundation

/// Verification links: how a relying party sends a person to the hosted page (`/verify/`).
///
/// An operator creates a link for a known user and one flow (`idvd admin create-link USER
/// [--flow NAME] [--ttl S]`); the person opens `https://HOST/verify/#link=TOKEN` on their phone; the
/// page redeems the token with `POST /v1/links/redeem`, which starts a session for that user (the
/// server answers `getUser` with the link's user) and returns the next challenge — the activation
/// code for a pending user, the password for an active one. A link works once, until it expires;
/// it names the user, it does not authenticate them. The token travels in the URL fragment, which
/// browsers never send to a server or in a `Referer`.
public enum WireLinks {
    /// `POST /v1/links/redeem`.
    public static let redeemPath = "/v1/links/redeem"
    /// The fragment key of the page URL: `/verify/#link=TOKEN`.
    public static let fragmentKey = "link"
    /// The flow a link names when none is given: activation for a user pending activation,
    /// post-login KYC for an active one (``FlowName``, docs/WORKFLOWS.md).
    public static let activationFlow = FlowName.activation
    public static let defaultPostLoginFlow = FlowName.kyc
    /// Flows a link may name: activation (with IDV when the user's activation requires it) and
    /// every client-startable post-login flow of the IDV workflow engine.
    public static let flows = [
        FlowName.activation, FlowName.kyc, FlowName.documentScan, FlowName.serverBiometric,
        FlowName.optIn, FlowName.optOut, FlowName.templateStatus,
    ]
}

/// Body of `POST /v1/links/redeem`.
public struct WireLinkRedeem: Codable, Equatable, Sendable {
    /// The token from the link (43 base64url characters).
    public var link: String
    public init(link: String) { self.link = link }
}

/// What the page learns about the link it redeemed (never the token).
public struct WireLinkInfo: Codable, Equatable, Sendable {
    public var userID: String
    /// The flow to run once the person is logged in (``WireLinks/flows``).
    public var flow: String
    /// Unix seconds.
    public var expiresAt: Int
    enum CodingKeys: String, CodingKey { case userID = "user_id", flow, expiresAt = "expires_at" }
    public init(userID: String, flow: String, expiresAt: Int) { self.userID = userID; self.flow = flow; self.expiresAt = expiresAt }
}

/// Answer of `POST /v1/links/redeem` (201): a ``WireEnvelope`` for the new session — the token,
/// only here — plus the link's ``WireLinkInfo``. A refusal is a plain envelope with `error`
/// (1040 `linkInvalid`: unknown, expired or used; nothing changed).
public struct WireLinkRedemption: Codable, Equatable, Sendable {
    public var requestID: String
    public var session: WireSession?
    public var challenge: WireChallenge?
    public var event: WireEvent?
    public var error: IDVError?
    public var link: WireLinkInfo?
    enum CodingKeys: String, CodingKey { case requestID = "request_id", session, challenge, event, error, link }
    public init(envelope e: WireEnvelope, link: WireLinkInfo) {
        requestID = e.requestID
        session = e.session
        challenge = e.challenge
        event = e.event
        error = e.error
        self.link = link
    }
}
