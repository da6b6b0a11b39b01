import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVTestSupport
import XCTest

/// `WorkflowPolicy`'s review triggers (RelyingParty/Review.swift): each `review.*` setting on the
/// evidence it names, off by default, and exactly inside its band.
final class ReviewPolicyTests: XCTestCase {
    let fields = DocumentFields(documentType: "P", format: "TD3", issuingState: "UTO", surname: "SILVA", givenNames: "OLGA",
                                documentNumber: "MV841085Z", dateOfExpiry: "2032-05-26")

    func doc(chip failures: [ChipFailure]?) -> DocumentEvidence {
        var d = ReaderEvidence.passport(fields, page: Data([0xFF, 0xD8, 0xFF]), portrait: true)
        d.chip = failures.map { ChipEvidence(failures: $0, mrz: .matches, dataGroups: [1, 2, 15], hashAlgorithm: "SHA256", portraitJPEG: nil,
                                             activeAuthentication: .verified(mechanism: "rsa-iso9796-2-sha256")) }
        return d
    }

    func selfie(liveness: Int, distance: Double?) -> SelfieEvidence {
        SelfieEvidence(livenessScore: liveness, livenessCues: [], match: distance.map { FaceMatchEvidence(distance: $0, score: 1 - $0 / 1.2) },
                       frameCount: 2, trackedFrameCount: 2, framesPerSecond: 10, bestFrameIndex: 0, bestFrameJPEG: nil,
                       embedding: [1, 0], model: "m")
    }

    func triggers(_ p: WorkflowPolicy, liveness: Int, distance: Double?) -> [ReviewTrigger] {
        let e = selfie(liveness: liveness, distance: distance)
        return p.reviewTriggers(selfie: e, judged: p.judge(e, reference: .portrait(Data([1])), challenge: nil, now: 0))
    }

    func testOffByDefault() {
        let p = WorkflowPolicy.acceptingSpecimens
        XCTAssertFalse(p.review.enabled)
        XCTAssertEqual(triggers(p, liveness: 50, distance: 0.55), [])
        let d = doc(chip: [.cscaUnknown])
        XCTAssertEqual(p.reviewTriggers(document: d, judged: p.judge(d, today: "2026-12-01", needsPortrait: true)), [])
    }

    func testMatchAndLivenessBands() {
        var p = WorkflowPolicy.acceptingSpecimens
        p.faceMatchOperatingPoint = nil   // the fixed 0.55 line
        p.review.matchBand = 0.05
        p.review.livenessBand = 10
        XCTAssertEqual(triggers(p, liveness: 95, distance: 0.52), [.matchNearThreshold], "MATCHED just inside the line")
        XCTAssertEqual(triggers(p, liveness: 95, distance: 0.59), [.matchNearThreshold], "NOT_MATCHED just outside it")
        XCTAssertEqual(triggers(p, liveness: 95, distance: 0.40), [], "a clear match")
        XCTAssertEqual(triggers(p, liveness: 95, distance: 0.70), [], "a clear non-match")
        XCTAssertEqual(triggers(p, liveness: 58, distance: 0.30), [.livenessNearThreshold])
        XCTAssertEqual(triggers(p, liveness: 42, distance: 0.30), [.livenessNearThreshold], "LIVENESS_FAILED within the band")
        XCTAssertEqual(triggers(p, liveness: 61, distance: 0.30), [])
        XCTAssertEqual(triggers(p, liveness: 42, distance: 0.55), [.livenessNearThreshold], "no match trigger once liveness failed")
    }

    func testDocumentWarningAndUnknownCSCA() {
        var p = WorkflowPolicy.acceptingSpecimens
        p.review.documentWarning = true
        p.review.chipUnknownCSCA = true
        let unknown = doc(chip: [.cscaUnknown])
        let j = p.judge(unknown, today: "2026-12-01", needsPortrait: true)
        XCTAssertEqual(j.status, .warning)
        XCTAssertEqual(p.reviewTriggers(document: unknown, judged: j), [.documentWarning, .chipUnknownCSCA])
        let clean = doc(chip: nil)
        XCTAssertEqual(p.reviewTriggers(document: clean, judged: p.judge(clean, today: "2026-12-01", needsPortrait: true)), [])
        // An INVALID chip is decided (refused), not reviewed.
        let forged = doc(chip: [.cscaUnknown, .signatureInvalid])
        let fj = p.judge(forged, today: "2026-12-01", needsPortrait: true)
        XCTAssertEqual(fj.status, .invalid)
        XCTAssertEqual(p.reviewTriggers(document: forged, judged: fj), [])
    }

    func testSettingsParse() throws {
        let c = try ServerConfig.load(file: nil, environment: [:], overrides: ["review.match_band": "0.1", "review.liveness_band": "5",
                                                                             "review.document_warning": "true", "review.chip_unknown_csca": "on"])
        XCTAssertEqual(c.engine.workflow.review.matchBand, 0.1)
        XCTAssertEqual(c.engine.workflow.review.livenessBand, 5)
        XCTAssertTrue(c.engine.workflow.review.documentWarning && c.engine.workflow.review.chipUnknownCSCA)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["review.match_band": "-1"]))
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["review.liveness_band": "x"]))
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["rp.rate_limit_per_minute": "0"]))
    }
}
