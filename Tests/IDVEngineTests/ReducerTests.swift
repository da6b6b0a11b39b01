import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import XCTest

/// Flows are pure reducers: (state, input, evidence, facts) → (state′, [Effect]). These tests call
/// them directly — no store, no HTTP, no clock but the facts' — and check the effects they ask for.
final class ReducerTests: XCTestCase {
    let flow = AuthFlow()
    let session = SessionFacts(sessionID: "s1", userID: "ada", deviceID: nil, loggedIn: false, absoluteExpiresAt: 10_000)

    func env(_ settings: EngineSettings = EngineSettings()) -> FlowEnv {
        FlowEnv(settings: settings, activationIDV: [:], crypto: Sodium(), runID: "run1", requestID: "req1")
    }

    func user(failed: Int = 0) -> UserRecord {
        UserRecord(userID: "ada", state: .active, activationRequiresIDV: false, passwordHash: "$argon2id$…", failedPasswordAttempts: failed,
                   createdAt: 1, updatedAt: 1)
    }

    func checked(_ matches: Bool) -> Evidence {
        var e = Evidence()
        e.passwordMatches = matches
        return e
    }

    func testAWrongPasswordIsCountedAndAskedAgain() throws {
        let facts = Facts(now: 500, session: session, user: user())
        let t = try flow.reduce(.verifyPassword(userID: "ada"), input: .password("nope"), evidence: checked(false), facts: facts, env: env())
        guard case let .ask(state, spec) = t.step else { return XCTFail("\(t.step)") }
        XCTAssertEqual(state, .verifyPassword(userID: "ada"))
        XCTAssertEqual(spec.name, WireName.getPassword)
        XCTAssertEqual(spec.error?.longErrorCode, IDVErrorCode.invalidPassword.rawValue)
        XCTAssertEqual(spec.attemptsLeft, 2)
        var saved = user(failed: 1)
        saved.updatedAt = 500
        XCTAssertEqual(t.effects, [.saveUser(saved), .credentialFailed(.password, userID: "ada"),
                                   .audit(AuditAction("password.wrong"), userID: "ada", details: ["attempts_left": 2])])
    }

    /// The client's `password.attempts`-th wrong password: the client backs off for the user (the
    /// user stays active); at `password.lock_threshold` wrong passwords in all the user locks.
    func testTheLastWrongPasswordOfAClientBacksItOffAndTheThresholdLocksTheUser() throws {
        var facts = Facts(now: 500, session: session, user: user(failed: 2))
        facts.client.passwordFailures = 2
        let t = try flow.reduce(.verifyPassword(userID: "ada"), input: .password("nope"), evidence: checked(false), facts: facts, env: env())
        guard case let .ask(state, spec) = t.step else { return XCTFail("\(t.step)") }
        XCTAssertEqual(state, .user)
        XCTAssertEqual(spec.error?.longErrorCode, IDVErrorCode.userLocked.rawValue)
        guard case let .saveUser(counted) = t.effects.first else { return XCTFail("\(t.effects)") }
        XCTAssertEqual(counted.state, .active)
        XCTAssertEqual(counted.failedPasswordAttempts, 3)
        XCTAssertTrue(t.effects.contains(.credentialFailed(.password, userID: "ada")))
        XCTAssertTrue(t.effects.contains(.countOutcome(flow: "auth", outcome: .backedOff)))
        XCTAssertEqual(t.effects.last, .setSessionUser(nil))

        facts.user = user(failed: EngineSettings().limits.passwordLockThreshold - 1)
        facts.client.passwordFailures = 0
        let l = try flow.reduce(.verifyPassword(userID: "ada"), input: .password("nope"), evidence: checked(false), facts: facts, env: env())
        guard case let .saveUser(locked) = l.effects.first else { return XCTFail("\(l.effects)") }
        XCTAssertEqual(locked.state, .locked)
        XCTAssertEqual(locked.lockedAt, 500)
        XCTAssertEqual(PasswordLockout.lockedUntil(locked, EngineSettings().limits), 500 + EngineSettings().limits.passwordLockSeconds)
        XCTAssertTrue(l.effects.contains(.countOutcome(flow: "auth", outcome: .locked)))
    }

    func testTheRightPasswordLogsInAndResetsTheCounter() throws {
        let facts = Facts(now: 500, session: session, user: user(failed: 1))
        let t = try flow.reduce(.verifyPassword(userID: "ada"), input: .password("right"), evidence: checked(true), facts: facts, env: env())
        guard case let .finish(result) = t.step else { return XCTFail("\(t.step)") }
        XCTAssertEqual(result.outcome, .loggedIn)
        XCTAssertEqual(result.event?.name, WireName.onUserLoggedIn)
        XCTAssertEqual(result.event?.payload["session_id"], "s1")
        var reset = user()
        reset.updatedAt = 500
        XCTAssertEqual(t.effects, [.saveUser(reset), .credentialSucceeded(.password, userID: "ada"), .logIn(userID: "ada")])
    }

    /// The evidence request is decided before any facts: a new password that breaks the policy is
    /// not hashed (no Argon2id for an answer that is refused anyway).
    func testOnlyAPolicyConformingNewPasswordIsHashed() {
        var settings = EngineSettings()
        settings.passwordMinLength = 12
        guard case .passwordHash = flow.evidence(.setPassword(userID: "ada"), input: .password("long enough 123"), settings: settings) else {
            return XCTFail("a good password is hashed")
        }
        guard case .none = flow.evidence(.setPassword(userID: "ada"), input: .password("short 1"), settings: settings) else {
            return XCTFail("a short password is not")
        }
        guard case .passwordCheck = flow.evidence(.verifyPassword(userID: "ada"), input: .password("x"), settings: settings) else {
            return XCTFail("a login password is checked")
        }
    }

    /// Evidence rests on facts: when the template or the password hash changed after it was
    /// measured, the engine measures again instead of using it.
    func testEvidenceBasisDetectsAChangedTemplateOrHash() {
        var basis = EvidenceBasis()
        basis.dependsOnTemplate = true
        basis.templateDigest = "aa"
        let t = TemplateFacts(model: "m", consentID: "c", createdAt: 1, digest: "aa")
        XCTAssertTrue(basis.holds(in: Facts(now: 0, session: session, template: t)))
        var replaced = t
        replaced.digest = "bb"
        XCTAssertFalse(basis.holds(in: Facts(now: 0, session: session, template: replaced)))
        XCTAssertFalse(basis.holds(in: Facts(now: 0, session: session)))
        var pw = EvidenceBasis()
        pw.dependsOnPassword = true
        pw.passwordHash = "$argon2id$…"
        XCTAssertTrue(pw.holds(in: Facts(now: 0, session: session, user: user())))
        var changed = user()
        changed.passwordHash = "$argon2id$other"
        XCTAssertFalse(pw.holds(in: Facts(now: 0, session: session, user: changed)))
    }

    func testManualClockMovesOnlyWhenTold() {
        let c = ManualClock(1000)
        XCTAssertEqual(c.now(), 1000)
        c.advance(by: 90)
        XCTAssertEqual(c.now(), 1090)
        c.set(5)
        XCTAssertEqual(c.now(), 5)
    }
}
