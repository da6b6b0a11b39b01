import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVTools
import IDVWeb
import XCTest

/// The page's assets as shipped: what they are, what they may not contain, and that the page and
/// the server speak one vocabulary.
final class WebAssetTests: XCTestCase {
    func assets() throws -> WebAssets { try WebAssets.load() }

    func text(_ name: String) throws -> String {
        let a = try XCTUnwrap(try assets().asset(named: name), name)
        return String(decoding: a.bytes, as: UTF8.self)
    }

    var scripts: [String] { get throws { try assets().names.filter { $0.hasSuffix(".js") } } }

    /// The bundled assets are found the way `idvd serve` finds them (the resource bundle beside the
    /// binary), equal byte for byte to the sources, with their types and cache policies.
    func testBundledAssetsAreTheSourcesWithTypesAndPolicies() throws {
        let a = try assets()
        let source = try WebAssets(directory: WebPaths.assets)
        XCTAssertEqual(a.names, source.names)
        for n in a.names { XCTAssertEqual(a.asset(named: n)?.bytes, source.asset(named: n)?.bytes, "\(n) differs from Sources/IDVWeb/Assets") }
        XCTAssertTrue(a.names.contains("index.html") && a.names.contains("app.js") && a.names.contains("app.css"))
        XCTAssertEqual(a.asset(named: "index.html")?.contentType, "text/html; charset=utf-8")
        XCTAssertEqual(a.asset(named: "index.html")?.cachePolicy, .noStore)
        XCTAssertEqual(a.asset(named: "app.js")?.contentType, "text/javascript; charset=utf-8")
        XCTAssertEqual(a.asset(named: "app.css")?.contentType, "text/css; charset=utf-8")
        XCTAssertEqual(a.asset(named: "icon.svg")?.contentType, "image/svg+xml")
        for n in a.names where n != "index.html" { XCTAssertEqual(a.asset(named: n)?.cachePolicy, .revalidate, n) }
        XCTAssertNil(a.asset(named: "../Package.swift"))
        let total = a.names.compactMap { a.asset(named: $0)?.bytes.count }.reduce(0, +)
        XCTAssertLessThan(total, 256 * 1024, "the page stays small (no framework): \(total) bytes")
    }

