import Foundation
@testable import IDVKit
import XCTest

/// The WireMapping tables and the file capture providers on real files.
final class MappingAndCaptureTests: XCTestCase {
    func testEveryAnswerMapsToAChallengeTheInboundTableKnows() {
        for (api, challenges) in WireMapping.answers where api != "deviceSignature" {
            for c in challenges {
                XCTAssertNotNil(WireMapping.inboundChallenges[c], "\(api) answers \(c), which the SDK cannot deliver")
            }
        }
        XCTAssertEqual(WireMapping.route(for: "uploadIDVDocumentPages"), .upload)
        XCTAssertEqual(WireMapping.route(for: "uploadIDVSelfieFrames"), .upload)
        XCTAssertEqual(WireMapping.route(for: WireName.getIDVDocumentScanProcessStartConfirmation), .answer)
        XCTAssertEqual(WireMapping.route(for: WireName.getPassword), .answer)
        XCTAssertEqual(WireMapping.flows["initiateIDVServerBiometricAuthentication"], "idv.postlogin.server_biometric")
        XCTAssertEqual(Set(WireMapping.flows.keys), ["initiateActivatedCustomerKYC", "initiateIDVAdditionalDocumentScan",
                                                     "checkIDVUserBiometricTemplateStatus", "initiateIDVServerBiometricAuthentication",
                                                     "initiateIDVBiometricOptIn", "initiateIDVBiometricOptOut"])
        for name in [IDVEventName.onIDVActivatedCustomerKYCResponse, IDVEventName.onIDVAdditionalDocumentScan,
                     IDVEventName.onIDVCheckUserBiometricTemplateStatus, IDVEventName.onIDVServerBiometricAuthenticationResult,
                     IDVEventName.onIDVBiometricOptInStatus, IDVEventName.onIDVBiometricOptOutStatus] {
            XCTAssertEqual(WireMapping.event(for: WireEvent(name: name)).name, name)
        }
    }

    /// The details screen's two answers as IDVCore's ``DocumentDetailsAnswer``: Confirm/Close send
    /// `is_confirm` alone; Recapture (`rescanIDVDocument`) adds `rescan: true`; a `rescan` that is not
    /// a boolean is a shape error naming the field (the server's 1001).
    func testDocumentDetailsAnswersAndTheRecapture() throws {
        let close = WireMapping.payload(DocumentDetailsAnswer(isConfirm: false))
        XCTAssertEqual(close, ["is_confirm": false], "Close says is_confirm alone: KYC's cancel API (240)")
        let recapture = WireMapping.payload(DocumentDetailsAnswer(isConfirm: false, rescan: true))
        XCTAssertEqual(recapture, ["is_confirm": false, "rescan": true])
        XCTAssertEqual(try recapture.decodeAnswer(DocumentDetailsAnswer.self).rescan, true)
        XCTAssertNil(try close.decodeAnswer(DocumentDetailsAnswer.self).rescan)
        let bad: JSONValue = ["is_confirm": false, "rescan": "yes"]
        XCTAssertThrowsError(try bad.decodeAnswer(DocumentDetailsAnswer.self)) { e in
            XCTAssertTrue("\(e)".contains("rescan"), "the error names the field: \(e)")
        }
        XCTAssertEqual(DocumentDetailsAnswer.challenges, [WireName.getIDVConfirmDocumentDetails])
        XCTAssertEqual(ConfirmAnswer.challenges, [WireName.getIDVDocumentScanProcessStartConfirmation])
    }

