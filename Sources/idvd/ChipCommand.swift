import DocumentReader
import EMRTD
import FaceKit
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders
import Imaging
import Foundation

extension Command {
    static let chip = Command(name: "chip", summary: "eMRTD chip: passive authentication (chip verify --help); a virtual chip (chip emulate --help)") { args in
        let usage = """
        usage: idvd chip verify (--sod F [--dg1 F] [--dg2 F] [--com F] [--dg N=F …] | --dir CHIPDIR) [--trust FILE|DIR …]
                                [--mrz L1 L2 [L3]] [--page IMAGE] [--at YYYY-MM-DD] [--portrait-out FILE.png|.jpg]
                                [--aa-challenge HEX --aa-signature FILE]
          Parses the chip's elementary files (ICAO 9303-10) and runs passive authentication (ICAO 9303-11 §5.1):
          the SOD's signature with its document signer, every data group's hash, the document signer's chain to
          a trusted CSCA, revocation by CRL and validity dates. Trust (--trust, repeatable) is CSCA certificates,
          CSCA master lists (their own signature is verified), CRLs, document signer certificates or ICAO PKD
          LDIF files; a directory is read one level deep. --mrz compares DG1 with the printed MRZ.
          --dir reads EF_SOD.bin, EF_COM.bin and DG<n>.bin from a directory (as idvd specimen --chip writes them;
          its private/ folder and EF_CardAccess.bin are not read).
          --aa-challenge HEX (16 hexadecimal digits: the 8-byte challenge) and --aa-signature FILE (the chip's
          INTERNAL AUTHENTICATE response, raw bytes) check an Active Authentication signature offline (ICAO 9303-11
          §6.1): with DG15's key, after passive authentication verified DG15's hash (RSA: ISO/IEC 9796-2 scheme 1;
          ECDSA: the hash DG14's ActiveAuthenticationInfo names). Without them Active Authentication is reported
          not performed (not supported without DG15).
          --page reads the data page image (DocumentReader): its MRZ is the printed MRZ for the DG1 cross-check
          (unless --mrz is given) and its portrait is compared with DG2's (FaceKit descriptors: distance, similarity).
          --at checks dates at that day (UTC) instead of now. --portrait-out writes DG2's first face image.
          Prints the typed evidence as JSON, and under "policy" what the server's default policy makes of it: the
          chip reason code (nfc_scan_status_reason_code) and its sentence, and any signer-country mismatch (the
          document signer's or CSCA's countryName is not DG1's issuing state, ICAO 9303-12 §7.1).
          Exit 0: passive authentication passed and the policy does not make the document INVALID (a chip without
          a verified Active Authentication is a WARNING: a copy is not excluded); 1: passive authentication failed,
          or the policy's reading is INVALID (signer_country_mismatch, mrz_mismatch: DG1 is not the MRZ printed on
          --page or given with --mrz; active_authentication_failed: the signature does not verify with DG15's key;
          active_authentication_replayed: it answers another challenge); 2: unusable input (a missing file, a --page
          that is not a JPEG or PNG image, a challenge that is not 16 hexadecimal digits, one of the two AA options
          without the other).
               idvd chip emulate --dir CHIPDIR [--pcscd | --port P] …   a virtual chip through pcscd (chip emulate --help)
        """
        try CLI.refuseOptionForSubcommand(args.first, command: "chip")
        if args.first == "emulate" { return try ChipEmulateCommand.run(Array(args.dropFirst())) }
        guard let sub = args.first, sub == "verify" else {
            print(usage)
            return args.first.map { ["-h", "--help"].contains($0) } == true ? 0 : 2
        }
        var sod: String?, com: String?, dir: String?, portraitOut: String?, page: String?, at: Date?, aaChallenge: String?, aaSignature: String?
        var dgs: [Int: String] = [:], trust: [String] = [], mrz: [String]?
        var i = 1
        // `--name=value` as `--name value`, as CLI.parseOptions reads it (not for --mrz, which takes lines).
        let rest = args.flatMap { a -> [String] in
            guard a.hasPrefix("--"), !a.hasPrefix("--mrz"), let eq = a.firstIndex(of: "=") else { return [a] }
            return [String(a[..<eq]), String(a[a.index(after: eq)...])]
        }
        func value(_ name: String) throws -> String {
            guard i + 1 < rest.count else { throw CLIError("\(name) needs a value") }
            i += 1
            return rest[i]
        }
        while i < rest.count {
            let a = rest[i]
            switch a {
            case "-h", "--help": print(usage); return 0
            case "--sod": sod = try value(a)
            case "--com": com = try value(a)
            case "--dir": dir = try value(a)
            case "--trust": trust.append(try value(a))
            case "--portrait-out": portraitOut = try value(a)
            case "--page": page = try value(a)
            case "--aa-challenge": aaChallenge = try value(a)
            case "--aa-signature": aaSignature = try value(a)
            case "--at":
                let s = try value(a)
                let f = DateFormatter()
                f.locale = Locale(identifier: "en_US_POSIX"); f.timeZone = TimeZone(identifier: "UTC"); f.dateFormat = "yyyy-MM-dd"
                guard let d = f.date(from: s) else { throw CLIError("--at needs a date YYYY-MM-DD") }
                at = d.addingTimeInterval(12 * 3600)
            case "--dg":
                let s = try value(a)
                guard let eq = s.firstIndex(of: "="), let n = Int(s[..<eq]), (1...16).contains(n) else { throw CLIError("--dg needs N=FILE with N in 1…16") }
                dgs[n] = String(s[s.index(after: eq)...])
            case "--mrz":
                var lines: [String] = []
                while i + 1 < rest.count, !rest[i + 1].hasPrefix("--"), lines.count < 3 { i += 1; lines.append(rest[i]) }
                guard lines.count >= 2 else { throw CLIError("--mrz needs 2 or 3 lines") }
                mrz = lines
            default:
                if a.hasPrefix("--dg"), let n = Int(a.dropFirst(4)), (1...16).contains(n) { dgs[n] = try value(a) }
                else if a.hasPrefix("-") {
                    let bare = a.split(separator: "=", maxSplits: 1).first.map(String.init) ?? a
                    throw CLIError("unknown option \(bare) (see idvd chip verify --help)")
                } else { throw CLIError("unexpected argument '\(a)' (see idvd chip verify --help)") }
            }
            i += 1
        }
        guard sod != nil || dir != nil else { throw CLIError("--sod (or --dir) is required\n\(usage)") }
        guard (aaChallenge == nil) == (aaSignature == nil) else { throw CLIError("--aa-challenge and --aa-signature go together") }
        var aaAnswer: ClientActiveAuthentication?
        var challengeBytes: [UInt8]?
        if let hex = aaChallenge, let path = aaSignature {
            guard let c = ChipHex.decode(hex), c.count == ChipChallengePayload.challengeBytes else {
                throw CLIError("--aa-challenge must be \(ChipChallengePayload.challengeBytes * 2) hexadecimal digits (the 8-byte challenge)")
            }
            let signature: [UInt8]
            do { signature = try ChipFiles.readFile(path, limit: ActiveAuthenticationAnswer.maxSignatureBytes) } catch let e as ChipInputError {
                throw CLIError("--aa-signature: \(e.description)")
            }
            guard !signature.isEmpty else { throw CLIError("--aa-signature: \(path) is empty") }
            challengeBytes = c
            aaAnswer = ClientActiveAuthentication(challenge: c, signature: Data(signature))
        }
        var files: ChipFiles
        let trustStore: CSCATrust
        do {
            files = try dir.map { try SpecimenChip.read(directory: $0) } ?? ChipFiles(sod: [])
            if let sod { files.sod = try ChipFiles.readFile(sod) }
            if let com { files.com = try ChipFiles.readFile(com) }
            for (n, p) in dgs { files.dataGroups[n] = try ChipFiles.readFile(p) }
            trustStore = try CSCATrust.load(paths: trust)
        } catch let e as ChipInputError { throw CLIError(e.description) } catch let e as TrustError { throw CLIError("--trust: \(e)") }
        var pageView: ChipPageComparison?
        var pageReport: DocumentReport?
        if let page {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: page)) } catch { throw CLIError("--page: \(page): cannot be read") }
            let r = DocumentReader.read(pages: [data])
            // A page that does not decode is unusable input, as a missing file is: no MRZ to compare, no portrait.
            for failure in r.pageFailures {
                switch failure {
                case .undecodable: throw CLIError("--page: \(page): not a JPEG or PNG image")
                case let .tooManyPixels(_, w, h, limit): throw CLIError("--page: \(page): \(w)×\(h) pixels, over the limit of \(limit)")
                }
            }
            pageReport = r
            if mrz == nil, let lines = r.mrz.result?.lines, r.mrz.found { mrz = lines }
        }
        let report: ChipReport
        do { report = try ChipReader(trust: trustStore).read(files, at: at ?? Date(), printedMRZ: mrz) } catch let e as LDSError {
            throw CLIError(e.description)
        }
        let chipImage: Imaging.Image?
        do { chipImage = try report.portrait.map(ChipPortrait.image) } catch { throw CLIError("DG2 portrait: \(error)") }
        if let pageReport {
            pageView = try ChipPageComparison.compare(chip: chipImage, pagePortraitJPEG: pageReport.portraitJPEG,
                                                      printedMRZ: pageReport.mrz.found ? pageReport.mrz.result?.lines : nil)
        }
        if let out = portraitOut {
            guard let image = chipImage else { throw CLIError("--portrait-out: no face image in DG2") }
            do {
                let data = out.lowercased().hasSuffix(".png") ? try image.pngData() : try image.jpegData(quality: 92)
                try data.write(to: URL(fileURLWithPath: out))
            } catch { throw CLIError("--portrait-out: \(error)") }
        }
        // The server's own judge, so the CLI reports what a document upload would (IDVEngine WorkflowPolicy).
        let policy = WorkflowPolicy()
        // Active Authentication over the given challenge (the offline counterpart of the server's own challenge).
        let aaEvidence = ActiveAuthentication.evaluate(report, files: files, challenge: challengeBytes, signature: aaAnswer.map { [UInt8]($0.signature) })
        let aa = EMRTDChipVerifier.activeAuthentication(report, files: files, issued: challengeBytes, answer: aaAnswer)
        let evidence = EMRTDChipVerifier.evidence(of: report, printedMRZ: mrz ?? [], dataGroups: files.dataGroups.keys.sorted(), activeAuthentication: aa)
        let reason = policy.chipReason(evidence)
        let mismatch = policy.signerCountryMismatch(evidence)
        let verdict = ChipPolicyView(reasonCode: reason.rawValue, reason: DocumentWording.sentence(reason, chip: evidence, policy: policy),
                                     signerCountryMismatch: mismatch.map {
                                         .init(certificate: $0.certificate.rawValue, countries: $0.countries, issuingState: $0.issuingState)
                                     })
        try ChipJSON.print(ChipVerifyOutput(report: report, activeAuthentication: aaEvidence, page: pageView, policy: verdict))
        // 1 whenever the policy makes the document INVALID (`chipIsError`: a failure that is an error, a
        // signer-country mismatch, DG1 differing from the printed MRZ), as well as when passive authentication failed.
        return report.passiveAuthentication.passed && !policy.chipIsError(evidence) ? 0 : 1
    }
}

