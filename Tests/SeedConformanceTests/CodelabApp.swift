import Foundation
import RELID
@testable import SeedApp
import XCTest

/// What the codelabs' app hears, in order: every closure of the seeds' `RDNAIDVDelegateManager`
/// (seed code) and of the earlier codelabs' `RDNADelegateManager`, recorded with the values the
/// seeds' screens read (codes as `Int`, JSON as text).
enum Heard: Equatable, CustomStringConvertible {
    case getUser(error: Int)
    case getActivationCode(attemptsLeft: Int, error: Int)
    case getPassword(mode: Int, attemptsLeft: Int, error: Int)
    case getUserConsentForLDA
    case loggedIn(String)
    case authStateReset
    case initializeError(Int)
    case documentStart(RDNAIDVWorkflow)
    case documentDetails(mode: Int, json: String)
    case selfieStart(RDNAIDVWorkflow)
    case selfieConfirmation(userID: String, mode: Int, json: String)
    case consent(userID: String, attemptsLeft: Int, mode: Int, statusCode: Int, error: Int)
    case kycResponse(userID: String, status: Int, error: Int)
    case documentScanResult(json: String, status: Int, mode: Int, error: Int)
    case templateStatus(json: String, status: Int, error: Int)
    case serverBiometric(json: String, status: Int, error: Int)
    case capturedFrame(String)
    case optInStatus(json: String, status: Int, error: Int)
    case optOutStatus(json: String, status: Int, error: Int)

    var name: String {
        switch self {
        case .getUser: return "getUser"
        case .getActivationCode: return "getActivationCode"
        case .getPassword: return "getPassword"
        case .getUserConsentForLDA: return "getUserConsentForLDA"
        case .loggedIn: return "onUserLoggedIn"
        case .authStateReset: return "onAuthStateReset"
        case .initializeError: return "onInitializeError"
        case .documentStart: return "onGetIDVDocumentScanProcessStartConfirmation"
        case .documentDetails: return "onGetIDVConfirmDocumentDetails"
        case .selfieStart: return "onGetIDVSelfieProcessStartConfirmation"
        case .selfieConfirmation: return "onGetIDVSelfieConfirmation"
        case .consent: return "onGetIDVBiometricOptInConsent"
        case .kycResponse: return "onIDVActivatedCustomerKYCResponse"
        case .documentScanResult: return "onIDVAdditionalDocumentScanResponse"
        case .templateStatus: return "onIDVCheckUserBiometricTemplateStatus"
        case .serverBiometric: return "onIDVServerBiometricAuthenticationResult"
        case .capturedFrame: return "onIDVOptInCapturedFrameConfirmation"
        case .optInStatus: return "onIDVBiometricOptInStatus"
        case .optOutStatus: return "onIDVBiometricOptOutStatus"
        }
    }

    var description: String {
        switch self {
        case let .getUser(e): return "getUser(error \(e))"
        case let .getPassword(m, a, e): return "getPassword(mode \(m), attempts \(a), error \(e))"
        case let .documentStart(wf): return "documentStart(\(wf.rawValue))"
        case let .selfieStart(wf): return "selfieStart(\(wf.rawValue))"
        case let .kycResponse(_, s, e): return "kycResponse(\(e)/\(s))"
        case let .documentScanResult(_, s, _, e): return "documentScanResult(\(e)/\(s))"
        case let .templateStatus(_, s, e): return "templateStatus(\(e)/\(s))"
        case let .serverBiometric(_, s, e): return "serverBiometric(\(e)/\(s))"
        case let .optInStatus(_, s, e): return "optInStatus(\(e)/\(s))"
        case let .optOutStatus(_, s, e): return "optOutStatus(\(e)/\(s))"
        default: return name
        }
    }
}

/// Every SDK event of `RDNA.sharedInstance()` (its `events` stream), for the failures the codelabs'
/// delegates do not hear (`onRequestFailed`, which no codelab implements). One reader for the process.
final class SDKEventTap: @unchecked Sendable {
    static let shared = SDKEventTap()
    private let lock = NSLock()
    private var seen: [RDNAEvent] = []
    private init() {
        Task.detached { for await e in RDNA.sharedInstance().events { self.lock.withLock { self.seen.append(e) } } }
    }
    var count: Int { lock.withLock { seen.count } }
    func since(_ mark: Int) -> [RDNAEvent] { lock.withLock { Array(seen.dropFirst(mark)) } }
    /// The `onRequestFailed` events after `mark`: (api, code).
    func failures(since mark: Int) -> [(String, Int)] {
        since(mark).compactMap { if case let .onRequestFailed(api, e) = $0 { return (api, e.longErrorCode) } else { return nil } }
    }
}

