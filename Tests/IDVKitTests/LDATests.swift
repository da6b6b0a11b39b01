import Foundation
import IDVKit
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVStoreSQLite
import XCTest
import IDVTestSupport

/// A presence check the test controls (approve or decline) that records every purpose it was asked for.
final class TestPresence: @unchecked Sendable {
    private let lock = NSLock()
    private var approve: Bool
    private var asked: [LDAPurpose] = []
    init(approve: Bool = true) { self.approve = approve }
    func set(_ approve: Bool) { lock.withLock { self.approve = approve } }
    var purposes: [LDAPurpose] { lock.withLock { asked } }
    func check(_ p: LDAPurpose) -> Bool { lock.withLock { asked.append(p); return approve } }
}

/// LDA (device key + user presence) through IDVKit against a real `idvd`: enrolment at activation,
/// login by device signature, declined presence → password, key-file permissions, a key the server
/// did not register (1023), missing libsodium → password, seed 004 re-authentication by LDA.
final class LDATests: XCTestCase {
    let password = "Lda password 42"

    func provider(_ dir: URL, _ presence: TestPresence, name: String = "device.key", library: String = "libsodium.so.23") -> FileLDAProvider {
        FileLDAProvider(keyFile: dir.appendingPathComponent("keys").appendingPathComponent(name), library: library) { presence.check($0) }
    }

    func mode(_ url: URL) throws -> Int {
        try XCTUnwrap((FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    /// Activation with LDA enrolment: user → code → password → getUserConsentForLDA → consent(true) → logged in on a device.
    func activateWithLDA(_ server: IDVDServer, _ user: String, _ lda: any LDAProvider) async throws -> RDNA {
        let code = try server.createUser(user)
        let sdk = RDNA()
        sdk.setLDAProvider(lda)
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 60))
        _ = try await api.setUser(user)
        _ = try await api.setActivationCode(code)
        var ev = try await api.setPassword(password, challengeMode: .set)
        guard case .getUserConsentForLDA(user, _)? = ev.last else { XCTFail("\(ev.map(\.name))"); return sdk }
        ev = try await api.setUserConsentForLDA(true)
        guard case let .onUserLoggedIn(u, _, device)? = ev.last else { XCTFail("\(ev.map(\.name))"); return sdk }
        XCTAssertEqual(u, user)
        XCTAssertEqual(device, lda.registeredDeviceID(server: server.url))
        XCTAssertNotNil(device)
        return sdk
    }

    /// Log off, then `setUser` again on the fresh session; returns the events of `setUser`.
    func logOffAndSetUser(_ sdk: RDNA, _ user: String) async throws -> [RDNAEvent] {
        let ev = try await sdk.asyncAPI.logOff(user)
        XCTAssertEqual(ev.map(\.name), ["onUserLoggedOff", "getUser"])
        return try await sdk.asyncAPI.setUser(user)
    }

    func testSignatureVerifiesWithLibsodiumAndKeyFileIs0600() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lda-unit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let presence = TestPresence()
        let p = provider(dir, presence)
        let pk = try p.publicKey()
        XCTAssertEqual(pk.count, 32)
        XCTAssertEqual(try mode(p.keyFile), 0o600)
        XCTAssertEqual(try Data(contentsOf: p.keyFile).suffix(32), pk)
        let msg = WireLDA.message(challengeID: "0123456789abcdef0123456789abcdef", nonce: "bm9uY2U=")
        let sig = try p.sign(message: msg, purpose: .login)
        XCTAssertEqual(sig.count, 64)
        XCTAssertTrue(Crypto.verifyEd25519(signature: Array(sig), message: Array(msg), publicKey: Array(pk)))
        XCTAssertFalse(Crypto.verifyEd25519(signature: Array(sig), message: Array(msg + [0x21]), publicKey: Array(pk)))
        XCTAssertEqual(presence.purposes, [.login])
        // The same file gives the same key to a second provider (persistence).
        XCTAssertEqual(try provider(dir, presence).publicKey(), pk)
        XCTAssertEqual(try p.keyID(), pk.prefix(8).map { String(format: "%02x", $0) }.joined())
        // Declined presence: no signature.
        presence.set(false)
        XCTAssertThrowsError(try p.sign(message: msg, purpose: .login)) { XCTAssertEqual($0 as? LDAError, .userCancelled) }
        XCTAssertEqual(LDAError.userCancelled.sdkError.longErrorCode, 240)
        // A truncated key file is refused with its size.
        let bad = dir.appendingPathComponent("keys/short.key")
        XCTAssertEqual(FileManager.default.createFile(atPath: bad.path, contents: Data(repeating: 7, count: 40), attributes: [.posixPermissions: 0o600]), true)
        XCTAssertThrowsError(try FileLDAProvider(keyFile: bad) { _ in true }.publicKey()) {
            XCTAssertEqual($0 as? LDAError, .keyFileInvalid("short.key has 40 bytes, not 64"))
        }
        // A key whose public half was altered is refused before signing.
        var altered = try Data(contentsOf: p.keyFile)
        altered[40] ^= 0x01
        let alteredURL = dir.appendingPathComponent("keys/altered.key")
        try LDAKeyFile.create(alteredURL, bytes: altered)
        XCTAssertThrowsError(try FileLDAProvider(keyFile: alteredURL) { _ in true }.sign(message: msg, purpose: .login)) {
            XCTAssertEqual($0 as? LDAError, .keyFileInvalid("its public half does not belong to its seed"))
        }
        // Creating never overwrites an existing key.
        XCTAssertThrowsError(try LDAKeyFile.create(p.keyFile, bytes: altered))
        XCTAssertEqual(try Data(contentsOf: p.keyFile).suffix(32), pk)
    }

