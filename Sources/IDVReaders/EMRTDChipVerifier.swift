import ChipAccess
import EMRTD
import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import Imaging

/// The production ``ChipVerifying``: EMRTD's `ChipReader` (ICAO 9303-10 parsing, ICAO 9303-11 §5.1
/// passive authentication with OpenSSL, DG1 against the printed MRZ) over the operator's trust
/// material from the store, and EMRTD's `ActiveAuthentication` (§6.1) over the step's own
/// challenge, its findings in the engine's typed form (IDVEvidence ``ChipEvidence``).
///
/// The parsed trust (`CSCATrust`) is cached by the records' digests: importing or removing
/// material takes effect on the next verification. A record that no longer parses (it was checked
/// on import) is left out and logged by id.
///
/// Errors: EF.SOD not a usable security object (truncated TLV, lengths past the end, a declared
/// length beyond the data, garbage CMS) → ``IDVError`` 1050 `chipDataUnreadable` naming the file
/// and the structural fault (never its content).
public final class EMRTDChipVerifier: ChipVerifying, @unchecked Sendable {
    // @unchecked: `cached` is read and written under `lock` only.
    private let lock = NSLock()
    private var cached: (key: [String], trust: CSCATrust)?

    public init() {}

    /// The trust of `records`: single certificates and CRLs first, then master lists and LDIF
    /// files (checked against what is trusted already, as `idvd chip verify --trust` does).
    public func trust(_ records: [TrustMaterialRecord]) -> CSCATrust {
        let key = records.map(\.sha256)
        // One caller builds the trust for a new set of records; the others wait for it and reuse it.
        return lock.withLock {
            if let c = cached, c.key == key { return c.trust }
            var trust = CSCATrust()
            let first: Set<String> = [TrustMaterialKind.cscaCertificate.rawValue, TrustMaterialKind.crl.rawValue, TrustMaterialKind.documentSignerCertificate.rawValue]
            for r in records.filter({ first.contains($0.kind) }) + records.filter({ !first.contains($0.kind) }) {
                do { trust.add(try TrustMaterial([UInt8](r.bytes), trusted: trust)) } catch {
                    Log.event("trust material left out", level: "warning", ["trust_id": .string(r.id), "kind": .string(r.kind)])
                }
            }
            cached = (key, trust)
            return trust
        }
    }

    /// SHA-1(MRZ_information) (ICAO 9303-11 §9.7.2) of the printed MRZ, as ChipAccess's ``MRZKey`` spells
    /// MRZ_information for a terminal; nil when the lines are not an MRZ with a document number and both dates.
    public func mrzInformationDigest(printedMRZ: [String]) -> [UInt8]? {
        guard let key = try? MRZKey(mrzLines: printedMRZ) else { return nil }
        return DigestAlgorithm.sha1.digest(Array(key.information.utf8))
    }

    public func verify(_ chip: ChipData, challenge: [UInt8]?, printedMRZ: [String], trust records: [TrustMaterialRecord], now: Int) throws -> ChipEvidence {
        let files = ChipFiles(sod: [UInt8](chip.sod), com: chip.com.map { [UInt8]($0) }, dataGroups: chip.dataGroups.mapValues { [UInt8]($0) })
        let report: ChipReport
        do {
            report = try ChipReader(trust: trust(records)).read(files, at: Date(timeIntervalSince1970: TimeInterval(now)),
                                                                printedMRZ: printedMRZ.isEmpty ? nil : printedMRZ)
        } catch let e as LDSError {
            throw IDVError(.chipDataUnreadable, "The chip's EF.SOD is not a usable security object (\(e))")
        } catch {
            throw IDVError(.chipDataUnreadable, "The chip's EF.SOD is not a usable security object")
        }
        let aa = Self.activeAuthentication(report, files: files, issued: challenge, answer: chip.activeAuthentication)
        var evidence = Self.evidence(of: report, printedMRZ: printedMRZ, dataGroups: chip.dataGroups.keys.sorted(), activeAuthentication: aa)
        evidence.reportedChipAuthentication = chip.reportedChipAuthentication
        return evidence
    }

    /// Active Authentication (ICAO 9303-11 §6.1) of the client's `answer` against the challenge this server
    /// `issued` for the step: no DG15 → not supported; no answer → not performed; an answer naming another challenge
    /// than the one issued (or any answer when none was issued) → replayed, its signature not looked at; otherwise
    /// EMRTD's verification over the issued challenge after passive authentication (`ActiveAuthentication.evaluate`).
    public static func activeAuthentication(_ report: ChipReport, files: ChipFiles, issued: [UInt8]?,
                                            answer: ClientActiveAuthentication?) -> ActiveAuthenticationResult {
        guard files.dataGroups[15] != nil else { return .notSupported }
        guard let answer else { return .notPerformed }
        guard let issued else { return .failed(.challengeReplayed, detail: "no_challenge_issued") }
        guard answer.challenge == issued else { return .failed(.challengeReplayed, detail: "challenge_not_this_steps") }
        return result(of: ActiveAuthentication.evaluate(report, files: files, challenge: issued, signature: [UInt8](answer.signature)))
    }