/// The codelabs' app around the seeds' code: it registers on the seeds' delegate managers the
/// closures the seeds' coordinator and screens register (AppIDVCoordinator.registerIDVEventHandlers,
/// seed 002 L1300-L1347; the screens' handlers, seeds 000-004), records what they hear, and lets a
/// test answer the way the seeds' screens do, through the seeds' `RDNAIDVService`.
final class CodelabApp {
    private(set) var heard: [Heard] = []
    private var read = 0
    let tapMark: Int

    init() {
        _ = SDKEventTap.shared
        tapMark = SDKEventTap.shared.count
        let idv = RDNAIDVDelegateManager.shared
        idv.onGetIDVDocumentScanProcessStartConfirmation = { [unowned self] wf in heard.append(.documentStart(wf)) }
        idv.onGetIDVConfirmDocumentDetails = { [unowned self] mode, json in heard.append(.documentDetails(mode: mode.rawValue, json: json)) }
        idv.onGetIDVSelfieProcessStartConfirmation = { [unowned self] wf in heard.append(.selfieStart(wf)) }
        idv.onGetIDVSelfieConfirmation = { [unowned self] user, mode, json in heard.append(.selfieConfirmation(userID: user, mode: mode.rawValue, json: json)) }
        idv.onGetIDVBiometricOptInConsent = { [unowned self] user, attempts, mode, _, _, response, error in
            heard.append(.consent(userID: user, attemptsLeft: attempts, mode: mode.rawValue, statusCode: Int(response.status.statusCode), error: error.longErrorCode))
        }
        idv.onIDVActivatedCustomerKYCResponse = { [unowned self] user, status, error in
            heard.append(.kycResponse(userID: user, status: Int(status.statusCode), error: error.longErrorCode))
        }
        idv.onIDVAdditionalDocumentScanResponse = { [unowned self] _, json, status, mode, error in
            heard.append(.documentScanResult(json: json, status: Int(status.statusCode), mode: mode.rawValue, error: error.longErrorCode))
        }
        idv.onIDVCheckUserBiometricTemplateStatus = { [unowned self] _, json, status, error in
            heard.append(.templateStatus(json: json, status: Int(status.statusCode), error: error.longErrorCode))
        }
        idv.onIDVServerBiometricAuthenticationResult = { [unowned self] _, json, status, error in
            heard.append(.serverBiometric(json: json, status: Int(status.statusCode), error: error.longErrorCode))
        }
        idv.onIDVOptInCapturedFrameConfirmation = { [unowned self] image in heard.append(.capturedFrame(image)) }
        idv.onIDVBiometricOptInStatus = { [unowned self] _, json, status, error in
            heard.append(.optInStatus(json: json, status: Int(status.statusCode), error: error.longErrorCode))
        }
        idv.onIDVBiometricOptOutStatus = { [unowned self] _, json, status, error in
            heard.append(.optOutStatus(json: json, status: Int(status.statusCode), error: error.longErrorCode))
        }
        let core = RDNADelegateManager.shared
        core.onInitialized = nil
        core.onInitializeError = { [unowned self] e in heard.append(.initializeError(e.longErrorCode)) }
        core.onGetUser = { [unowned self] _, e in heard.append(.getUser(error: e.longErrorCode)) }
        core.onGetActivationCode = { [unowned self] _, a, _, e in heard.append(.getActivationCode(attemptsLeft: a, error: e.longErrorCode)) }
        core.onGetPassword = { [unowned self] _, m, a, _, e in heard.append(.getPassword(mode: m.rawValue, attemptsLeft: a, error: e.longErrorCode)) }
        core.onGetUserConsentForLDA = { [unowned self] _, _ in heard.append(.getUserConsentForLDA) }
        core.onUserLoggedIn = { [unowned self] u in heard.append(.loggedIn(u)) }
        core.onAuthStateResetHandler = { [unowned self] in heard.append(.authStateReset) }
    }

    /// Unregisters every delegate and closure, so the next test's app starts from nothing.
    static func reset() {
        let sdk = RDNA.sharedInstance()
        sdk.setCallbacks(nil)
        sdk.setIDVDocumentProcessingDelegate(nil)
        sdk.setIDVSelfieProcessingDelegate(nil)
        sdk.setIDVBiometricManagementDelegate(nil)
        sdk.setIDVKYCManagementDelegate(nil)
        sdk.setDocumentCaptureProvider(nil)
        sdk.setSelfieCaptureProvider(nil)
        sdk.setLogHandler(nil)
        let idv = RDNAIDVDelegateManager.shared
        idv.onGetIDVDocumentScanProcessStartConfirmation = nil
        idv.onGetIDVConfirmDocumentDetails = nil
        idv.onGetIDVSelfieProcessStartConfirmation = nil
        idv.onGetIDVSelfieConfirmation = nil
        idv.onGetIDVBiometricOptInConsent = nil
        idv.onIDVActivatedCustomerKYCResponse = nil
        idv.onIDVAdditionalDocumentScanResponse = nil
        idv.onIDVCheckUserBiometricTemplateStatus = nil
        idv.onIDVServerBiometricAuthenticationResult = nil
        idv.onIDVOptInCapturedFrameConfirmation = nil
        idv.onIDVBiometricOptInStatus = nil
        idv.onIDVBiometricOptOutStatus = nil
        let core = RDNADelegateManager.shared
        core.onInitialized = nil
        core.onInitializeError = nil
        core.onGetUser = nil
        core.onGetActivationCode = nil
        core.onGetPassword = nil
        core.onGetUserConsentForLDA = nil
        core.onUserLoggedIn = nil
        core.onUserLoggedOff = nil
        core.onAuthStateResetHandler = nil
        // Let callbacks of the previous test still queued on the main queue drain into nothing.
        pumpMain(timeout: 0.2) { false }
    }

