import Foundation
import IDVCore
@testable import IDVHTTP
import XCTest

/// ``EnvelopeText`` writes the bytes `JSONEncoder` (`.sortedKeys`, `.withoutEscapingSlashes`) writes
/// for a ``WireEnvelope``, for every field set and unset, or declines: the session routes' fast
/// path must not change a single byte on the wire.
final class EnvelopeTextTests: XCTestCase {
    func encoder(_ e: WireEnvelope) throws -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try enc.encode(e), as: UTF8.self)
    }

    static let sessions: [WireSession?] = [
        nil,
        WireSession(sessionID: "s1", loggedIn: false, idleExpiresAt: 1_700_000_900, absoluteExpiresAt: 1_700_043_200),
        WireSession(token: "tok_en-43/chars", sessionID: "s2", userID: "alice \"A\" é", deviceID: "d/1", loggedIn: true,
                    idleExpiresAt: 0, absoluteExpiresAt: -1),
    ]
    static let status = RequestStatus(statusCode: RequestStatus.unableToProcess, statusMessage: "Unable to process\nline 2")
    static let challenges: [WireChallenge?] = [
        nil,
        WireChallenge(name: WireName.getUser, challengeID: "c1", attemptsLeft: -1),
        WireChallenge(name: WireName.getPassword, challengeID: "c2", challengeMode: 1, idvWorkflow: 6, attemptsLeft: 3, userID: "bob",
                      payload: ["nested": ["list": [1, "two", .null, true]], "k": "v"], error: IDVError(.invalidPassword), status: status),
    ]
    static let events: [WireEvent?] = [
        nil,
        WireEvent(name: WireName.onUserLoggedIn),
        WireEvent(name: WireName.onIDVAdditionalDocumentScan, userID: "carol", error: IDVError(.noDocumentFound, "tab\there"),
                  status: status, payload: ["document": ["fields": ["surname": "ÉRIKSSON 漢字"]]]),
    ]
    static let errors: [IDVError?] = [nil, IDVError(.malformedRequest, "Unknown field x"), IDVError.none]

    func testSameBytesAsJSONEncoderForEveryShape() throws {
        var count = 0
        for s in Self.sessions {
            for c in Self.challenges {
                for v in Self.events {
                    for x in Self.errors {
                        for ended in [nil, Self.events[2]] {
                            let e = WireEnvelope(requestID: "0123456789abcdef0123456789abcdef", session: s, challenge: c, event: v, error: x,
                                                 ended: ended)
                            let fast = try XCTUnwrap(EnvelopeText.encode(e), "\(e)")
                            XCTAssertEqual(String(decoding: fast, as: UTF8.self), try encoder(e))
                            count += 1
                        }
                    }
                }
            }
        }
        XCTAssertEqual(count, 3 * 3 * 3 * 3 * 2)
    }

    /// What the routes answer: ``HTTPResponse/envelope(_:requestID:status:)`` (through
    /// `json(envelope:status:)`) and refusals.
    func testResponsesCarryTheEncoderBytes() throws {
        let r = HTTPResponse.json(envelope: WireEnvelope(requestID: "r1", session: Self.sessions[1], challenge: Self.challenges[1]), status: 201)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self),
                       try encoder(WireEnvelope(requestID: "r1", session: Self.sessions[1], challenge: Self.challenges[1])))
        let refusal = HTTPResponse.refusal(IDVError(.malformedRequest), requestID: "r2")
        XCTAssertEqual(refusal.status, 400)
        XCTAssertEqual(refusal.errorCode, 1001)
        XCTAssertEqual(String(decoding: refusal.body, as: UTF8.self), try encoder(WireEnvelope(requestID: "r2", error: IDVError(.malformedRequest))))
    }

    /// A payload with a fractional number is spelled by `JSONEncoder` (``JSONText`` declines it).
    func testFractionalPayloadFallsBackToTheEncoder() throws {
        let c = WireChallenge(name: "x", challengeID: "c", attemptsLeft: 1, payload: ["score": .number(0.5), "whole": .number(100)])
        let e = WireEnvelope(requestID: "r", challenge: c)
        XCTAssertNil(EnvelopeText.encode(e))
        XCTAssertEqual(String(decoding: HTTPResponse.json(envelope: e, status: 200).body, as: UTF8.self), try encoder(e))
    }
}
