@testable import EMRTD
import XCTest

/// Specimen chips of the test PKI verify end to end; every tampered variant fails with its own reason.
final class SpecimenChipTests: XCTestCase {
    static let pki = Result { try TestPKI(seed: 7) }
    let mrz = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]

    /// A synthetic 3:4 portrait: smooth colour gradients, different for each `tint`.
    static func face(tint: Int) throws -> SpecimenChip.Face {
        let w = 120, h = 160
        var px = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h { for x in 0..<w {
            let i = (y * w + x) * 3
            px[i] = UInt8((x * 2 + tint * 40) & 0xFF); px[i + 1] = UInt8((y + tint * 90) & 0xFF); px[i + 2] = UInt8(((x + y) + tint * 17) & 0xFF)
        } }
        let image = try JPEG2000.encode(PortraitPixels(width: w, height: h, channels: 3, pixels: px), ratio: 10)
        return SpecimenChip.Face(image: image, type: .jpeg2000, width: w, height: h)
    }

    func testGenuineChipVerifiesEndToEnd() throws {
        let pki = try Self.pki.get()
        let files = try SpecimenChip.make(mrzLines: mrz, face: try Self.face(tint: 0), swappedFace: try Self.face(tint: 1), pki: pki, variant: .genuine)
        let r = try ChipReader(trust: pki.trust).read(files, at: Samples.day("2026-01-01"), printedMRZ: mrz)
        let pa = r.passiveAuthentication
        XCTAssertTrue(pa.passed, "\(pa.failures)")
        XCTAssertEqual(pa.signature.outcome, .valid)
        XCTAssertEqual(pa.dataGroups.map(\.outcome), [.matches, .matches])
        XCTAssertEqual(pa.chain.outcome, .trusted)
        XCTAssertEqual(pa.chain.csca?.fingerprint, pki.csca.fingerprint)
        XCTAssertEqual(pa.revocation.outcome, .notRevoked)
        XCTAssertEqual(pa.revocation.crlStale, false)
        XCTAssertEqual(pa.validity.documentSigner, .valid)
        XCTAssertEqual(pa.validity.csca, .valid)
        XCTAssertEqual(pa.validity.signingTimeWithinDocumentSignerValidity, true)
        XCTAssertEqual(pa.documentSigner?.info.curve, "prime256v1")
        XCTAssertEqual(pa.chain.csca?.info.curve, "brainpoolP384r1")
        XCTAssertEqual(r.mrzCrossCheck?.outcome, .matches)
        // The signers' countries (ICAO 9303-12 §7.1) and DG1's issuing state, as evidence.
        XCTAssertEqual(pa.signerCountries, SignerCountriesEvidence(documentSigner: ["UT"], documentSignerIssuer: ["UT"], csca: ["UT"]))
        XCTAssertEqual(r.issuingState, IssuingStateEvidence(dg1: mrz))
        XCTAssertEqual(r.issuingState?.code, "UTO")
        XCTAssertEqual(r.issuingState?.x509CountryNames, ["UT"])
        XCTAssertEqual(try ChipReader(trust: CSCATrust()).read(files).passiveAuthentication.signerCountries.csca, nil, "no trusted CSCA: no CSCA country")
        XCTAssertEqual(r.dg1?.lines, mrz)
        XCTAssertEqual(r.com?.dataGroups, [1, 2])
        let px = try JPEG2000.decode(try XCTUnwrap(r.portrait).imageData)
        XCTAssertEqual([px.width, px.height, px.channels], [120, 160, 3])
        // Lossy JPEG 2000 at 10:1 stays close to the source (mean absolute error in 8-bit units).
        let src = try JPEG2000.decode(try Self.face(tint: 0).image)
        XCTAssertEqual(src.pixels.count, px.pixels.count)

        // The same chip against other trust: no CSCA → unknown; only the impostor with the CSCA's name → signature invalid.
        XCTAssertEqual(try ChipReader(trust: CSCATrust()).read(files, at: Samples.day("2026-01-01")).passiveAuthentication.failures, [.cscaUnknown])
        var impostor = CSCATrust()
        impostor.add(try TrustMaterial(pki.impostorCSCA.der))
        XCTAssertEqual(try ChipReader(trust: impostor).read(files, at: Samples.day("2026-01-01")).passiveAuthentication.failures, [.cscaSignatureInvalid])
        // Checked after the DSC's and the CSCA's validity.
        XCTAssertEqual(try ChipReader(trust: pki.trust).read(files, at: Samples.day("2046-06-01")).passiveAuthentication.failures,
                       [.documentSignerExpired, .cscaExpired])
        // A printed MRZ with another birth date.
        let other = [mrz[0], mrz[1].replacingOccurrences(of: "7408122", with: "7408132")]
        XCTAssertEqual(try ChipReader(trust: pki.trust).read(files, printedMRZ: other).mrzCrossCheck,
                       MRZCrossCheck(outcome: .differs, differingFields: ["birth_date"]))
    }

    func testEveryTamperedVariantFailsWithItsOwnReason() throws {
        let pki = try Self.pki.get()
        let foreign = try TestPKI(seed: 7, country: SpecimenChip.foreignCountry(for: pki.country))
        XCTAssertEqual(foreign.country, "NL")
        var trust = pki.trust
        trust.add(try TrustMaterial(foreign.csca.der))
        let face = try Self.face(tint: 0), swapped = try Self.face(tint: 1)
        var seen: Set<String> = []
        for v in SpecimenChip.Variant.allCases {
            let files = try SpecimenChip.make(mrzLines: mrz, face: face, swappedFace: swapped, pki: pki, foreign: foreign, variant: v)
            let pa = try ChipReader(trust: trust).read(files, at: Samples.day("2026-01-01")).passiveAuthentication
            XCTAssertEqual(pa.failures, v.expectedFailures, "\(v)")
            if let n = v.mismatchedDataGroup {
                XCTAssertEqual(pa.dataGroups.filter { $0.outcome == .mismatch }.map(\.dataGroup), [n], "\(v)")
            }
            switch v {
            case .revokedDocumentSigner:
                XCTAssertEqual(pa.revocation.outcome, .revoked)
                XCTAssertEqual(pa.revocation.revocationDate, TestPKI.day("2025-01-01"))
            case .wrongCSCAKey:
                XCTAssertEqual(pa.chain.outcome, .cscaSignatureInvalid)
                XCTAssertEqual(pa.chain.candidates, 1)
                XCTAssertEqual(pa.signature.outcome, .valid)
            case .securityObjectChanged: XCTAssertEqual(pa.signature.outcome, .securityObjectDigestMismatch)
            case .signatureCorrupted: XCTAssertEqual(pa.signature.outcome, .invalid)
            case .foreignCSCA:
                // Every step passes: only the countries tell that the Netherlands' signer signed a Utopian document.
                XCTAssertEqual(pa.chain.outcome, .trusted)
                XCTAssertEqual(pa.chain.csca?.fingerprint, foreign.csca.fingerprint)
                XCTAssertEqual(pa.signerCountries, SignerCountriesEvidence(documentSigner: ["NL"], documentSignerIssuer: ["NL"], csca: ["NL"]))
            default: break
            }
            XCTAssertEqual(pa.signerCountries.documentSigner == ["UT"], !v.signerCountryDiffers, "\(v)")
            // Each variant's evidence is distinct from every other's.
            // (The AA variants differ from the genuine chip in Active Authentication only: SpecimenChipSecurityTests.)
            let key = pa.failures.map(\.rawValue).joined(separator: ",") + "/" + "\(v.mismatchedDataGroup ?? 0)" + "/" + pa.signerCountries.documentSigner.joined()
                + "/" + (v.activeAuthenticationKind?.rawValue ?? "no AA") + "/" + v.expectedActiveAuthentication.rawValue
            XCTAssertTrue(seen.insert(key).inserted, "\(v) repeats \(key)")
        }
    }

    /// CRLs: one signed by the impostor key under the CSCA's name is rejected (and counted); after a key rollover
    /// a CRL signed by the CSCA's new key still revokes a DSC the old key issued.
    func testRevocationListsAreAuthenticatedByTheCSCAsKeys() throws {
        let pki = try Self.pki.get()
        let files = try SpecimenChip.make(mrzLines: mrz, face: try Self.face(tint: 0), swappedFace: try Self.face(tint: 1), pki: pki,
                                          variant: .revokedDocumentSigner)
        let impostorKey = try SigningKey.ec(curve: "brainpoolP384r1", seed: "OpenIDV test PKI 7 impostor csca")
        let forged = try RevocationList.issue(issuer: pki.impostorCSCA, key: impostorKey, revoked: [], revocationDate: TestPKI.day("2025-01-01"),
                                              thisUpdate: TestPKI.day("2025-07-01"), nextUpdate: TestPKI.day("2045-01-01"))
        var t = CSCATrust()
        t.add(try TrustMaterial(pki.csca.der))
        t.add(try TrustMaterial(forged.der))
        let r1 = PassiveAuthentication.checkRevocation(pki.revokedDocumentSigner, csca: pki.csca, trust: t, at: Samples.day("2026-01-01"))
        XCTAssertEqual(r1.outcome, .noRevocationList)
        XCTAssertEqual(r1.rejectedRevocationLists, 1)
        // Rollover: a new CSCA key under the same name signs the CRL.
        let newKey = try SigningKey.ec(curve: "brainpoolP384r1", seed: "rollover")
        let newCSCA = try Certificate.issue(subject: TestPKI.cscaName, serial: [0x02], notBefore: TestPKI.day("2024-01-01"),
                                            notAfter: TestPKI.day("2050-01-01"), isCA: true, keyUsage: ["keyCertSign", "cRLSign"], key: newKey, issuer: nil)
        let crl = try RevocationList.issue(issuer: newCSCA, key: newKey, revoked: [pki.revokedDocumentSigner], revocationDate: TestPKI.day("2025-02-01"),
                                           thisUpdate: TestPKI.day("2025-08-01"), nextUpdate: TestPKI.day("2045-01-01"))
        t.add(try TrustMaterial(newCSCA.der))
        t.add(try TrustMaterial(crl.der))
        let pa = try ChipReader(trust: t).read(files, at: Samples.day("2026-01-01")).passiveAuthentication
        XCTAssertEqual(pa.chain.csca?.fingerprint, pki.csca.fingerprint)
        XCTAssertEqual(pa.revocation.outcome, .revoked)
        XCTAssertEqual(pa.revocation.revocationDate, TestPKI.day("2025-02-01"))
        XCTAssertEqual(pa.revocation.rejectedRevocationLists, 1)
        XCTAssertEqual(pa.failures, [.documentSignerRevoked])
    }

    func testSpecimenChipFilesRoundTripThroughADirectory() throws {
        let pki = try Self.pki.get()
        let files = try SpecimenChip.make(mrzLines: mrz, face: try Self.face(tint: 0), swappedFace: try Self.face(tint: 1), pki: pki, variant: .genuine)
        let dir = try temporaryDirectory(self)
        try SpecimenChip.write(files, to: dir)
        XCTAssertEqual(try SpecimenChip.read(directory: dir), files)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["DG1.bin", "DG2.bin", "EF_COM.bin", "EF_SOD.bin"])
    }

    /// Master lists made under the test PKI: accepted when signed by a signer a listed (or trusted) CSCA issued;
    /// refused when tampered or signed under an unknown CSCA. The same list inside an ICAO PKD-style LDIF file.
    func testMasterListsAndLDIF() throws {
        let pki = try Self.pki.get()
        func masterList(signedUnder issuer: (Certificate, SigningKey), listing: [Certificate]) throws -> [UInt8] {
            let key = try SigningKey.ec(curve: "prime256v1", seed: "ml signer \(issuer.0.fingerprint)")
            let signer = try Certificate.issue(subject: "/C=UT/O=Republic of Utopia/CN=Master List Signer Utopia TEST", serial: [0x20],
                                               notBefore: TestPKI.day("2024-01-01"), notAfter: TestPKI.day("2039-01-01"), isCA: false,
                                               keyUsage: ["digitalSignature"], key: key, issuer: issuer)
            let content = DER.sequence([DER.integer(0), DER.set(listing.map(\.der))])
            return try SignedData.sign(content, contentType: MasterList.contentType, signer: signer, key: key, signingTime: TestPKI.day("2025-01-01"))
        }
        let ml = try masterList(signedUnder: (pki.csca, pki.cscaKey), listing: [pki.csca])
        let m = try TrustMaterial(ml)
        XCTAssertEqual(m.kind, .masterList)
        XCTAssertEqual(m.cscas.map(\.fingerprint), [pki.csca.fingerprint])
        XCTAssertEqual(m.masterLists.first?.signerIssuer?.fingerprint, pki.csca.fingerprint)

        var tampered = ml
        let at = try XCTUnwrap(SpecimenChip.lastIndex(of: pki.csca.der, in: tampered))
        tampered[at + 100] ^= 0x01
        XCTAssertThrowsError(try TrustMaterial(tampered)) { e in
            guard case .masterListSignatureInvalid = e as? TrustError else { return XCTFail("\(e)") }
        }
        // Signed under the impostor key, which the list does not carry: refused unless the operator trusts it.
        let foreign = try masterList(signedUnder: (pki.impostorCSCA, try SigningKey.ec(curve: "brainpoolP384r1", seed: "OpenIDV test PKI 7 impostor csca")),
                                     listing: [pki.csca])
        XCTAssertThrowsError(try TrustMaterial(foreign)) { e in
            guard case .masterListSignerUntrusted = e as? TrustError else { return XCTFail("\(e)") }
        }
        var trusted = CSCATrust()
        trusted.add(try TrustMaterial(pki.impostorCSCA.der))
        XCTAssertEqual(try TrustMaterial(foreign, trusted: trusted).cscas.count, 1)

        // LDIF (RFC 2849) with folded base64 lines, as the ICAO PKD exports it.
        func fold(_ name: String, _ bytes: [UInt8]) -> String {
            let b64 = Array(Data(bytes).base64EncodedString())
            var s = "\(name):: "
            var i = 0
            while i < b64.count { if i > 0 { s += "\n " }; s += String(b64[i..<min(i + 76, b64.count)]); i += 76 }
            return s + "\n"
        }
        let ldif = "version: 1\n\ndn: cn=ml,o=ml,c=UT,dc=data,dc=pkdDownload\nobjectClass: pkdMasterList\n" + fold("pkdMasterListContent", ml)
            + "\ndn: cn=crl,o=crl,c=UT,dc=data,dc=pkdDownload\n" + fold("certificateRevocationList;binary", pki.crl.der)
        let l = try TrustMaterial(Array(ldif.utf8))
        XCTAssertEqual(l.kind, .ldif)
        XCTAssertEqual(l.cscas.count, 1)
        XCTAssertEqual(l.crls.map(\.fingerprint), [pki.crl.fingerprint])
        XCTAssertEqual(l.masterLists.count, 1)
        // PEM certificates and CRLs are read too; a non-CA certificate is a document signer, not a CSCA.
        let pem = "-----BEGIN CERTIFICATE-----\n" + Data(pki.documentSigner.der).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n"
        XCTAssertEqual(try TrustMaterial(Array(pem.utf8)).kind, .documentSignerCertificate)
        func pemBlock(_ label: String, _ der: [UInt8]) -> String {
            "-----BEGIN \(label)-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters) + "\n-----END \(label)-----\n"
        }
        let bundle = try TrustMaterial(Array((pemBlock("CERTIFICATE", pki.csca.der) + pemBlock("X509 CRL", pki.crl.der)
                                               + pemBlock("CERTIFICATE", pki.documentSigner.der)).utf8))
        XCTAssertEqual([bundle.cscas.count, bundle.crls.count, bundle.documentSigners.count], [1, 1, 1])
        XCTAssertEqual(bundle.kind, .cscaCertificate)
        XCTAssertThrowsError(try TrustMaterial(Array("hello".utf8))) { e in
            guard case .unreadable = e as? TrustError else { return XCTFail("\(e)") }
        }
    }

    /// A test PKI of another state carries that state's country in every certificate (ICAO 9303-12 §7.1) and a
    /// name of its own; Utopia's keeps its name.
    func testTestPKIOfAStateCarriesItsCountry() throws {
        let nl = try TestPKI(seed: 7, country: "NL")
        XCTAssertEqual(nl.csca.subjectCountries, ["NL"])
        XCTAssertEqual(nl.csca.issuerCountries, ["NL"])
        XCTAssertEqual(nl.documentSigner.subjectCountries, ["NL"])
        XCTAssertEqual(nl.documentSigner.issuerCountries, ["NL"])
        XCTAssertTrue(nl.csca.info.subject.contains("CN=CSCA NLD TEST (OpenIDV specimen)"), nl.csca.info.subject)
        XCTAssertEqual(try Self.pki.get().cscaName, TestPKI.cscaName)
        XCTAssertEqual(TestPKI.country(ofIssuingState: "NLD"), "NL")
        XCTAssertEqual(TestPKI.country(ofIssuingState: "D"), "DE")
        XCTAssertEqual(TestPKI.country(ofIssuingState: "UTO"), "UT")
        XCTAssertNil(TestPKI.country(ofIssuingState: "XXA"))
        XCTAssertEqual(IssuingStateEvidence(dg1: ["P<D<<MUSTERMANN<<ERIKA<<<<<<<<<<<<<<<<<<<<<<", "C11T002JM4D<<9608122F1310317<<<<<<<<<<<<<<<6"])?.code, "D")
        XCTAssertEqual(IssuingStateEvidence(dg1: ["I<NLDXI85935F86999999990<<<<<<", "7208148F1108268NLD<<<<<<<<<<<4", "VAN<DER<STEEN<<MARIANNE<LOUISE"]),
                       IssuingStateEvidence(dg1: ["P<NLD"]))
    }
}
