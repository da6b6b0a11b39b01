import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime

// TEST DOUBLES of the engine's two analyser protocols. They do not analyse: they recognise the
// shared test images by SHA-256 and return scripted evidence, so every state-machine transition can
// be driven deterministically. The evidence has the real readers' shape — DocumentReader's check
// ids, findings and measurements (a TD3 passport's full check list), FaceKit's liveness cue codes —
// so the policy and the payload builders see in tests what they see in production.

/// The shared test images the doubles know (`../shared/testdata/faces`, `liveness`).
public enum TestImages {
    public static func load(_ rel: String) throws -> Data { try TestData.sharedFile(rel) }

    public static func obamaPassportPage() throws -> Data { try load("faces/obama.jpg") }
    public static func expiredPassportPage() throws -> Data { try load("faces/obama3.jpg") }
    public static func badCheckDigitPage() throws -> Data { try load("faces/obama_small.jpg") }
    public static func noDocumentPage() throws -> Data { try load("faces/two_people.jpg") }
    public static func obamaSelfie() throws -> Data { try load("faces/obama2.jpg") }
    public static func obamaSelfie2() throws -> Data { try load("faces/obama-480p.jpg") }
    public static func wrongPersonSelfie() throws -> Data { try load("faces/biden.jpg") }
    /// A printed photo held to the camera (ISO/IEC 30107-3 print attack), Silent-Face-Anti-Spoofing.
    public static func printAttack() throws -> Data { try load("liveness/attacks/stills/image_F1.jpg") }

    /// The key the doubles recognise an image by: SHA-256, lowercase hex.
    public static func key(_ d: Data) -> String { Crypto.hex(Crypto.sha256(Array(d))) }
}

/// Document evidence in DocumentReader's shape, for doubles and policy tests.
public enum ReaderEvidence {
    /// The check list DocumentReader produces for a TD3 passport read on page 0 with a portrait:
    /// MRZ present and readable, the five TD3 check digits, form, mandatory fields, expiry, birth
    /// date, the two codes, image quality, portrait, chip. `checkDigitsValid` false fails the
    /// document-number and composite check digits (and, as the parser does, the MRZ as a whole);
    /// `expiredOn` fails the expiry check.
    public static func passport(_ fields: DocumentFields, page: Data, checkDigitsValid: Bool = true, expired: Bool = false,
                                portrait: Bool = true) -> DocumentEvidence {
        let expiry = fields.dateOfExpiry ?? "?"
        var checks = [CheckOutcome(.mrzPresent, .passed, .page(0)), CheckOutcome(.mrzReadable, .passed, .format(fields.format))]
        checks += [DocumentCheckID.mrzCheckDigitDocumentNumber, .mrzCheckDigitBirthDate, .mrzCheckDigitExpiryDate,
                   .mrzCheckDigitOptionalData, .mrzCompositeCheckDigit].map { id in
            CheckOutcome(id, checkDigitsValid || (id != .mrzCheckDigitDocumentNumber && id != .mrzCompositeCheckDigit) ? .passed : .failed)
        }
        checks += [
            CheckOutcome(.mrzFieldsWellFormed, .passed),
            CheckOutcome(.requiredFieldsPresent, .passed, .missingFields([])),
            CheckOutcome(.documentNotExpired, expired ? .failed : .passed, expired ? .expiredOn(expiry) : .validUntil(expiry)),
            CheckOutcome(.birthDatePlausible, .passed, .plausibleBirthDate),
            CheckOutcome(.issuingStateCodeKnown, .passed, .code(fields.issuingState)),
            CheckOutcome(.nationalityCodeKnown, .passed, .code(fields.nationality ?? fields.issuingState)),
            CheckOutcome(.imageSharp, .passed, .sharpness(0.41, threshold: 0.22)),
            CheckOutcome(.noGlareOnMRZ, .passed, .saturatedFraction(0)),
            CheckOutcome(.resolution, .passed, .capHeight(21.5, minimum: 8)),
            CheckOutcome(.portraitFound, portrait ? .passed : .failed, .portrait(portrait ? .found : .notFound)),
            CheckOutcome(.chipVerification, .notPerformed, .chipNotSupported),
        ]
        var findings: [DocumentFinding] = []
        if !checkDigitsValid {
            findings.append(.mrzError(detail: "document_number check digit fails: expected 7, found '3'"))
            findings.append(.mrzError(detail: "composite check digit fails: expected 2, found '8'"))
        }
        if expired { findings.append(.expired(date: expiry)) }
        if !portrait { findings.append(.noPortrait) }
        return DocumentEvidence(fields: fields, checks: checks, findings: findings, mrzValid: checkDigitsValid,
                                    mrzCheckDigitsValid: checkDigitsValid, portraitJPEG: portrait ? page : nil, pageImages: [page])
    }
}