    func testKeyFileWithMode0644IsRefused() async throws {
        let server = try IDVDServer()
        try server.start()
        let presence = TestPresence()
        let p = provider(server.dir, presence)
        _ = try p.publicKey()
        XCTAssertEqual(chmod(p.keyFile.path, 0o644), 0)
        XCTAssertThrowsError(try p.publicKey()) { XCTAssertEqual($0 as? LDAError, .keyFilePermissions(path: p.keyFile.path, mode: 0o644)) }
        XCTAssertThrowsError(try p.sign(message: Data("m".utf8), purpose: .login)) {
            XCTAssertEqual($0 as? LDAError, .keyFilePermissions(path: p.keyFile.path, mode: 0o644))
            XCTAssertTrue("\($0)".contains("has mode 644; it must be 600"), "\($0)")
        }
        XCTAssertEqual(presence.purposes, [], "no presence prompt for an unusable key")

        // The SDK registers no device with it: activation ends without the LDA consent question.
        let code = try server.createUser("olga")
        let sdk = RDNA()
        sdk.setLDAProvider(p)
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 60))
        XCTAssertEqual(sdk.lastLDAError, .keyFilePermissions(path: p.keyFile.path, mode: 0o644))
        _ = try await api.setUser("olga")
        _ = try await api.setActivationCode(code)
        let ev = try await api.setPassword(password, challengeMode: .set)
        guard case let .onUserLoggedIn(_, _, device)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertNil(device)
        XCTAssertNil(p.registeredDeviceID(server: server.url))
        XCTAssertEqual(sdk.setUserConsentForLDA(true).longErrorCode, 1025)
    }

    func testEnrolAtActivationThenLoginByDeviceSignatureWithoutPassword() async throws {
        let server = try IDVDServer()
        try server.start()
        let presence = TestPresence()
        let p = provider(server.dir, presence)
        let sdk = try await activateWithLDA(server, "lena", p)
        XCTAssertEqual(try mode(p.keyFile), 0o600)
        XCTAssertEqual(try mode(LDAKeyFile.registrationsFile(p.keyFile)), 0o600)
        XCTAssertEqual(presence.purposes, [.enrol])
        let device = p.registeredDeviceID(server: server.url)

        // Login on a fresh session: getDeviceSignature is answered by the SDK, no getPassword.
        let ev = try await logOffAndSetUser(sdk, "lena")
        XCTAssertEqual(ev.map(\.name), ["onUserLoggedIn"])
        guard case let .onUserLoggedIn("lena", _, d)? = ev.last else { return XCTFail("\(ev)") }
        XCTAssertEqual(d, device)
        XCTAssertEqual(presence.purposes, [.enrol, .login])
        XCTAssertNil(sdk.lastLDAError)

        // A new SDK instance (an app restart) with the same key file: same device, LDA login.
        let sdk2 = RDNA()
        sdk2.setLDAProvider(provider(server.dir, presence))
        _ = try await sdk2.asyncAPI.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 60))
        let ev2 = try await sdk2.asyncAPI.setUser("lena")
        XCTAssertEqual(ev2.map(\.name), ["onUserLoggedIn"])
        XCTAssertEqual(presence.purposes, [.enrol, .login, .login])
    }

    func testDeclinedPresenceAndMissingLibsodiumFallBackToPassword() async throws {
        let server = try IDVDServer()
        try server.start()
        let presence = TestPresence()
        let sdk = try await activateWithLDA(server, "mira", provider(server.dir, presence))

        presence.set(false)
        var ev = try await logOffAndSetUser(sdk, "mira")
        guard case let .getPassword("mira", .verify, left, _, e)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(ev.map(\.name), ["getPassword"])
        XCTAssertEqual([e.longErrorCode, left], [0, 3])
        XCTAssertEqual(sdk.lastLDAError, .userCancelled)
        ev = try await sdk.asyncAPI.setPassword(password, challengeMode: .verify)
        XCTAssertEqual(ev.last?.name, "onUserLoggedIn")

        // libsodium cannot be loaded: the device id is still sent (public key from the file), and
        // the signature step falls back to the password without asking for presence.
        presence.set(true)
        let before = presence.purposes.count
        let sdk2 = RDNA()
        sdk2.setLDAProvider(provider(server.dir, presence, library: "libsodium-missing.so.0"))
        _ = try await sdk2.asyncAPI.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 60))
        ev = try await sdk2.asyncAPI.setUser("mira")
        XCTAssertEqual(ev.map(\.name), ["getPassword"])
        XCTAssertEqual(sdk2.lastLDAError, .notAvailable("libsodium-missing.so.0 cannot be loaded (install the libsodium23 package)"))
        XCTAssertEqual(presence.purposes.count, before)
        ev = try await sdk2.asyncAPI.setPassword(password, challengeMode: .verify)
        XCTAssertEqual(ev.last?.name, "onUserLoggedIn")
    }

    func testDeclinedEnrolmentKeepsTheConsentOpenAndUnknownStoredDeviceIsRegisteredAgain() async throws {
        let server = try IDVDServer()
        try server.start()
        let presence = TestPresence(approve: false)
        let p = provider(server.dir, presence)
        // A device id this server never issued (e.g. its database was reset): registered again.
        try p.saveRegisteredDeviceID("00000000000000000000000000000000", server: server.url)
        let code = try server.createUser("pia")
        let sdk = RDNA()
        sdk.setLDAProvider(p)
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 60))
        let device = try XCTUnwrap(p.registeredDeviceID(server: server.url))
        XCTAssertNotEqual(device, "00000000000000000000000000000000")
        _ = try await api.setUser("pia")
        _ = try await api.setActivationCode(code)
        var ev = try await api.setPassword(password, challengeMode: .set)
        guard case .getUserConsentForLDA? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        // The user declines the presence prompt: 240, nothing sent, the consent question stays open
        // and is asked again.
        ev = try await api.setUserConsentForLDA(true)
        guard case let .onRequestFailed("setUserConsentForLDA", e)? = ev.first else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(e.longErrorCode, 240)
        XCTAssertEqual(ev.map(\.name), ["onRequestFailed", "getUserConsentForLDA"])
        XCTAssertEqual(sdk.currentChallenge?.name, "getUserConsentForLDA")
        ev = try await api.setUserConsentForLDA(false)
        guard case let .onUserLoggedIn("pia", _, d)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(d, device)
        // LDA was not enabled, so the next login asks the password without a presence prompt.
        ev = try await logOffAndSetUser(sdk, "pia")
        guard case .getPassword("pia", .verify, _, _, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(presence.purposes, [.enrol])
    }

    func testKeyOtherThanTheRegisteredOneIsRefusedWith1023() async throws {
        let server = try IDVDServer()
        try server.start()
        let presence = TestPresence()
        let p = provider(server.dir, presence)
        let sdk = try await activateWithLDA(server, "nora", p)
        let registered = try p.publicKey()

        // Replace the key file with another valid key (same registrations file, same device id).
        let other = provider(server.dir, presence, name: "other.key")
        let otherKey = try other.publicKey()
        XCTAssertNotEqual(otherKey, registered)
        let bytes = try Data(contentsOf: other.keyFile)
        try FileManager.default.removeItem(at: p.keyFile)
        try LDAKeyFile.create(p.keyFile, bytes: bytes)
        XCTAssertEqual(try p.publicKey(), otherKey)

        var ev = try await logOffAndSetUser(sdk, "nora")
        guard case let .getPassword("nora", .verify, _, r, e)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(e.longErrorCode, 1023)
        XCTAssertEqual(r.status.statusCode, 400, "the server's status with an error: unable to process")
        XCTAssertEqual(presence.purposes, [.enrol, .login], "the user approved; the server refused the signature")
        ev = try await sdk.asyncAPI.setPassword(password, challengeMode: .verify)
        XCTAssertEqual(ev.last?.name, "onUserLoggedIn")
    }

    /// Seed 004: opt-in and opt-out re-authenticated by LDA (no getPassword); a declined presence
    /// prompt on opt-out falls back to getPassword mode 7. Needs the workflow engine and FaceKit.
    func testBiometricOptInAndOptOutReauthenticatedByLDA() async throws {
        let server = try IDVDServer()
        try server.start()
        let presence = TestPresence()
        let sdk = try await activateWithLDA(server, "katie", provider(server.dir, presence))
        sdk.setSelfieCaptureProvider(FrameFolderSelfieCapture(folder: Paths.fixtures.appendingPathComponent("katie_live")))
        let api = sdk.asyncAPI

        var ev = try await api.initiateIDVBiometricOptIn()
        if case let .onRequestFailed(_, e)? = ev.last, [1007, 1033].contains(e.longErrorCode) {
            throw TestData.missing("this idvd does not offer the opt-in flow (\(e.longErrorCode))")
        }
        XCTAssertFalse(ev.contains { $0.name == "getPassword" }, "\(ev.map(\.name))")
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginOptIn))
        XCTAssertEqual(presence.purposes, [.enrol, .reauthentication])
        ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        guard case .onIDVOptInCapturedFrameConfirmation? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        ev = try await api.setIDVBiometricOptInConfirmation(.approved)
        guard case let .onIDVBiometricOptInStatus(_, _, ins, _, ine)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual([ine.longErrorCode, ins.code], [0, 100])

        // Opt-out with a declined presence prompt: password (mode 7) instead; then cancel by reset.
        presence.set(false)
        ev = try await api.initiateIDVBiometricOptOut()
        guard case .getPassword(_, .biometricOptOut, _, _, let pe)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(pe.longErrorCode, 0)
        XCTAssertEqual(sdk.lastLDAError, .userCancelled)
        ev = try await api.resetAuthState()
        XCTAssertEqual(ev.last?.name, "onAuthStateReset")

        // Opt-out by LDA: signature, no getPassword, status 100; the template is gone (600).
        presence.set(true)
        ev = try await api.initiateIDVBiometricOptOut()
        XCTAssertFalse(ev.contains { $0.name == "getPassword" }, "\(ev.map(\.name))")
        guard case let .onIDVBiometricOptOutStatus(_, _, os, _, oe)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual([oe.longErrorCode, os.code], [0, 100])
        XCTAssertEqual(presence.purposes, [.enrol, .reauthentication, .reauthentication, .reauthentication])
        ev = try await api.checkIDVUserBiometricTemplateStatus()
        guard case let .onIDVCheckUserBiometricTemplateStatus(_, _, ts, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(ts.statusCode, 600)
    }
}
