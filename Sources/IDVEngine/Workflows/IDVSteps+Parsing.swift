import Foundation
import IDVCore

// The answers of the IDV steps read once: the payload decoded as its challenge's answer type
// (IDVCore Answers.swift, the types the SDK encodes), then checked against the settings and turned
// into the flow's ``IDVInput``. A malformed answer is refused here (1001), before anything is
// measured or stored.

extension IDVFlowSteps {
    /// Decodes one base64 image; refuses (nothing committed) what is not base64.
    static func image(_ base64: String, _ path: String) throws -> Data {
        guard let d = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !d.isEmpty else {
            throw IDVError(.malformedRequest, "\(path) is not base64 image data")
        }
        return d
    }

    /// `{"is_confirm": Bool}` (``ConfirmAnswer``).
    func parseConfirm(_ a: WireAnswer) throws -> IDVInput { .confirm(try answer(a, as: ConfirmAnswer.self).isConfirm) }

    /// The document-details answer (``DocumentDetailsAnswer``): `rescan: true` is the Recapture
    /// button (seed 000 L1821, seed 002 L2138) and scans again; otherwise `is_confirm`. In KYC a plain
    /// `is_confirm: false` stays the Close button's cancel API (seed 000 L1265, 240); in activation a
    /// `false` rescans too (the flow's own rule).
    func parseDocumentDetails(_ a: WireAnswer) throws -> IDVInput {
        let d = try answer(a, as: DocumentDetailsAnswer.self)
        if d.rescan == true { return .action(.reinitDocumentScan) }
        return .confirm(d.isConfirm)
    }

    /// The document pages of an upload answer (``DocumentPagesAnswer``), by `page_index`, at most
    /// `idv.max_pages`; 1001 when malformed.
    func parsePages(_ a: WireAnswer, _ policy: WorkflowPolicy) throws -> IDVInput {
        if try isCancel(a) { return .cancel }
        let upload = try answer(a, as: DocumentPagesAnswer.self)
        guard let sent = upload.pages, !sent.isEmpty else { throw IDVError(.malformedRequest, "payload.pages (non-empty array) is required") }
        guard sent.count <= policy.maxPages else { throw IDVError(.malformedRequest, "at most \(policy.maxPages) pages per upload") }
        var pages = [Data](repeating: Data(), count: sent.count)
        for (i, p) in sent.enumerated() {
            let idx = p.pageIndex ?? i
            guard idx >= 0, idx < sent.count, pages[idx].isEmpty else {
                throw IDVError(.malformedRequest, "payload.pages[\(i)].page_index must be unique and in 0..<\(sent.count)")
            }
            pages[idx] = try Self.image(p.image, "payload.pages[\(i)].image")
        }
        if upload.chipFollows == true {
            guard upload.chip == nil else { throw IDVError(.malformedRequest, "payload.chip_follows and payload.chip exclude each other") }
            // A server that verifies no chips asks for none: the pages are the whole upload.
            return services.chips == nil ? .pages(pages, chip: nil) : .pagesThenChip(pages)
        }
        return .pages(pages, chip: try upload.chip.map(Self.chip))
    }

    /// The `readIDVDocumentChip` answer (IDVCore ``DocumentChipAnswer``): the chip files, a skip, or a cancel.
    func parseDocumentChip(_ a: WireAnswer) throws -> IDVInput {
        if try isCancel(a) { return .cancel }
        let sent = try answer(a, as: DocumentChipAnswer.self)
        if let chip = sent.chip {
            guard sent.skip != true else { throw IDVError(.malformedRequest, "payload.chip and payload.skip exclude each other") }
            return .chipFiles(try Self.chip(chip))
        }
        guard sent.skip == true else { throw IDVError(.malformedRequest, "payload.chip (the chip files) or payload.skip: true is required") }
        return .chipFiles(nil)
    }

