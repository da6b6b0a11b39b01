import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import XCTest

/// ``SessionFlowState/jsonValue`` is the synthesized `Encodable`'s value for every field set and
/// unset, and a state sealed through it opens to the same state (``SessionStateSealer``).
final class SessionStateJSONTests: XCTestCase {
    static let specs: [ChallengeSpec] = [
        ChallengeSpec(name: WireName.getUser, attemptsLeft: -1, payload: .emptyObject),
        ChallengeSpec(name: WireName.getPassword, mode: 1, workflow: 6, attemptsLeft: 3, userID: "bob \"B\" é",
                      payload: ["nested": ["a": [1, "two", .null, true]]], error: IDVError(.invalidPassword, "tab\tline\nquote\""),
                      status: RequestStatus(statusCode: 400, statusMessage: "Unable")),
    ]

    static var states: [SessionFlowState] {
        var out = [SessionFlowState()]
        for spec in specs {
            for userID in [nil, "carol"] {
                let c = PendingChallenge(challengeID: "c1", spec: spec, userID: userID)
                out.append(SessionFlowState(stack: [], challenge: c))
                out.append(SessionFlowState(stack: [FlowFrame(flow: FlowName.auth, runID: "r1", state: ["user": .emptyObject]),
                                                    FlowFrame(flow: FlowName.kyc, runID: "r2", state: .null)], challenge: c))
            }
        }
        return out
    }

    func testSameValueAsTheSynthesizedEncoding() throws {
        for s in Self.states {
            XCTAssertEqual(s.jsonValue, try JSONValue(encoding: s), "\(s)")
            let text = try XCTUnwrap(JSONText.encode(s.jsonValue))
            XCTAssertEqual(try JSONDecoder().decode(SessionFlowState.self, from: text), s)
        }
    }

    func testSealedThroughItOpensToTheSameState() throws {
        let sealer = try SessionStateSealer(masterKey: TemplateVault(key: Crypto.randomBytes(32)))
        var states = Self.states
        // A fractional number: JSONText declines, the sealer falls back to JSONEncoder.
        states.append(SessionFlowState(stack: [FlowFrame(flow: "f", runID: "r", state: ["score": .number(0.25)])]))
        for s in states {
            XCTAssertEqual(try sealer.open(try sealer.seal(s, sessionID: "s1"), sessionID: "s1"), s)
        }
    }
}