    /// The engine's Active Authentication outcome of EMRTD's evidence. A well-formed ISO/IEC 9796-2 message whose
    /// hash is not that of the challenge (`digest_mismatch`) was made by the chip's own key over another challenge:
    /// replayed. Every other fault of the signature is `signature_invalid`; of the key or algorithm
    /// `unsupported_algorithm`.
    public static func result(of e: ActiveAuthenticationEvidence) -> ActiveAuthenticationResult {
        switch e.outcome {
        case .verified: return .verified(mechanism: e.mechanism?.description ?? "verified")
        case .notSupported: return .notSupported
        case .notPerformed: return .notPerformed
        case .keyNotAuthenticated: return .failed(.keyNotAuthenticated, detail: "key_not_authenticated")
        case .failed:
            let f = e.failure ?? .signatureInvalid
            switch f {
            case .digestMismatch: return .failed(.challengeReplayed, detail: f.rawValue)
            case .signatureInvalid, .signatureLength, .signatureOutOfRange, .badPadding, .badTrailer: return .failed(.signatureInvalid, detail: f.rawValue)
            case .malformedPublicKey, .unsupportedKey, .signatureAlgorithmNotNamed, .unsupportedSignatureAlgorithm, .unsupportedHash:
                return .failed(.unsupportedAlgorithm, detail: f.rawValue)
            }
        }
    }

    /// The engine's evidence of a chip report, with the Active Authentication outcome (``activeAuthentication(_:files:issued:answer:)``).
    public static func evidence(of report: ChipReport, printedMRZ: [String], dataGroups: [Int], activeAuthentication: ActiveAuthenticationResult) -> ChipEvidence {
        let pa = report.passiveAuthentication
        var failures: [ChipFailure] = []
        for f in pa.failures {
            switch f {
            case .signatureInvalid: failures.append(.signatureInvalid)
            case .securityObjectDigestMismatch: failures.append(.securityObjectDigestMismatch)
            case .documentSignerMissing: failures.append(.documentSignerMissing)
            case .unsupportedAlgorithm: failures.append(.unsupportedAlgorithm)
            case .dataGroupHashMismatch: failures.append(.dataGroupHashMismatch)
            case .dataGroupNotInSecurityObject:
                let unsigned = pa.dataGroups.filter { $0.outcome == .notInSecurityObject }.map(\.dataGroup)
                if unsigned.contains(where: { $0 == 1 || $0 == 2 }) { failures.append(.usedDataGroupNotSigned) }
                if unsigned.contains(where: { $0 != 1 && $0 != 2 }) { failures.append(.otherDataGroupNotSigned) }
            case .cscaUnknown: failures.append(.cscaUnknown)
            case .cscaSignatureInvalid: failures.append(.cscaSignatureInvalid)
            case .documentSignerRevoked: failures.append(.documentSignerRevoked)
            case .documentSignerExpired: failures.append(.documentSignerExpired)
            case .documentSignerNotYetValid: failures.append(.documentSignerNotYetValid)
            case .cscaExpired: failures.append(.cscaExpired)
            case .cscaNotYetValid: failures.append(.cscaNotYetValid)
            }
        }
        let mrz: ChipMRZComparison
        if printedMRZ.isEmpty { mrz = .noPrintedMRZ }
        else if let c = report.mrzCrossCheck { mrz = c.outcome == .matches ? .matches : .differs(c.differingFields) }
        else { mrz = .noDataGroup1 }
        var unparsed = report.parseErrors.map { "\($0.file)" }
        var portrait: Data?
        if let face = report.portrait {
            do { portrait = try ChipPortrait.image(face).jpegData(quality: 92) } catch { unparsed.append("DG2 image") }
        }
        // The signer certificates' countries beside DG1's issuing state (ICAO 9303-12 §7.1), when both exist.
        var countries: ChipSignerCountries?
        if let state = report.issuingState, pa.documentSigner != nil {
            let c = pa.signerCountries
            countries = ChipSignerCountries(issuingState: state.code, expectedCountries: state.x509CountryNames, documentSigner: c.documentSigner,
                                            documentSignerIssuer: c.documentSignerIssuer, csca: pa.chain.outcome == .trusted ? c.csca : nil)
        }
        return ChipEvidence(failures: failures, mrz: mrz, dataGroups: dataGroups, hashAlgorithm: pa.hashAlgorithm.rawValue,
                            documentSignerFingerprint: pa.documentSigner?.fingerprint, cscaFingerprint: pa.chain.csca?.fingerprint,
                            portraitJPEG: portrait, unparsedFiles: unparsed, signerCountries: countries, activeAuthentication: activeAuthentication)
    }
}

/// The chip portrait (DG2's first face, ISO/IEC 19794-5) as an image: JPEG through the project's
/// decoder, JPEG 2000 through OpenJPEG (EMRTD `JPEG2000`).
public enum ChipPortrait {
    /// `image` on a mid-grey canvas 50 % larger in each dimension, centred (a chip or page portrait
    /// is all face: the margin gives the face detector's window room around it).
    public static func padded(_ image: Imaging.Image) throws -> Imaging.Image {
        try PortraitCanvas.padded(image)
    }

    /// DG2 face `face` decoded. Throws the decoder's error.
    public static func image(_ face: DG2.Face) throws -> Imaging.Image {
        switch face.imageDataType {
        case .jpeg: return try Imaging.Image(data: Data(face.imageData))
        case .jpeg2000:
            let p = try JPEG2000.decode(face.imageData)
            return try Imaging.Image(pixels: p.pixels, width: p.width, height: p.height, format: p.channels == 3 ? .rgb : .gray)
        }
    }
}