/// `--page`: the printed MRZ read from the page and the chip portrait against the printed portrait (evidence:
/// FaceKit descriptor distance and similarity; no verdict).
struct ChipPageComparison: Encodable {
    let printedMrz: [String]?
    let chipFaceFound: Bool
    let pageFaceFound: Bool
    /// Cosine distance of the face recogniser's descriptors (FaceKit `FaceRecognizer`; smaller is more
    /// alike; the server's image-to-image lines are `FaceMatchCalibration`'s).
    let portraitDistance: Double?
    let portraitSimilarity: Double?

    static func compare(chip: Imaging.Image?, pagePortraitJPEG: Data?, printedMRZ: [String]?) throws -> ChipPageComparison {
        // The server's comparer (IDVReaders FaceKitPortraitComparer), so the CLI prints what the policy judges.
        let comparer = FaceKitPortraitComparer(engine: try FaceEngine.shared())
        let a = try chip.flatMap { try comparer.descriptor($0) }
        let b = try pagePortraitJPEG.flatMap { try comparer.descriptor($0) }
        var distance: Double?, similarity: Double?
        if let a, let b {
            let e = try FaceKitPortraitComparer.evidence(a, b)
            distance = e.distance
            similarity = e.score
        }
        return ChipPageComparison(printedMrz: printedMRZ, chipFaceFound: a != nil, pageFaceFound: b != nil,
                                  portraitDistance: distance, portraitSimilarity: similarity)
    }
}

