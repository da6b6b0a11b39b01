import FaceKit
import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders
import XCTest

/// The selfie policy of issue 18: the face match is judged at a named operating point with the
/// analyser's calibrated distance for the comparison's kind; a capture the analyser reports unfit
/// is asked again with its own code (1060–1065) before any verdict.
final class SelfiePolicyTests: XCTestCase {
    static let calibrated = [CalibratedDistance(operatingPoint: .fmr1in1000, maxDistance: 0.502, measuredFMR: 0.00048, measuredFNMR: 0.0195),
                             CalibratedDistance(operatingPoint: .fmr1in10000, maxDistance: 0.427, measuredFMR: 0.00003, measuredFNMR: 0.174)]

    static func evidence(distance: Double, calibration: [CalibratedDistance] = calibrated, issues: [CaptureIssue] = []) -> SelfieEvidence {
        SelfieEvidence(livenessScore: 80, match: FaceMatchEvidence(distance: distance, score: 0.5, kind: .fusedToImage, calibration: calibration),
                       frameCount: 30, trackedFrameCount: 30, framesPerSecond: 10, bestFrameJPEG: nil, embedding: [], captureIssues: issues)
    }

    func testTheOperatingPointChoosesTheCalibratedDistance() {
        var p = WorkflowPolicy()
        XCTAssertEqual(p.faceMatchOperatingPoint, .fmr1in1000)
        let e = Self.evidence(distance: 0.45)
        let fmr1000 = p.judge(e, reference: .portrait(Data()), challenge: nil, now: 0)
        XCTAssertEqual(fmr1000.verdict, .matched)
        XCTAssertEqual(fmr1000.matchThreshold, 0.502)
        p.faceMatchOperatingPoint = .fmr1in10000
        let fmr10000 = p.judge(e, reference: .portrait(Data()), challenge: nil, now: 0)
        XCTAssertEqual(fmr10000.verdict, .notMatched)
        XCTAssertEqual(fmr10000.reason, .distanceAboveThreshold)
        XCTAssertEqual(fmr10000.matchThreshold, 0.427)
        // `distance`: the fixed line, for every kind; evidence without calibration uses it too.
        p.faceMatchOperatingPoint = nil
        XCTAssertEqual(p.judge(Self.evidence(distance: 0.53), reference: .portrait(Data()), challenge: nil, now: 0).matchThreshold, 0.55)
        p.faceMatchOperatingPoint = .fmr1in1000
        XCTAssertEqual(p.judge(Self.evidence(distance: 0.53, calibration: []), reference: .portrait(Data()), challenge: nil, now: 0).verdict, .matched)
        XCTAssertEqual(p.judge(Self.evidence(distance: 0.53), reference: .portrait(Data()), challenge: nil, now: 0).verdict, .notMatched)
    }

