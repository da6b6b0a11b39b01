import Foundation
import IDVCore

extension FlowEngine {
    // MARK: Evidence (outside any transaction)

    static let retryableUploadErrors: Set<IDVErrorCode> = [.invalidImage, .imageTooLarge, .noDocumentFound, .documentGlare, .noFaceFound]

    /// Measures what `request` asks for: reads, decrypts and analyses without the write lock.
    func gather(_ request: EvidenceRequest, subject: String?, runID: String) throws -> Evidence {
        var e = Evidence()
        switch request {
        case .none:
            break
        case let .document(pages, chip, chipChallenge):
            guard let reader = services?.documents else { throw IDVError(.workflowUnavailable, "this server has no document reader") }
            var verifier: (any ChipVerifying)?
            if chip != nil {
                guard let v = services?.chips else { throw IDVError(.workflowUnavailable, "this server does not verify chip data") }
                verifier = v
            }
            // Costed from the pages' headers and admitted before any pixel is decoded (1100/1101/1102).
            let admitted = try admission.admit(cost: services?.costing?.cost(pages: pages) ?? .zero, run: runID, user: subject)
            defer { admission.release(admitted) }
            e.judgedImages = JudgedImage.document(pages: pages, sod: chip?.sod, crypto: crypto)
            do {
                let (doc, ms) = try Self.timed { () throws -> DocumentEvidence in
                    var doc = try reader.read(pages: pages)
                    // The chip is verified only with a readable page (its MRZ is DG1's comparison); a
                    // chip whose EF.SOD is unusable refuses the answer (1050, nothing stored).
                    if let chip, let verifier {
                        let trust = try store.trustMaterials()
                        doc.chip = try verifier.verify(chip, challenge: chipChallenge, printedMRZ: doc.mrzLines, trust: trust, now: clock.now())
                        // An authentic chip's face against the page's printed one (a substituted photo).
                        if let comparer = services?.portraits, let c = doc.chip, settings.workflow.chipAuthentic(c),
                           let printed = doc.portraitJPEG, let face = doc.chip?.portraitJPEG {
                            doc.chipPortraitComparison = try? comparer.compare(printed: printed, chip: face)
                        }
                    }
                    return doc
                }
                e.document = .success(Timed(doc, milliseconds: ms))
            } catch let err as IDVError where IDVErrorCode(rawValue: err.longErrorCode).map(Self.retryableUploadErrors.contains) ?? false {
                e.document = .failure(err)
            }
        case let .selfie(frames, fps, referenceRequest, challenge, nameMedia, presence):
            guard let analyser = services?.selfies else { throw IDVError(.workflowUnavailable, "this server has no selfie analyser") }
            if let id = nameMedia, let m = try store.media(id), m.runID == runID {
                e.displayName = String(decoding: try vault().open(m.sealed, associatedData: VaultBinding.media(runID: runID, kind: MediaKind.name.rawValue)),
                                       as: UTF8.self)
            }
            guard let reference = try resolve(referenceRequest, subject: subject, runID: runID, into: &e) else {
                e.referenceMissing = true
                return e
            }
            e.reference = reference
            // Costed from the frames' headers and admitted before any pixel is decoded (1100/1101/1102).
            let admitted = try admission.admit(cost: services?.costing?.cost(frames: frames) ?? .zero, run: runID, user: subject)
            defer { admission.release(admitted) }
            e.judgedImages = JudgedImage.selfie(frames: frames, crypto: crypto)
            do {
                let (v, ms) = try Self.timed {
                    try analyser.analyze(frames: frames, framesPerSecond: fps, against: reference, challenge: challenge,
                                         illumination: presence.illumination)
                }
                e.selfie = .success(Timed(v, milliseconds: ms))
                (e.captureDigests, e.replayedFrames) = try captureReplay(frames)
            } catch let err as IDVError where IDVErrorCode(rawValue: err.longErrorCode).map(Self.retryableUploadErrors.contains) ?? false {
                e.selfie = .failure(err)
            }
        case let .passwordCheck(password):
            let hash = try subject.flatMap { try store.user($0) }?.passwordHash
            e.basis.dependsOnPassword = true
            e.basis.passwordHash = hash
            e.passwordMatches = hash.map { crypto.verifyPassword(password, hash: $0) } ?? false
        case let .passwordHash(password):
            e.passwordHash = try crypto.hashPassword(password, parameters: settings.argon2)
        }
        return e
    }

    /// The reference a selfie is compared with; nil when a template-only reference has no template.
    func resolve(_ r: ReferenceRequest, subject: String?, runID: String, into e: inout Evidence) throws -> MatchReference? {
        func portrait(_ mediaID: String) throws -> MatchReference {
            guard let m = try store.media(mediaID), m.runID == runID else {
                throw IDVError(.internalError, "no confirmed document portrait to match")
            }
            return .portrait(Data(try vault().open(m.sealed, associatedData: VaultBinding.media(runID: runID, kind: MediaKind.portrait.rawValue))))
        }
        switch r {
        case .none:
            return MatchReference.none
        case let .portrait(mediaID):
            return try portrait(mediaID)
        case let .template(orPortrait):
            e.basis.dependsOnTemplate = true
            if let uid = subject, let t = try store.biometricTemplate(userID: uid) {
                e.basis.templateDigest = templateFacts(t).digest
                return .template(Data(try vault().openTemplateBytes(t.sealed, userID: uid)))
            }
            return try orPortrait.map(portrait)
        }
    }

    /// `body`'s value and its wall time in milliseconds.
    static func timed<T>(_ body: () throws -> T) throws -> (T, Int) {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let v = try body()
        return (v, Int((DispatchTime.now().uptimeNanoseconds - t0) / 1_000_000))
    }

}
