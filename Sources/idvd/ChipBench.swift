import EMRTD
import Foundation
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders

extension Benchmark {
    static let chip = Benchmark(name: "chip", summary: "eMRTD passive authentication: per-step timings (idvd bench chip --help)", hasUsage: true) { args in
        let usage = """
        usage: idvd bench chip [--iterations N] [--samples DIR]
          Times each passive-authentication step (ICAO 9303-11 §5.1) on a specimen chip of the test PKI
          (ECDSA P-256 DSC under a brainpoolP384r1 CSCA) and on the real samples in DIR (default:
          ../shared/testdata/emrtd beside the checkout): EF.SOD parse, SOD signature, data-group hashes,
          DSC chain, CRL, DG2 JPEG 2000 decode, the whole read, Active Authentication (ICAO 9303-11 §6.1:
          verifying an RSA-2048 ISO/IEC 9796-2 and an ECDSA P-256 signature over an 8-byte challenge; signing as the
          chip does), the server's chip step (EMRTDChipVerifier: the read, DG1 against the printed MRZ, DG2
          re-encoded as the JPEG selfie reference, Active Authentication over the step's challenge; trust cached),
          and loading the NL master list as trust.
          Prints median and 95th percentile in milliseconds (one thread).
        """
        let (o, _) = try CLI.parseOptions(args, flags: ["help", "h"], valued: ["iterations", "samples"], takesArguments: false, command: "bench chip")
        if o["help"] != nil || o["h"] != nil { print(usage); return 0 }
        guard let n = Int(o["iterations"] ?? "200"), n >= 1, n <= 100_000 else { throw CLIError("--iterations must be 1…100000") }
        let samples = o["samples"] ?? ChipBenchData.defaultSamples()

        var rows: [(String, String, [Double])] = []
        func time(_ step: String, _ sample: String, _ iterations: Int = n, _ body: () throws -> Void) throws {
            var t: [Double] = []
            t.reserveCapacity(iterations)
            for _ in 0..<iterations { t.append(try Command.measure(body) * 1000) }
            rows.append((step, sample, t.sorted()))
        }

        // Specimen chip: genuine files of the test PKI.
        let pki = try TestPKI(seed: 1)
        var px = [UInt8](repeating: 0, count: 360 * 480 * 3)
        for i in 0..<px.count { px[i] = UInt8((i * 7 + i / 1440) & 0xFF) }
        let j2k = try JPEG2000.encode(PortraitPixels(width: 360, height: 480, channels: 3, pixels: px), ratio: 12)
        let face = SpecimenChip.Face(image: j2k, type: .jpeg2000, width: 360, height: 480)
        let mrz = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
        // The specimen chip with its chip security (DG14, DG15: an RSA-2048 Active Authentication key).
        let keys = try SpecimenChip.Keys(seed: "idvd bench chip")
        var chips: [(String, ChipFiles, CSCATrust)] = [
            ("specimen P-256/bp384", try SpecimenChip.make(mrzLines: mrz, face: face, swappedFace: face, pki: pki, security: keys.rsa, variant: .genuine),
             pki.trust),
        ]
        var mlBytes: [UInt8]?
        if let s = samples {
            func b(_ p: String) throws -> [UInt8] { try ChipFiles.readFile(s + "/" + p) }
            let nl = try CSCATrust.load(paths: [s + "/pki/nl-csca"])
            mlBytes = try b("pki/nl-csca/NL_MASTERLIST_20211207.mls")
            chips.append(("BSI 2008 ECDSA bp224 explicit", ChipFiles(sod: try b("bsi2008-erika-mustermann/EF_SOD.bin"),
                          dataGroups: [1: try b("bsi2008-erika-mustermann/Datagroup1.bin"), 2: try b("bsi2008-erika-mustermann/Datagroup2.bin")]), nl))
            chips.append(("HJP RSA-PSS", ChipFiles(sod: try b("bsi-tr03105-5-hjp-erika-mustermann/EF_SOD.bin"),
                          dataGroups: [1: try b("bsi-tr03105-5-hjp-erika-mustermann/Datagroup1.bin")]), nl))
            chips.append(("NLD 2006 RSA", ChipFiles(sod: try b("nld-specimen-2006-loes-meulendijk/ef011D.bin"),
                          dataGroups: [1: try b("nld-specimen-2006-loes-meulendijk/ef0101.bin"), 2: try b("nld-specimen-2006-loes-meulendijk/ef0102.bin")]), nl))
            chips.append(("NZL 2013 vs NL master list", ChipFiles(sod: try b("nzl-2013-sod-only/NZ2013_EF_SOD.BIN")), nl))
        } else {
            CLI.stderr("bench chip: no real samples (pass --samples DIR); timing the specimen chip only")
        }

        for (name, files, trust) in chips {
            try time("parse EF.SOD", name) { _ = try SecurityObject(files.sod) }
            let sod = try SecurityObject(files.sod)
            let signer = PassiveAuthentication.documentSigner(of: sod, trust: trust)
            try time("SOD signature", name) { _ = PassiveAuthentication.verifySignature(sod, documentSigner: signer) }
            let bytes = files.dataGroups.values.reduce(0) { $0 + $1.count }
            try time("DG hashes (\(sod.hashAlgorithm.rawValue), \(bytes / 1024) KiB)", name) { _ = PassiveAuthentication.checkHashes(sod, dataGroups: files.dataGroups) }
            try time("DSC chain (\(trust.cscas.count) CSCAs)", name) { _ = PassiveAuthentication.verifyChain(signer?.0, trust: trust) }
            let (_, csca) = PassiveAuthentication.verifyChain(signer?.0, trust: trust)
            if csca != nil { try time("CRL", name) { _ = PassiveAuthentication.checkRevocation(signer?.0, csca: csca, trust: trust, at: Date()) } }
            if let dg2 = files.dataGroups[2] {
                let f = try DG2(dg2).faces[0]
                try time("DG2 parse + JPEG 2000 decode (\(f.width)×\(f.height))", name, max(1, n / 10)) { _ = try JPEG2000.decode(try DG2(dg2).faces[0].imageData) }
            }
            try time("whole read (parse + passive authentication)", name) { _ = try ChipReader(trust: trust).read(files) }
        }
        // Active Authentication: verifying (the server) and signing (what the chip does) an 8-byte challenge.
        let challenge: [UInt8] = [0x4F, 0x70, 0x65, 0x6E, 0x49, 0x44, 0x56, 0x21]
        for (label, security) in [("RSA-2048 ISO/IEC 9796-2 SHA-256", keys.rsa), ("ECDSA P-256 SHA-256", keys.ecdsa)] {
            guard let key = security.activeAuthenticationKey else { continue }
            let spki = try key.subjectPublicKeyInfo()
            let oid = ActiveAuthentication.ecdsaPlainOIDs[security.activeAuthenticationDigest]
            let signature = try security.activeAuthenticationSignature(challenge: challenge)
            guard case .success = ActiveAuthentication.verify(challenge: challenge, signature: signature, publicKey: spki, signatureAlgorithm: oid) else {
                throw CLIError("bench chip: the \(label) signature does not verify")
            }
            try time("AA verify", label) { _ = ActiveAuthentication.verify(challenge: challenge, signature: signature, publicKey: spki, signatureAlgorithm: oid) }
            try time("AA sign (as the chip)", label) { _ = try security.activeAuthenticationSignature(challenge: challenge) }
        }
        // The server's chip step on the specimen chip, as the document upload runs it (trust from store records),
        // with the chip's Active Authentication signature over the step's challenge.
        let (_, specimen, _) = chips[0]
        let verifier = EMRTDChipVerifier()
        let records = [TrustMaterialRecord(id: "tm_bench", kind: TrustMaterialKind.cscaCertificate.rawValue, sha256: "bench", bytes: Data(pki.csca.der),
                                           cscas: 1, crls: 0, documentSigners: 0, sourceName: "csca.cer", importedAt: 0)]
        let data = ChipData(sod: Data(specimen.sod), com: specimen.com.map { Data($0) }, dataGroups: specimen.dataGroups.mapValues { Data($0) },
                            activeAuthentication: ClientActiveAuthentication(challenge: challenge,
                                                                             signature: Data(try keys.rsa.activeAuthenticationSignature(challenge: challenge))))
        let now = Int(Date().timeIntervalSince1970)
        guard try verifier.verify(data, challenge: challenge, printedMRZ: mrz, trust: records, now: now).activeAuthentication.verified else {
            throw CLIError("bench chip: the server's chip step does not verify the specimen's Active Authentication")
        }
        try time("server chip step (verify + DG1 vs MRZ + DG2 → JPEG + AA)", chips[0].0, max(1, n / 10)) {
            _ = try verifier.verify(data, challenge: challenge, printedMRZ: mrz, trust: records, now: now)
        }
        if let mlBytes { try time("load master list (306 CSCAs, signature checked)", "NL 2021-12-07", max(1, n / 20)) { _ = try TrustMaterial(mlBytes) } }

        print("idvd bench chip — \(n) iterations (fewer for decode and master list), one thread, OpenSSL \(EMRTDLibraries.openSSL), OpenJPEG \(EMRTDLibraries.openJPEG)")
        print("step".padding(toLength: 52, withPad: " ", startingAt: 0) + "sample".padding(toLength: 32, withPad: " ", startingAt: 0) + "median ms    p95 ms")
        for (step, sample, t) in rows {
            let med = t[t.count / 2], p95 = t[min(t.count - 1, Int(Double(t.count) * 0.95))]
            print(step.padding(toLength: 52, withPad: " ", startingAt: 0) + sample.padding(toLength: 32, withPad: " ", startingAt: 0)
                  + String(format: "%9.3f %9.3f", med, p95))
        }
        return 0
    }
}

enum ChipBenchData {
    /// ../shared/testdata/emrtd beside the working directory's checkout, or beside the checkout holding the binary.
    static func defaultSamples() -> String? {
        let fm = FileManager.default
        var candidates = [fm.currentDirectoryPath + "/../shared/testdata/emrtd"]
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 { dir = dir.deletingLastPathComponent(); candidates.append(dir.path + "/../shared/testdata/emrtd") }
        return candidates.map { URL(fileURLWithPath: $0).standardized.path }.first { fm.fileExists(atPath: $0 + "/SOURCES.md") }
    }
}
