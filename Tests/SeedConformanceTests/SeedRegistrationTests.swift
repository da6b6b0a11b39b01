import Foundation
@testable import IDVKit
import RELID
@testable import SeedApp
import XCTest

/// The codelabs' delegate-registration and SDK set-up snippets (Tests/SeedApp/Seeds/SeedRegistration.swift),
/// run unchanged: IDVKit calls each spelling of `onInitialized` the seeds implement, and their
/// registrations take effect.
final class SeedRegistrationTests: SeedTestCase {
    var delegates: DelegateSet { RDNA.sharedInstance().registeredDelegates }

    func assertRegistered(document: Bool, selfie: Bool, biometric: Bool, kyc: Bool, file: StaticString = #filePath, line: UInt = #line) {
        let m = RDNAIDVDelegateManager.shared
        XCTAssertEqual(delegates.document === m, document, "document", file: file, line: line)
        XCTAssertEqual(delegates.selfie === m, selfie, "selfie", file: file, line: line)
        XCTAssertEqual(delegates.biometric === m, biometric, "biometric", file: file, line: line)
        XCTAssertEqual(delegates.kyc === m, kyc, "KYC", file: file, line: line)
    }

    /// Seed 002 L1528-L1541 in `onInitialized` (the closure of the earlier codelabs'
    /// RDNADelegateManager, which implements seed 001's `onInitialized(_ response:)` spelling).
    func testSeed002OnInitializedClosureRegistersTheFourDelegates() {
        assertRegistered(document: false, selfie: false, biometric: false, kyc: false)
        boot()
        assertRegistered(document: true, selfie: true, biometric: true, kyc: true)
    }

    /// Seed 002's two shorter forms of the same registration (L1235, L3710).
    func testSeed002ShortRegistrationForms() {
        for snippet in [seed002RegistrationPatternSnippet, seed002TroubleshootingSnippet] {
            CodelabApp.reset()
            app = CodelabApp()
            snippet()
            XCTAssertEqual(RDNAService.shared.initialize(relid: "openidv-seed-tests", host: server.host, port: server.port).longErrorCode, 0)
            guard case .getUser? = app.expect("getUser") else { return }
            assertRegistered(document: true, selfie: true, biometric: true, kyc: true)
        }
    }

    /// Seed 001 L472: the core callback spelled `onInitialized(_ response: RDNAChallengeResponse)`
    /// registers the biometric delegate (after `setIDVCallback()`). That handler implements no
    /// `getUser`, so the SDK reports it (1034) instead of leaving the app waiting.
    func testSeed001OnInitializedResponseSpelling() {
        let handler = Seed001InitializedHandler()
        let mark = SDKEventTap.shared.count
        let lines = LogLines()
        RDNA.sharedInstance().setLogHandler { lines.append($0) }
        RDNA.sharedInstance().setCallbacks(handler)
        XCTAssertEqual(seed003InitializeSnippet(relid: "openidv-seed-tests", host: server.host, port: server.port).longErrorCode, 0)
        XCTAssertTrue(pumpMain(timeout: 30) { delegates.biometric === RDNAIDVDelegateManager.shared }, "seed 001's onInitialized did not run")
        assertRegistered(document: false, selfie: false, biometric: true, kyc: false)
        XCTAssertTrue(pumpMain(timeout: 30) { SDKEventTap.shared.failures(since: mark).contains { $0 == ("getUser", 1034) } },
                      "\(SDKEventTap.shared.failures(since: mark))")
        XCTAssertTrue(pumpMain(timeout: 5) { lines.contains("getUser arrived but the app implements none of getUser(_:error:)") }, "\(lines.all)")
        withExtendedLifetime(handler) {}
    }