    /// The next callback the app hears (pumping the main queue), or nil after `timeout` seconds.
    func next(timeout: TimeInterval = 90) -> Heard? {
        guard pumpMain(timeout: timeout, until: { heard.count > read }) else { return nil }
        defer { read += 1 }
        return heard[read]
    }

    /// The next callback, which must be `name`; fails the test (and returns nil) otherwise.
    func expect(_ name: String, timeout: TimeInterval = 90, file: StaticString = #filePath, line: UInt = #line) -> Heard? {
        guard let h = next(timeout: timeout) else {
            XCTFail("expected \(name), heard nothing within \(Int(timeout)) s (so far: \(heard))", file: file, line: line)
            return nil
        }
        guard h.name == name else {
            XCTFail("expected \(name), heard \(h) (failures: \(SDKEventTap.shared.failures(since: tapMark)))", file: file, line: line)
            return nil
        }
        return h
    }

    /// Un-reads the last callback (it must be `h`), so the next `expect` hears it again.
    func pushBack(_ h: Heard, file: StaticString = #filePath, line: UInt = #line) {
        guard read > 0, heard[read - 1] == h else { return XCTFail("pushBack(\(h)) does not match the last callback", file: file, line: line) }
        read -= 1
    }

    /// True when nothing more is heard within `seconds`.
    func hearsNothing(for seconds: TimeInterval) -> Bool {
        !pumpMain(timeout: seconds, until: { heard.count > read })
    }

    /// The `onRequestFailed` events since this app started.
    var failures: [(String, Int)] { SDKEventTap.shared.failures(since: tapMark) }

    /// True when no `onRequestFailed` has been seen (after letting the event stream catch up).
    var noFailures: Bool {
        pumpMain(timeout: 0.3) { false }
        return failures.isEmpty
    }

    /// True once `onRequestFailed(api, code)` has been seen on the SDK's event stream (read on its
    /// own task, so it may lag the delegate callbacks a little).
    func reported(_ api: String, _ code: Int, timeout: TimeInterval = 10) -> Bool {
        pumpMain(timeout: timeout) { failures.contains { $0 == (api, code) } }
    }
}

/// Helpers over the seeds' JSON payloads, read the way the seeds' screens read them.
enum SeedJSON {
    static func object(_ json: String) -> [String: Any]? {
        guard let d = json.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: d)) as? [String: Any]
    }

    static func value(_ json: String, _ path: String...) -> Any? {
        var v: Any? = object(json)
        for k in path { v = (v as? [String: Any])?[k] }
        return v
    }

    /// Seed 002 L3233-L3243: the keys of `response_data.action_buttons.success_button` /
    /// `failure_button` of the selfie confirmation (the seed's screen reads `response_data` of the
    /// string it gets, or the object itself).
    static func actionKeys(_ json: String, _ which: String) -> [String] {
        let buttons = (value(json, "action_buttons", which) ?? value(json, "response_data", "action_buttons", which)) as? [[String: Any]] ?? []
        return buttons.compactMap { $0["key"] as? String }
    }

    /// The dotted paths (`a.b.c`; `a[0].b` for an array's first element) absent from `json`.
    static func missing(_ json: String, _ paths: [String]) -> [String] {
        paths.filter { path in
            var v: Any? = object(json)
            for part in path.split(separator: ".") {
                var key = String(part)
                var index: Int?
                if key.hasSuffix("[0]") { key.removeLast(3); index = 0 }
                v = (v as? [String: Any])?[key]
                if let index { v = (v as? [Any]).flatMap { $0.count > index ? $0[index] : nil } }
            }
            return v == nil
        }
    }

    /// `response_data.biometric_result.display_text` of a selfie confirmation.
    static func verdict(_ json: String) -> String? {
        (value(json, "response_data", "biometric_result", "display_text") ?? value(json, "biometric_result", "display_text")) as? String
    }
}
