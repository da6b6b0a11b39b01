import Foundation
import IDVEngine
import IDVRuntime
import XCTest

/// `idvd serve` names every setting that is not for production at start (#38): the production
/// configuration names none, each test-deployment setting exactly its own sentence.
final class NonProductionSettingsTests: XCTestCase {
    static let productionFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/idvd.production.json").path

    func testTheProductionConfigurationNamesNothing() throws {
        let production = try ServerConfig.load(file: Self.productionFile, environment: [:])
        XCTAssertEqual(production.nonProductionWarnings, [])
    }

    func testEachTestSettingIsNamed() throws {
        func warnings(_ settings: [String: String]) throws -> [String] {
            try ServerConfig.load(file: Self.productionFile, environment: [:], overrides: settings).nonProductionWarnings
        }
        let cases: [([String: String], String)] = [
            (["idv.doc.accept_specimen_documents": "true"], "idv.doc.accept_specimen_documents=true"),
            (["idv.doc.reject_expired": "false"], "idv.doc.reject_expired=false"),
            (["idv.doc.reject_check_digits": "false"], "idv.doc.reject_check_digits=false"),
            (["idv.doc.require_portrait": "false"], "idv.doc.require_portrait=false"),
            (["argon2.opslimit": "1"], "argon2.opslimit=1"),
            (["argon2.memlimit_kib": "8"], "argon2.memlimit_kib=8"),
            (["listen.address": "0.0.0.0", "web.public_url": "https://idv.example"], "plain HTTP on 0.0.0.0"),
            (["listen.address": "0.0.0.0", "tls.cert": "/etc/idvd/cert.pem", "tls.key": "/etc/idvd/key.pem"], "web.public_url is not set"),
            (["password.min_length": "1"], "password.min_length"),
            (["password.lock_threshold": "1000000"], "password.lock_threshold"),
            (["limits.auth_failures_per_client": "0"], "limits.auth_failures_per_client=0"),
            (["idv.face_match_max_distance": "4"], "beyond the calibrated lines"),
            (["idv.face_match_max_cosine_distance": "1.5"], "beyond the calibrated lines"),
            (["session.sweep_seconds": "0"], "session.sweep_seconds=0"),
            (["webhooks.allow_http": "true"], "webhooks.allow_http=true"),
            (["idv.presence": "off"], "idv.presence=off"),
            (["idv.pad.challenge_below": "-20"], "without the PAD step-up"),
            (["idv.pad.texture_line": "3"], "without the PAD step-up"),
            (["idv.pad.challenge_on_unsure": "false"], "without the PAD step-up"),
        ]
        for (settings, phrase) in cases {
            let w = try warnings(settings)
            XCTAssertEqual(w.count, 1, "\(settings): \(w)")
            XCTAssertTrue(w.first?.contains(phrase) == true, "\(settings): \(w)")
        }
        // HTTPS on every address, plain HTTP on loopback: not warned.
        XCTAssertEqual(try warnings(["listen.address": "127.0.0.1"]), [])
        XCTAssertEqual(try warnings(["listen.address": "0.0.0.0", "tls.cert": "/etc/idvd/cert.pem", "tls.key": "/etc/idvd/key.pem",
                                     "web.public_url": "https://idv.example"]), [])
        // Stricter than the defaults: not warned.
        XCTAssertEqual(try warnings(["password.min_length": "16", "password.lock_threshold": "3", "idv.face_match_max_cosine_distance": "0.5"]), [])
        XCTAssertEqual(try warnings(["idv.doc.accept_specimen_documents": "true", "argon2.opslimit": "1"]).count, 2)
        // Active liveness asks a challenge of every capture: no step-up to miss.
        XCTAssertEqual(try warnings(["idv.liveness_mode": "active", "idv.pad.challenge_below": "-20"]), [])
    }
}