    /// Seed 003 L1722: the core callback spelled `onInitialized()` registers the document delegate;
    /// seed 003 L287-L294 initialise and initiate through the unlabelled seed API; L316 registers
    /// the document delegate on `rdna` directly.
    func testSeed003OnInitializedWithoutArgumentAndSetUpSnippets() throws {
        let handler = Seed003InitializedHandler()
        RDNA.sharedInstance().setCallbacks(handler)
        XCTAssertEqual(seed003InitializeSnippet(relid: "openidv-seed-tests", host: server.host, port: server.port).longErrorCode, 0)
        XCTAssertTrue(pumpMain(timeout: 30) { delegates.document === RDNAIDVDelegateManager.shared }, "seed 003's onInitialized() did not run")
        assertRegistered(document: true, selfie: false, biometric: false, kyc: false)
        withExtendedLifetime(handler) {}

        // Host validation of initialize(relid, host:, port:).
        XCTAssertEqual(seed003InitializeSnippet(relid: "x", host: "", port: server.port).longErrorCode, 1025)
        XCTAssertEqual(seed003InitializeSnippet(relid: "x", host: "ftp://127.0.0.1", port: server.port).longErrorCode, 1025)
        XCTAssertEqual(seed003InitializeSnippet(relid: "x", host: "127.0.0.1", port: 0).longErrorCode, 1025)

        // Log in, then the snippets' initiate (no argument label) runs the document-only flow.
        try activate("katie")
        RDNA.sharedInstance().setIDVDocumentProcessingDelegate(nil)
        seed003RegisterSnippet(rdna: RDNA.sharedInstance())
        XCTAssertTrue(delegates.document === RDNAIDVDelegateManager.shared)
        XCTAssertEqual(seed003InitiateSnippet(rdna: RDNA.sharedInstance(), reason: "Additional Document Verification").longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_DOC_SCAN_ONLY)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
    }

    /// Seed 004 L965: registerIDVDelegates() registers the biometric and selfie delegates.
    func testSeed004RegisterIDVDelegates() {
        registerIDVDelegates()
        assertRegistered(document: false, selfie: true, biometric: true, kyc: false)
    }
}

/// The committed seed files are exactly what the seeds give (scripts/extract-seed-swift --check):
/// a changed seed, manifest or generated file fails here.
final class SeedExtractionTests: XCTestCase {
    func testCommittedSeedFilesMatchTheSeeds() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", Paths.packageRoot.appendingPathComponent("scripts/extract-seed-swift").path, "--check"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        if p.terminationStatus == 2 { throw Paths.missing("the seeds are not there: \(text)") }
        XCTAssertEqual(p.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("match the seeds"), text)
    }

    /// The check can fail: a generated file that differs from the seeds by one character is caught.
    func testTheCheckCatchesADriftedFile() throws {
        let file = Paths.packageRoot.appendingPathComponent("Tests/SeedApp/Seeds/RDNAIDVService.swift")
        let original = try Data(contentsOf: file)
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("seed-drift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy.appendingPathComponent("scripts"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: copy.appendingPathComponent("Tests"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copy) }
        for f in ["scripts/extract-seed-swift", "scripts/seed-swift.manifest", "Tests/SeedApp", "Tests/SeedScreens"] {
            try FileManager.default.copyItem(at: Paths.packageRoot.appendingPathComponent(f), to: copy.appendingPathComponent(f))
        }
        var drifted = String(decoding: original, as: UTF8.self)
        drifted = drifted.replacingOccurrences(of: "rdna.initiateActivatedCustomerKYC(reason)", with: "rdna.initiateActivatedCustomerKYC(reason: reason)")
        try Data(drifted.utf8).write(to: copy.appendingPathComponent("Tests/SeedApp/Seeds/RDNAIDVService.swift"))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", copy.appendingPathComponent("scripts/extract-seed-swift").path, "--check"]
        var env = ProcessInfo.processInfo.environment
        env["IDV_SEEDS_DIR"] = Paths.packageRoot.appendingPathComponent("../shared/seeds").standardized.path
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        if p.terminationStatus == 2 { throw Paths.missing("the seeds are not there: \(text)") }
        XCTAssertEqual(p.terminationStatus, 1, text)
        XCTAssertTrue(text.contains("-        let error = rdna.initiateActivatedCustomerKYC(reason: reason)"), text)
        XCTAssertTrue(text.contains("+        let error = rdna.initiateActivatedCustomerKYC(reason)"), text)
    }
}