/// What the server's policy makes of the chip evidence (IDVEngine `WorkflowPolicy`, default settings): the wire
/// reason code and sentence, and the signer-country finding.
struct ChipPolicyView: Encodable {
    let reasonCode: String
    let reason: String
    let signerCountryMismatch: Mismatch?
    struct Mismatch: Encodable { let certificate: String; let countries: [String]; let issuingState: String }
}

/// What `idvd chip verify` prints: the chip report, Active Authentication under "active_authentication" (EMRTD
/// evidence: outcome, failure, mechanism, DG15's key), with --page the page comparison under "page", and the
/// policy's reading under "policy".
struct ChipVerifyOutput: Encodable {
    let report: ChipReport
    let activeAuthentication: ActiveAuthenticationEvidence
    let page: ChipPageComparison?
    let policy: ChipPolicyView
    enum Keys: String, CodingKey { case activeAuthentication, page, policy }
    func encode(to encoder: Encoder) throws {
        try report.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(activeAuthentication, forKey: .activeAuthentication)
        try c.encodeIfPresent(page, forKey: .page)
        try c.encode(policy, forKey: .policy)
    }
}

/// JSON as the chip commands print it: snake_case keys, ISO 8601 dates, sorted keys.
enum ChipJSON {
    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.keyEncodingStrategy = .convertToSnakeCase
        e.dateEncodingStrategy = .iso8601
        return e
    }
    static func print<T: Encodable>(_ value: T) throws {
        FileHandle.standardOutput.write(try encoder().encode(value))
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}