    /// The `payload.chip` of a document upload (IDVCore ``ChipFilesPayload``: base64 EF.SOD, EF.COM,
    /// data groups 1…16; 4 MiB a file, 8 MiB together) decoded; 1001 when malformed — nothing stored.
    static func chip(_ p: ChipFilesPayload) throws -> ChipData {
        do {
            let d = try p.decoded()
            let aa = try p.activeAuthentication.map { (a: ActiveAuthenticationAnswer) throws(ChipFilesPayload.Invalid) -> ClientActiveAuthentication in
                let (challenge, signature) = try a.decoded()
                return ClientActiveAuthentication(challenge: challenge, signature: signature)
            }
            return ChipData(sod: d.sod, com: d.com, dataGroups: d.dataGroups, activeAuthentication: aa,
                            reportedChipAuthentication: p.chipAuthentication.flatMap { ReportedChipAuthentication(rawValue: $0.rawValue) })
        } catch {
            throw IDVError(.malformedRequest, "payload.chip: \(error.description)")
        }
    }

    /// `{"is_confirm": Bool, "use_back_camera"?: Bool}` (``SelfieStartAnswer``).
    func parseSelfieStart(_ a: WireAnswer) throws -> IDVInput { .confirm(try answer(a, as: SelfieStartAnswer.self).isConfirm) }

    /// The selfie frames of an upload answer (``SelfieFramesAnswer``), at most `idv.max_frames`,
    /// their frame rate (`fps`: frames per second, a number in (0, 240]; absent: the analyser's
    /// default), their `meta_data` (an object, sanitised: ``SelfieCaptureMetadata/init(sanitising:)``)
    /// and their presence against the pending challenge `ch` (`frame_times_ms`, or a decline of the
    /// illumination sequence: Workflows/Presence.swift); 1001 when malformed.
    func parseFrames(_ a: WireAnswer, _ policy: WorkflowPolicy, _ ch: PendingChallenge) throws -> IDVInput {
        if try isCancel(a) { return .cancel }
        let upload = try answer(a, as: SelfieFramesAnswer.self)
        if let decline = try Self.presenceDecline(upload, ch) {
            guard upload.frames == nil else { throw IDVError(.malformedRequest, "payload.presence declines the sequence: send no frames with it") }
            return .presenceDeclined(how: decline.rawValue)
        }
        guard let sent = upload.frames, !sent.isEmpty else {
            throw IDVError(.malformedRequest, "payload.frames (non-empty array of base64 images) is required")
        }
        guard sent.count <= policy.maxFrames else { throw IDVError(.malformedRequest, "at most \(policy.maxFrames) frames per upload") }
        let frames = try sent.enumerated().map { try Self.image($0.element, "payload.frames[\($0.offset)]") }
        if let x = upload.fps, !(x > 0 && x <= 240) {
            throw IDVError(.malformedRequest, "payload.fps must be a number of frames per second in (0, 240]")
        }
        var meta: SelfieCaptureMetadata?
        if let v = upload.metaData {
            guard let m = SelfieCaptureMetadata(sanitising: v) else { throw IDVError(.malformedRequest, "payload.meta_data must be an object") }
            meta = m
        }
        guard let presence = try Self.capturePresence(upload, ch, frameCount: frames.count) else { return .presenceDeclined(how: "no_frame_times") }
        return .frames(frames, framesPerSecond: upload.fps, metaData: meta, presence: presence)
    }

    /// Re-authentication (seed 004): ``PasswordAnswer`` or ``DeviceSignatureAnswer``, or a cancel.
    func parseReauth(_ step: ReauthStep, _ a: WireAnswer, _ ch: PendingChallenge) throws -> IDVInput {
        if try isCancel(a) { return .cancel }
        switch step {
        case .password:
            guard let pw = try answer(a, as: PasswordAnswer.self).password, !pw.isEmpty, pw.count <= PasswordPolicy.maxAnswerBytes,
                  pw.utf8.count <= PasswordPolicy.maxAnswerBytes else {
                throw IDVError(.malformedRequest, "payload.password (string) or payload.cancel = true is required")
            }
            return .password(pw)
        case .lda:
            let lda = try answer(a, as: DeviceSignatureAnswer.self)
            if lda.fallsBackToPassword { return .ldaFallback }
            guard let sig = lda.signature else {
                throw IDVError(.malformedRequest, "payload.signature (base64), payload.fallback = \"password\" or payload.cancel = true is required")
            }
            return .ldaSignature(sig, challengeID: ch.challengeID, nonce: ch.nonce)
        }
    }
}