    func testAssetNamesAreAFlatWhitelist() {
        for ok in ["index.html", "app.js", "app.css", "icon.svg", "a-b2.png", "site.webmanifest"] { XCTAssertTrue(WebAssets.isServableName(ok), ok) }
        for bad in ["", ".js", "App.js", "../app.js", "a/b.js", "app.js.map", "app", "app.exe", "%2e%2e.js", "a b.js", "app.JS", ".hidden.js"] {
            XCTAssertFalse(WebAssets.isServableName(bad), bad)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvweb-bad-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        XCTAssertThrowsError(try WebAssets(directory: dir)) { XCTAssertEqual($0 as? WebAssetsError, .noIndex(dir.path)) }
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("index.html").path, contents: Data("<!doctype html>".utf8))
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("Evil.PHP").path, contents: Data())
        XCTAssertThrowsError(try WebAssets(directory: dir)) { XCTAssertEqual($0 as? WebAssetsError, .unservable("Evil.PHP")) }
        XCTAssertThrowsError(try WebAssets.load(directory: dir.appendingPathComponent("missing").path))
    }

    /// The policy the server sends: no inline code, nothing from elsewhere, no framing, Trusted Types.
    func testContentSecurityPolicyIsStrict() throws {
        let csp = WebAssets.contentSecurityPolicy
        let directives = Dictionary(uniqueKeysWithValues: csp.split(separator: ";").map { d -> (String, String) in
            let parts = d.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        })
        XCTAssertEqual(directives["default-src"], "'self'")
        XCTAssertEqual(directives["script-src"], "'self'")
        XCTAssertEqual(directives["style-src"], "'self'")
        XCTAssertEqual(directives["connect-src"], "'self'")
        XCTAssertEqual(directives["object-src"], "'none'")
        XCTAssertEqual(directives["base-uri"], "'none'")
        XCTAssertEqual(directives["frame-ancestors"], "'none'")
        XCTAssertEqual(directives["require-trusted-types-for"], "'script'")
        XCTAssertFalse(csp.contains("unsafe"), csp)
        XCTAssertFalse(csp.contains("http:") || csp.contains("https:") || csp.contains("*"), "no source outside this origin: \(csp)")
        let a = try XCTUnwrap(try assets().asset(named: "index.html"))
        let h = WebAssets.headers(for: a)
        XCTAssertEqual(h["Content-Security-Policy"], csp)
        XCTAssertEqual(h["Cache-Control"], "no-store")
        XCTAssertEqual(h["X-Content-Type-Options"], "nosniff")
        XCTAssertEqual(h["Referrer-Policy"], "no-referrer")
        XCTAssertEqual(h["X-Frame-Options"], "DENY")
        XCTAssertTrue(h["Permissions-Policy"]?.contains("camera=(self)") ?? false)
    }

    /// The HTML has no inline script, inline style, event-handler attribute or external reference;
    /// the scripts load as modules from /verify/.
    func testHTMLHasNoInlineCodeAndNoExternalReference() throws {
        let html = try text("index.html")
        let tags = try NSRegularExpression(pattern: "<script\\b([^>]*)>(.*?)</script>", options: [.dotMatchesLineSeparators, .caseInsensitive])
        let matches = tags.matches(in: html, range: NSRange(html.startIndex..., in: html))
        XCTAssertFalse(matches.isEmpty)
        for m in matches {
            let attrs = String(html[Range(m.range(at: 1), in: html)!]), body = String(html[Range(m.range(at: 2), in: html)!])
            XCTAssertTrue(attrs.contains("src=\"/verify/") && attrs.contains("type=\"module\""), attrs)
            XCTAssertTrue(body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "inline script: \(body)")
        }
        XCTAssertNil(html.range(of: "\\son[a-z]+\\s*=", options: .regularExpression), "event-handler attribute in index.html")
        XCTAssertNil(html.range(of: "\\sstyle\\s*=", options: [.regularExpression, .caseInsensitive]), "inline style attribute")
        XCTAssertNil(html.range(of: "<style", options: .caseInsensitive), "inline style element")
        for n in try assets().names where !n.hasSuffix(".png") {
            let t = try text(n)
            XCTAssertNil(t.range(of: "https?://[A-Za-z0-9]", options: .regularExpression).flatMap { r in
                // The one URL allowed is the SVG namespace name (an identifier, never fetched).
                t[r.lowerBound...].hasPrefix("http://www.w3.org/2000/svg") ? nil : r
            }, "\(n) names an external URL")
            XCTAssertNil(t.range(of: "(src|href)=\"//", options: .regularExpression), "\(n) has a protocol-relative URL")
        }
    }

    /// Scripts never turn strings into markup or code (Trusted Types would refuse it at run time;
    /// this catches paths a run does not reach), and every module they import is an asset.
    func testScriptsUseNoStringToCodeSinksAndImportOnlyAssets() throws {
        let names = try assets().names
        for n in try scripts {
            let t = try text(n)
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('style'",
                         ".style.", "localStorage", "import(", "XMLHttpRequest", "WebSocket", "navigator.sendBeacon"] {
                XCTAssertFalse(t.contains(sink), "\(n) uses \(sink)")
            }
            let imports = try NSRegularExpression(pattern: "from '\\./([a-z0-9-]+\\.js)'")
            for m in imports.matches(in: t, range: NSRange(t.startIndex..., in: t)) {
                let target = String(t[Range(m.range(at: 1), in: t)!])
                XCTAssertTrue(names.contains(target), "\(n) imports \(target), which is not an asset")
            }
        }
    }

    /// The stable hooks tests and operators' monitoring drive the page by (issue #20).
    func testEveryScreenAndPrimaryActionHasItsStableAttribute() throws {
        let screens = try text("screens.js") + text("app.js")
        for s in ["check-user", "activation-code", "set-password", "verify-password", "document-start", "document-capture", "document-confirm",
                  "selfie-start", "selfie-capture", "selfie-confirm", "consent", "result", "home"] {
            XCTAssertTrue(screens.contains("show('\(s)'"), "no data-screen \(s)")
        }
        let ui = try text("ui.js")
        XCTAssertTrue(ui.contains("dataset: { screen: name"), "show() sets data-screen")
        XCTAssertTrue(ui.contains("dataset: { action,"), "button() sets data-action")
        for a in ["confirm", "retake", "cancel", "capture", "approve", "reject", "start", "back"] {
            XCTAssertTrue(screens.contains("'\(a)'"), "no data-action \(a)")
        }
        // The codelabs' entry screens (issue #35): data-screen = the entry's kind, shown by entry().
        XCTAssertTrue(screens.contains("ctl.section = show(state.kind,"), "entry() shows its kind as data-screen")
        for kind in ["kyc", "document-scan", "server-biometric", "optin", "optout"] {
            XCTAssertTrue(screens.contains("\(kind.contains("-") ? "'\(kind)'" : kind): Flow."), "entryFlow lacks \(kind)")
        }
    }

    /// protocol.js is the JavaScript twin of IDVCore's names: the same routes, challenges, events
    /// and upload set as the server and IDVKit.
    func testProtocolNamesAreIDVCoresNames() throws {
        let js = try text("protocol.js")
        func value(_ key: String) -> String? {
            guard let r = js.range(of: "\\b\(key): '([^']*)'", options: .regularExpression) else { return nil }
            let m = js[r]
            return m.split(separator: "'").dropFirst().first.map(String.init)
        }
        let challenges = [WireName.getUser, WireName.getActivationCode, WireName.getPassword, WireName.getUserConsentForLDA, WireName.getDeviceSignature,
                          WireName.getIDVDocumentScanProcessStartConfirmation, WireName.uploadIDVDocumentPages, WireName.readIDVDocumentChip, WireName.getIDVConfirmDocumentDetails,
                          WireName.getIDVSelfieProcessStartConfirmation, WireName.uploadIDVSelfieFrames, WireName.getIDVSelfieConfirmation,
                          WireName.getIDVBiometricOptInConsent, WireName.onIDVOptInCapturedFrameConfirmation]
        let events = [WireName.onUserLoggedIn, WireName.onUserLoggedOff, WireName.onAuthStateReset, WireName.onIDVActivatedCustomerKYCResponse,
                      WireName.onIDVAdditionalDocumentScan, WireName.onIDVCheckUserBiometricTemplateStatus,
                      WireName.onIDVServerBiometricAuthenticationResult, WireName.onIDVBiometricOptInStatus, WireName.onIDVBiometricOptOutStatus]
        for n in challenges + events { XCTAssertEqual(value(n), n, "protocol.js lacks \(n)") }
        XCTAssertTrue(js.contains("new Set([Challenge.uploadIDVDocumentPages, Challenge.uploadIDVSelfieFrames, Challenge.readIDVDocumentChip])"))
        XCTAssertEqual(WireName.uploadChallenges, [WireName.uploadIDVDocumentPages, WireName.uploadIDVSelfieFrames, WireName.readIDVDocumentChip], "protocol.js's upload set")
        for (k, flow) in [("activation", FlowName.activation), ("kyc", FlowName.kyc), ("documentScan", FlowName.documentScan),
                          ("serverBiometric", FlowName.serverBiometric), ("templateStatus", FlowName.templateStatus),
                          ("optIn", FlowName.optIn), ("optOut", FlowName.optOut)] {
            XCTAssertEqual(value(k), flow, "protocol.js Flow.\(k)")
        }
        XCTAssertEqual(value("redeemLink"), WireLinks.redeemPath)
        for (k, path) in [("sessions", "/v1/sessions"), ("session", "/v1/session"), ("answer", "/v1/session/answer"), ("upload", "/v1/session/upload"),
                          ("reset", "/v1/session/reset"), ("logoff", "/v1/session/logoff"), ("flows", "/v1/flows/")] {
            XCTAssertEqual(value(k), path, k)
        }
        for f in WireLinks.flows { XCTAssertTrue(js.contains("'\(f)'"), "protocol.js lacks flow \(f)") }
        for (k, code) in [("linkInvalid", IDVErrorCode.linkInvalid), ("replayedAnswer", .replayedAnswer), ("sessionExpired", .sessionExpired),
                          ("unauthenticated", .unauthenticated), ("userCancelled", .userCancelled), ("idvCancelledByUser", .idvCancelledByUser)] {
            XCTAssertNotNil(js.range(of: "\(k): \(code.rawValue)\\b", options: .regularExpression), "protocol.js \(k) ≠ \(code.rawValue)")
        }
        // Every code the words table explains is a code of the one table.
        let words = try text("words.js")
        let codeKeys = try NSRegularExpression(pattern: "^    (\\d{3,4}): '", options: .anchorsMatchLines)
        let keys = codeKeys.matches(in: words, range: NSRange(words.startIndex..., in: words)).map { Int(words[Range($0.range(at: 1), in: words)!])! }
        XCTAssertGreaterThan(keys.count, 15)
        for k in keys { XCTAssertNotNil(IDVErrorCode(rawValue: k), "words.js explains unknown code \(k)") }
    }
}