    func testDocumentDetailsChallengeArrivesAsTheSeedJSON() throws {
        let details: JSONValue = ["response_data": ["document_info": ["surname": "HILL", "given_name": "KATIE", "document_number": "X1234567", "issuing_country": "USA", "document_type": "PASSPORT"],
                                                    "document_pages": [], "checks_performed": [["check_name": "MRZ check digits", "result": "PASSED"]],
                                                    "errors": [], "warnings": [], "overall_status": "VALID"]]
        let ch = WireChallenge(name: WireName.getIDVConfirmDocumentDetails, challengeID: "0123", challengeMode: 9, idvWorkflow: 6,
                               attemptsLeft: 3, payload: details)
        guard case let .getIDVConfirmDocumentDetails(json, mode) = WireMapping.event(for: ch) else { return XCTFail() }
        XCTAssertEqual(mode, .idvPostLoginKYC)
        let decoded = try DocumentDetails(jsonString: json)
        XCTAssertEqual(decoded.responseData.documentInfo.surname, "HILL")
        XCTAssertEqual(decoded.responseData.overallStatus.rawValue, "VALID")
        // An unassigned mode is delivered as unknown rather than guessed.
        var bad = ch
        bad.challengeMode = 77
        XCTAssertEqual(WireMapping.event(for: bad).name, WireName.getIDVConfirmDocumentDetails)
        if case .unknown = WireMapping.event(for: bad) {} else { XCTFail("mode 77 must map to .unknown") }
        let wf = WireChallenge(name: WireName.getIDVSelfieProcessStartConfirmation, challengeID: "1", idvWorkflow: 8, attemptsLeft: 3)
        XCTAssertEqual(WireMapping.event(for: wf), .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginSelfieBiometric))
    }

    func testFrameFolderAndImageFileProviders() throws {
        let frames = try FrameFolderSelfieCapture(folder: Paths.fixtures.appendingPathComponent("katie_live"))
            .captureSelfie(useBackCamera: false, workflow: .activation)
        XCTAssertEqual(frames.frames.count, 30)
        XCTAssertEqual(frames.framesPerSecond, 10)
        XCTAssertTrue(frames.frames.allSatisfy(ImageFiles.isImage))
        let upload = WireMapping.payload(WireMapping.selfieAnswer(frames, useBackCamera: false))
        XCTAssertEqual(Data(base64Encoded: upload["frames"]?.arrayValue?.first?.stringValue ?? ""), frames.frames.first)
        XCTAssertEqual(upload["fps"]?.doubleValue, 10)
        XCTAssertEqual(upload["meta_data"]?["camera"], "front")
        XCTAssertEqual(try upload.decode(SelfieFramesAnswer.self).frames?.count, 30)

        let pages = try ImageFileDocumentCapture(pageFiles: [Paths.fixtures.appendingPathComponent("katie_portrait.jpg")])
            .captureDocumentPages(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(pages.map(\.pageIndex), [0])
        XCTAssertEqual(WireMapping.payload(WireMapping.documentAnswer(pages))["pages"]?.arrayValue?.first?["page_index"]?.intValue, 0)

        // Bad input: missing file, non-image bytes, empty folder, too many pages — each a distinct message.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvkit-cap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let txt = dir.appendingPathComponent("note.jpg")
        try Data("not an image".utf8).write(to: txt)
        XCTAssertThrowsError(try ImageFileDocumentCapture(pageFiles: [txt]).captureDocumentPages(workflow: .activation)) {
            XCTAssertEqual(($0 as? CaptureError)?.message, "note.jpg is not a JPEG or PNG image")
        }
        XCTAssertThrowsError(try ImageFileDocumentCapture(pageFiles: [dir.appendingPathComponent("nope.png")]).captureDocumentPages(workflow: .activation)) {
            XCTAssertEqual(($0 as? CaptureError)?.message, "cannot read nope.png: no such file")
        }
        let empty = dir.appendingPathComponent("frames")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        XCTAssertThrowsError(try FrameFolderSelfieCapture(folder: empty).captureSelfie(useBackCamera: false, workflow: .activation)) {
            XCTAssertEqual(($0 as? CaptureError)?.message, "the frame folder frames has no JPEG/PNG frames")
        }
        XCTAssertThrowsError(try ImageFileDocumentCapture(pageFiles: [txt, txt, txt]).captureDocumentPages(workflow: .activation))
    }
}
