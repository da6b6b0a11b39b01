import Foundation
import IDVCore

extension IDVFlowSteps {
    // MARK: Parsing (malformed answers are refused here, before anything is measured)

    static func confirm(_ a: WireAnswer, _ key: String) throws -> Bool {
        guard let b = a.payload[key]?.boolValue else { throw IDVError(.malformedRequest, "payload.\(key) (boolean) is required") }
        return b
    }

    /// `payload.rescan` (optional boolean) of a document-details answer: the Recapture button.
    static func isRescan(_ a: WireAnswer) throws -> Bool {
        guard let c = a.payload["rescan"], !c.isNull else { return false }
        guard let b = c.boolValue else { throw IDVError(.malformedRequest, "payload.rescan must be a boolean") }
        return b
    }

    static func isCancel(_ a: WireAnswer) throws -> Bool {
        guard let c = a.payload["cancel"] else { return false }
        guard let b = c.boolValue else { throw IDVError(.malformedRequest, "payload.cancel must be a boolean") }
        return b
    }

    /// Decodes one base64 image; refuses (nothing committed) what is not base64.
    static func image(_ v: JSONValue?, _ path: String) throws -> Data {
        guard let s = v?.stringValue else { throw IDVError(.malformedRequest, "\(path) (base64 string) is required") }
        guard let d = Data(base64Encoded: s, options: .ignoreUnknownCharacters), !d.isEmpty else {
            throw IDVError(.malformedRequest, "\(path) is not base64 image data")
        }
        return d
    }

    func parseDocumentStart(_ a: WireAnswer) throws -> IDVInput { .confirm(try Self.confirm(a, "is_confirm")) }

    /// The document pages of an upload answer, by `page_index`; 1001 when malformed.
    func parsePages(_ a: WireAnswer, _ policy: WorkflowPolicy) throws -> IDVInput {
        if try Self.isCancel(a) { return .cancel }
        guard let pagesJSON = a.payload["pages"]?.arrayValue, !pagesJSON.isEmpty else {
            throw IDVError(.malformedRequest, "payload.pages (non-empty array) is required")
        }
        guard pagesJSON.count <= policy.maxPages else { throw IDVError(.malformedRequest, "at most \(policy.maxPages) pages per upload") }
        var pages = [Data](repeating: Data(), count: pagesJSON.count)
        for (i, p) in pagesJSON.enumerated() {
            let idx = p["page_index"]?.intValue ?? i
            guard idx >= 0, idx < pagesJSON.count, pages[idx].isEmpty else {
                throw IDVError(.malformedRequest, "payload.pages[\(i)].page_index must be unique and in 0..<\(pagesJSON.count)")
            }
            pages[idx] = try Self.image(p["image"], "payload.pages[\(i)].image")
        }
        return .pages(pages, chip: try Self.chip(a.payload["chip"]))
    }

    /// The optional `payload.chip` of a document upload (IDVCore ``ChipFilesPayload``: base64 EF.SOD,
    /// EF.COM, data groups 1…16; 4 MiB a file, 8 MiB together); 1001 when malformed — nothing stored.
    static func chip(_ v: JSONValue?) throws -> ChipData? {
        guard let v, !v.isNull else { return nil }
        guard v.objectValue != nil else { throw IDVError(.malformedRequest, "payload.chip must be an object {sod, com, data_groups}") }
        let p: ChipFilesPayload
        do { p = try v.decode(ChipFilesPayload.self) } catch {
            throw IDVError(.malformedRequest, "payload.chip must be {\"sod\": base64, \"com\": base64, \"data_groups\": {\"1\": base64, …}}")
        }
        do {
            let d = try p.decoded()
            return ChipData(sod: d.sod, com: d.com, dataGroups: d.dataGroups)
        } catch {
            throw IDVError(.malformedRequest, "payload.chip: \(error.description)")
        }
    }

    func parseSelfieStart(_ a: WireAnswer) throws -> IDVInput {
        let ok = try Self.confirm(a, "is_confirm")
        if let b = a.payload["use_back_camera"], b.boolValue == nil { throw IDVError(.malformedRequest, "payload.use_back_camera must be a boolean") }
        return .confirm(ok)
    }

    /// The selfie frames of an upload answer, its frame rate (`fps`: frames per second, a number
    /// in (0, 240]; absent: the analyser's default) and its `meta_data` (an object, sanitised:
    /// ``SelfieCaptureMetadata/init(sanitising:)``); 1001 when malformed.
    func parseFrames(_ a: WireAnswer, _ policy: WorkflowPolicy) throws -> IDVInput {
        if try Self.isCancel(a) { return .cancel }
        guard let framesJSON = a.payload["frames"]?.arrayValue, !framesJSON.isEmpty else {
            throw IDVError(.malformedRequest, "payload.frames (non-empty array of base64 images) is required")
        }
        guard framesJSON.count <= policy.maxFrames else { throw IDVError(.malformedRequest, "at most \(policy.maxFrames) frames per upload") }
        let frames = try framesJSON.enumerated().map { try Self.image($0.element, "payload.frames[\($0.offset)]") }
        var fps: Double?
        if let v = a.payload["fps"], !v.isNull {
            guard let x = v.doubleValue, x > 0, x <= 240 else {
                throw IDVError(.malformedRequest, "payload.fps must be a number of frames per second in (0, 240]")
            }
            fps = x
        }
        var meta: SelfieCaptureMetadata?
        if let v = a.payload["meta_data"], !v.isNull {
            guard let m = SelfieCaptureMetadata(sanitising: v) else { throw IDVError(.malformedRequest, "payload.meta_data must be an object") }
            meta = m
        }
        return .frames(frames, framesPerSecond: fps, metaData: meta)
    }

    func parseReauth(_ step: ReauthStep, _ a: WireAnswer, _ ch: PendingChallenge) throws -> IDVInput {
        if try Self.isCancel(a) { return .cancel }
        switch step {
        case .password:
            guard let pw = a.payload["password"]?.stringValue, !pw.isEmpty, pw.count <= PasswordPolicy.maxAnswerBytes,
                  pw.utf8.count <= PasswordPolicy.maxAnswerBytes else {
                throw IDVError(.malformedRequest, "payload.password (string) or payload.cancel = true is required")
            }
            return .password(pw)
        case .lda:
            if a.payload["fallback"]?.stringValue == "password" { return .ldaFallback }
            guard let sig = a.payload["signature"]?.stringValue else {
                throw IDVError(.malformedRequest, "payload.signature (base64), payload.fallback = \"password\" or payload.cancel = true is required")
            }
            return .ldaSignature(sig, challengeID: ch.challengeID, nonce: ch.payload["nonce"]?.stringValue)
        }
    }

}
