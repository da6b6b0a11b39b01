import Foundation
import IDVCore

/// One verification link (`idvd admin create-link`): single use, expiring, for one user and one
/// flow. The token is stored only as its SHA-256, like session tokens.
public struct VerificationLinkRecord: Sendable, Equatable {
    public var linkID: String
    public var tokenHash: String
    public var userID: String
    /// Registry name of the flow the page runs once the person is logged in (``WireLinks/flows``).
    public var flow: String
    public var createdAt: Int
    public var expiresAt: Int
    /// When the link was redeemed (nil while unused).
    public var usedAt: Int?
    /// The session it started.
    public var sessionID: String?

    public init(linkID: String, tokenHash: String, userID: String, flow: String, createdAt: Int, expiresAt: Int,
                usedAt: Int? = nil, sessionID: String? = nil) {
        self.linkID = linkID
        self.tokenHash = tokenHash
        self.userID = userID
        self.flow = flow
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.sessionID = sessionID
    }
}

/// The store calls of verification links (a ``Store`` that keeps them).
public protocol VerificationLinkStore: Store {
    func createVerificationLink(_ link: VerificationLinkRecord) throws
    func verificationLink(tokenHash: String) throws -> VerificationLinkRecord?
    /// Compare-and-set: marks the link used at `time` if it is still unused; false (nothing
    /// written) when another redemption came first. This is what makes a link single-use across
    /// concurrent requests and processes.
    func consumeVerificationLink(linkID: String, at time: Int) throws -> Bool
    /// Records the session a redeemed link started.
    func bindVerificationLink(linkID: String, sessionID: String) throws
}