    func testTheAdapterReportsFaceKitsCalibrationForTheKind() {
        // Names shared by FaceKit and the engine's evidence agree word for word.
        XCTAssertEqual(FaceMatchOperatingPoint.allCases.map(\.rawValue), MatchOperatingPoint.allCases.map(\.rawValue))
        XCTAssertEqual(FaceComparisonKind.allCases.map(\.rawValue), FaceMatchKind.allCases.map(\.rawValue))
        XCTAssertEqual(Self.calibrated.map(\.maxDistance), [FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToImage, model: .dlibResNetV1).distance,
                                                            FaceMatchCalibration.threshold(.fmr1in10000, for: .fusedToImage, model: .dlibResNetV1).distance])
        // The adapter's evidence names the model, its metric and that model's calibrated lines.
        for model in FaceDescriptorModel.allCases {
            let e = FaceKitSelfieAnalyser.matchEvidence(distance: 0.3, score: 0.9, kind: .fusedToFused, model: model)
            XCTAssertEqual(e.model, model.name)
            XCTAssertEqual(e.metric.rawValue, model.metric.rawValue)
            XCTAssertEqual(e.calibrated(.fmr1in10000)?.maxDistance, FaceMatchCalibration.threshold(.fmr1in10000, for: .fusedToFused, model: model).distance)
        }
        XCTAssertEqual(FaceDescriptorModelName.dlibResNetV1, FaceDescriptorModel.dlibResNetV1.name)
        XCTAssertEqual(FaceDescriptorModelName.faceReidentification0095, FaceDescriptorModel.faceReidentification0095.name)
        // The server's fixed cosine line is FaceKit's image-to-image line of the recogniser at FMR 0.1 %.
        XCTAssertEqual(WorkflowPolicy.recognizerMaxCosineDistance,
                       (FaceMatchCalibration.threshold(.fmr1in1000, for: .imageToImage, model: .faceReidentification0095).distance * 1000).rounded() / 1000)
    }

    /// In `distance` mode (or without calibration) the fixed line is the one of the distance's metric.
    func testTheFixedLineFollowsTheMetric() {
        var p = WorkflowPolicy()
        p.faceMatchOperatingPoint = nil
        var e = Self.evidence(distance: 0.6)
        e.match?.metric = .cosine
        e.match?.model = FaceDescriptorModelName.faceReidentification0095
        let cosine = p.judge(e, reference: .portrait(Data()), challenge: nil, now: 0)
        XCTAssertEqual(cosine.matchThreshold, WorkflowPolicy.recognizerMaxCosineDistance)
        XCTAssertEqual(cosine.verdict, .matched)
        p.faceMatchMaxCosineDistance = 0.5
        XCTAssertEqual(p.judge(e, reference: .portrait(Data()), challenge: nil, now: 0).verdict, .notMatched)
        XCTAssertEqual(p.judge(Self.evidence(distance: 0.6), reference: .portrait(Data()), challenge: nil, now: 0).matchThreshold, 0.55)
    }

    /// A stored dlib template is replaced only by a MATCHED capture whose distance is within the
    /// fmr_0.01 line, whose own template is of another model, while the upgrade is on.
    func testLegacyTemplateReplacementNeedsAConfidentMatch() {
        var p = WorkflowPolicy()
        let dlib = FaceDescriptorModelName.dlibResNetV1
        func evidence(_ distance: Double, template: [UInt8] = [1, 2, 3]) -> SelfieEvidence {
            var e = Self.evidence(distance: distance)
            e.model = FaceDescriptorModelName.faceReidentification0095
            e.embedding = [0.1, 0.2]
            e.template = template
            return e
        }
        func judged(_ e: SelfieEvidence) -> SelfieJudgement { p.judge(e, reference: .template(Data()), challenge: nil, now: 0) }
        let confident = evidence(0.40), marginal = evidence(0.45)
        XCTAssertTrue(p.replacesStoredTemplate(confident, judgement: judged(confident), storedModel: dlib))
        // MATCHED at fmr_0.1 (0.502) but above the fmr_0.01 line (0.427): authenticated, not replaced.
        XCTAssertEqual(judged(marginal).verdict, .matched)
        XCTAssertFalse(p.replacesStoredTemplate(marginal, judgement: judged(marginal), storedModel: dlib))
        // Not matched, not live, already the new model, nothing to store, or switched off: never.
        let far = evidence(0.6)
        XCTAssertFalse(p.replacesStoredTemplate(far, judgement: judged(far), storedModel: dlib))
        var notLive = confident
        notLive.livenessScore = 10
        XCTAssertFalse(p.replacesStoredTemplate(notLive, judgement: judged(notLive), storedModel: dlib))
        XCTAssertFalse(p.replacesStoredTemplate(confident, judgement: judged(confident), storedModel: FaceDescriptorModelName.faceReidentification0095))
        let empty = evidence(0.40, template: [])
        XCTAssertFalse(p.replacesStoredTemplate(empty, judgement: judged(empty), storedModel: dlib))
        p.upgradeLegacyTemplates = false
        XCTAssertFalse(p.replacesStoredTemplate(confident, judgement: judged(confident), storedModel: dlib))
    }

    func testConfiguration() throws {
        func load(_ o: [String: String]) throws -> WorkflowPolicy { try ServerConfig.load(file: nil, environment: [:], overrides: o).engine.workflow }
        XCTAssertEqual(try load([:]).faceMatchOperatingPoint, .fmr1in1000)
        XCTAssertEqual(try load(["idv.face_match_operating_point": "fmr_0.01"]).faceMatchOperatingPoint, .fmr1in10000)
        XCTAssertNil(try load(["idv.face_match_operating_point": "distance"]).faceMatchOperatingPoint)
        XCTAssertThrowsError(try load(["idv.face_match_operating_point": "0.5"]))
        XCTAssertTrue(try load([:]).recaptureOnPoorCapture)
        XCTAssertFalse(try load(["idv.selfie_recapture_on_poor_quality": "false"]).recaptureOnPoorCapture)
        XCTAssertTrue(try load([:]).upgradeLegacyTemplates)
        XCTAssertFalse(try load(["idv.upgrade_legacy_templates": "false"]).upgradeLegacyTemplates)
        XCTAssertEqual(try load(["idv.face_match_max_cosine_distance": "0.5"]).faceMatchMaxCosineDistance, 0.5)
        XCTAssertThrowsError(try load(["idv.face_match_max_cosine_distance": "3"]))
    }

    func testPoorCapturesAreAskedAgainWithTheirOwnCode() {
        var p = WorkflowPolicy()
        XCTAssertNil(p.recapture(Self.evidence(distance: 0.3)))
        XCTAssertEqual(p.recapture(Self.evidence(distance: 0.3, issues: [.tooDark, .blurred])), .tooDark)
        let codes = CaptureIssue.allCases.map(\.errorCode)
        XCTAssertEqual(codes.map(\.rawValue), Array(1060...1065))
        XCTAssertTrue(codes.allSatisfy { $0.category == .media && !$0.message.isEmpty })
        // The face turned away weakens only the match: judged first, asked again only when live.
        let turned = Self.evidence(distance: 0.3, issues: [.offPose])
        XCTAssertNil(p.recapture(turned))
        XCTAssertEqual(p.recapture(turned, after: p.judge(turned, reference: .portrait(Data()), challenge: nil, now: 0)), .offPose)
        var print = turned
        print.livenessScore = 12
        XCTAssertNil(p.recapture(print, after: p.judge(print, reference: .portrait(Data()), challenge: nil, now: 0)))
        p.recaptureOnPoorCapture = false
        XCTAssertNil(p.recapture(Self.evidence(distance: 0.3, issues: [.tooDark])))
    }
}