/// TEST DOUBLE of ``DocumentReading``: scripted reader evidence for known shared test images.
public struct TestDoubleDocumentReader: DocumentReading {
    public let scripts: [String: DocumentEvidence]

    public init() throws {
        func report(_ page: Data, number: String, expiry: String, expired: Bool = false, mrzValid: Bool = true) -> DocumentEvidence {
            ReaderEvidence.passport(DocumentFields(documentType: "P", format: "TD3", issuingState: "USA", surname: "OBAMA", givenNames: "BARACK",
                                                   documentNumber: number, nationality: "USA", dateOfBirth: "1961-08-04", sex: "M",
                                                   dateOfExpiry: expiry),
                                    page: page, checkDigitsValid: mrzValid, expired: expired)
        }
        var s: [String: DocumentEvidence] = [:]
        let ok = try TestImages.obamaPassportPage()
        s[TestImages.key(ok)] = report(ok, number: "P1234567", expiry: "2035-01-01")
        let expired = try TestImages.expiredPassportPage()
        s[TestImages.key(expired)] = report(expired, number: "P7654321", expiry: "2015-01-01", expired: true)
        let bad = try TestImages.badCheckDigitPage()
        s[TestImages.key(bad)] = report(bad, number: "P1111111", expiry: "2035-01-01", mrzValid: false)
        scripts = s
    }

    public func read(pages: [Data]) throws -> DocumentEvidence {
        guard let first = pages.first, first.starts(with: [0xFF, 0xD8]) || first.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
            throw IDVError(.invalidImage)
        }
        guard let r = scripts[TestImages.key(first)] else { throw IDVError(.noDocumentFound) }
        return r
    }
}

/// TEST DOUBLE of ``SelfieAnalysing``: knows who is on each shared test image and whether the
/// capture is live; builds a 128-d one-hot "descriptor" per person so templates round-trip. A
/// print attack carries FaceKit's cues for a flat picture (`NO_BLINK`, `RIGID_MOTION`).
public struct TestDoubleSelfieAnalyser: SelfieAnalysing {
    /// sha → (person index, live)
    public let people: [String: (Int, Bool)]

    public init() throws {
        var p: [String: (Int, Bool)] = [:]
        for d in [try TestImages.obamaPassportPage(), try TestImages.obamaSelfie(), try TestImages.obamaSelfie2(),
                  try TestImages.expiredPassportPage(), try TestImages.badCheckDigitPage()] { p[TestImages.key(d)] = (1, true) }
        p[TestImages.key(try TestImages.wrongPersonSelfie())] = (2, true)
        p[TestImages.key(try TestImages.printAttack())] = (3, false)
        people = p
    }

    public static func descriptor(_ person: Int) -> [Float] { (0..<128).map { $0 == person ? 1 : 0 } }

    /// A challenge with a fresh random nonce (the double judges no actions).
    public func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
        LivenessChallenge(nonce: Crypto.randomID(), actions: ["TURN_LEFT", "BLINK"], durationSeconds: Double(durationSeconds),
                          deadlineSeconds: deadlineSeconds, expiresAt: now + deadlineSeconds)
    }

    /// Passive evidence only: a challenge is not evaluated (the evidence names no nonce).
    public func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                        challenge: LivenessChallenge?) throws -> SelfieEvidence {
        guard let f = frames.first, f.starts(with: [0xFF, 0xD8]) || f.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw IDVError(.invalidImage) }
        guard let (person, live) = people[TestImages.key(f)] else { throw IDVError(.noFaceFound) }
        let other: Int?
        switch reference {
        case let .portrait(p): other = people[TestImages.key(p)]?.0
        case let .template(t): other = (0..<t.count / 4).first { t[t.startIndex + 4 * $0 + 3] == 0x3F }   // version 1: 1.0f = 00 00 80 3F
        case .none: other = nil
        }
        let distance: Double? = reference == .none ? nil : (other == person ? 0.35 : 0.95)
        return SelfieEvidence(livenessScore: live ? 91 : 12, livenessCues: live ? [] : [LivenessCue("NO_BLINK"), LivenessCue("RIGID_MOTION")],
                              match: distance.map { FaceMatchEvidence(distance: $0, score: 1 - $0 / 1.2) },
                              frameCount: frames.count, trackedFrameCount: frames.count, framesPerSecond: framesPerSecond ?? 10,
                              bestFrameIndex: 0, bestFrameJPEG: f, embedding: Self.descriptor(person), model: "test-double")
    }
}
