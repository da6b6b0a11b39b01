@testable import EMRTD
import MRZ
import XCTest

/// The real chip files in ../shared/testdata/emrtd give exactly the results its SOURCES.md predicts.
final class RealSampleTests: XCTestCase {
    typealias F = PassiveAuthenticationFailure

    func outcomes(_ e: PassiveAuthenticationEvidence) -> [Int: DataGroupHashEvidence.Outcome] {
        Dictionary(uniqueKeysWithValues: e.dataGroups.map { ($0.dataGroup, $0.outcome) })
    }

    /// BSI 2008: SHA-1; DG1/DG2/DG3/DG14 match; ECDSA brainpoolP224r1 with explicit parameters verifies; CSCA not available.
    func testBSI2008ErikaMustermann() throws {
        let d = "bsi2008-erika-mustermann/"
        var groups: [Int: [UInt8]] = [:]
        for (n, f) in [(1, "Datagroup1.bin"), (2, "Datagroup2.bin"), (3, "Datagroup3.bin"), (4, "Datagroup4.bin"), (14, "Datagroup14.bin"), (15, "Datagroup15.bin")] {
            groups[n] = try Samples.bytes(d + f)
        }
        let files = ChipFiles(sod: try Samples.bytes(d + "EF_SOD.bin"), com: try Samples.bytes(d + "EF_COM.bin"), dataGroups: groups)
        // At a day inside the DSC's validity (2008-01-28 … 2009-01-27) the only failure left is the unknown CSCA
        // (plus DG4/DG15, which this SOD does not list).
        let r = try ChipReader(trust: CSCATrust()).read(files, at: Samples.day("2008-06-01"))
        let pa = r.passiveAuthentication
        XCTAssertEqual(pa.hashAlgorithm, .sha1)
        XCTAssertEqual(pa.signature.outcome, .valid)
        XCTAssertEqual(pa.signature.documentSignerSource, .embedded)
        XCTAssertEqual(pa.documentSigner?.info.issuer, "CN=CSCA BDR TEST 19.09.07")
        XCTAssertEqual(pa.documentSigner?.info.curve, "brainpoolP224r1")
        XCTAssertEqual(pa.documentSigner?.info.explicitCurveParameters, true)
        XCTAssertEqual(outcomes(pa), [1: .matches, 2: .matches, 3: .matches, 14: .matches, 4: .notInSecurityObject, 15: .notInSecurityObject])
        XCTAssertEqual(pa.chain.outcome, .cscaUnknown)
        XCTAssertEqual(pa.revocation.outcome, .notChecked)
        XCTAssertEqual(pa.validity.documentSigner, .valid)
        XCTAssertEqual(pa.failures, [.dataGroupNotInSecurityObject, .cscaUnknown])
        XCTAssertFalse(pa.passed)
        // Countries (ICAO 9303-12 §7.1): the DSC says C=DE; its issuer "CN=CSCA BDR TEST 19.09.07" names none; no
        // trusted CSCA. DG1's issuing state is ICAO's `D` (9303-3 §5), whose certificates carry DE.
        XCTAssertEqual(pa.signerCountries, SignerCountriesEvidence(documentSigner: ["DE"], documentSignerIssuer: [], csca: nil))
        XCTAssertEqual(r.issuingState?.code, "D")
        XCTAssertEqual(r.issuingState?.x509CountryNames, ["DE"])
        // Today the DSC has long expired as well.
        XCTAssertEqual(try ChipReader(trust: CSCATrust()).read(files, at: Samples.day("2026-01-01")).passiveAuthentication.failures,
                       [.dataGroupNotInSecurityObject, .cscaUnknown, .documentSignerExpired])

        XCTAssertEqual(r.com?.dataGroups, [1, 2, 3, 14])
        XCTAssertEqual(r.com?.ldsVersion, "1.7")
        XCTAssertEqual(r.dg1?.lines, ["P<D<<MUSTERMANN<<ERIKA<<<<<<<<<<<<<<<<<<<<<<", "C11T002JM4D<<9608122F1310317<<<<<<<<<<<<<<<6"])
        XCTAssertEqual(r.dg1?.mrz.fields.documentNumber, "C11T002JM")
        XCTAssertTrue(r.dg1?.mrz.valid ?? false)
        XCTAssertEqual(r.dg14?.securityInfos.map(\.protocolName), ["Chip Authentication public key", "Chip Authentication", "Terminal Authentication"])
        XCTAssertEqual(r.dg15?.algorithm, "RSA")
        XCTAssertEqual(r.dg15?.bits, 1024)
        XCTAssertTrue(r.parseErrors.isEmpty, "\(r.parseErrors)")
        // DG2: the JPEG 2000 portrait, byte for byte the extracted file, decoding to 413 × 531 RGB.
        let face = try XCTUnwrap(r.portrait)
        XCTAssertEqual(face.imageDataType, .jpeg2000)
        XCTAssertEqual(face.imageData, try Samples.bytes(d + "DG2_face_extracted.jp2"))
        let pixels = try JPEG2000.decode(face.imageData)
        XCTAssertEqual([pixels.width, pixels.height, pixels.channels], [413, 531, 3])
        XCTAssertEqual(pixels.pixels.count, 413 * 531 * 3)
    }

    /// BSI TR-03105-5 (HJP): SHA-256, RSASSA-PSS; DG1/DG14 match; signature verifies with the embedded "HJP PB DS".
    func testTR03105HJPErikaMustermann() throws {
        let d = "bsi-tr03105-5-hjp-erika-mustermann/"
        let files = ChipFiles(sod: try Samples.bytes(d + "EF_SOD.bin"), com: try Samples.bytes(d + "EF_COM.bin"),
                              dataGroups: [1: try Samples.bytes(d + "Datagroup1.bin"), 14: try Samples.bytes(d + "Datagroup14.bin")])
        let r = try ChipReader(trust: CSCATrust()).read(files, at: Samples.day("2014-06-01"))
        let pa = r.passiveAuthentication
        XCTAssertEqual(pa.signerCountries, SignerCountriesEvidence(documentSigner: ["DE"], documentSignerIssuer: ["DE"], csca: nil))
        XCTAssertEqual(r.issuingState, IssuingStateEvidence(dg1: ["P<D<<"]))
        XCTAssertEqual(r.issuingState?.x509CountryNames, ["DE"])
        XCTAssertEqual(pa.hashAlgorithm, .sha256)
        XCTAssertEqual(pa.signature.outcome, .valid)
        XCTAssertEqual(pa.signature.signer?.signatureAlgorithm, "rsassaPss")
        XCTAssertEqual(pa.documentSigner?.info.subject, "CN=HJP PB DS,OU=Document Signer,O=HJP Consulting,C=DE")
        XCTAssertEqual(outcomes(pa), [1: .matches, 14: .matches, 2: .notPresented, 3: .notPresented, 4: .notPresented])
        XCTAssertEqual(pa.failures, [.cscaUnknown])
        // The "HJP PB DS" certificate of pki/test-dsc is the one embedded in this SOD.
        let dsc = try Certificate(try Samples.bytes("pki/test-dsc/dsc_de_0142fd5cf927.cer"))
        XCTAssertEqual(dsc.fingerprint, pa.documentSigner?.fingerprint)
        let m = try TrustMaterial(dsc.der)
        XCTAssertEqual(m.kind, .documentSignerCertificate)
    }

    /// NL specimen 2006: SHA-256/RSA; DG1/DG2/DG15 match; DSC "DS Test" issued by "CSCA Test", which no trust has.
    func testNLDSpecimenLoesMeulendijk() throws {
        let d = "nld-specimen-2006-loes-meulendijk/"
        let files = ChipFiles(sod: try Samples.bytes(d + "ef011D.bin"), com: try Samples.bytes(d + "ef011E.bin"),
                              dataGroups: [1: try Samples.bytes(d + "ef0101.bin"), 2: try Samples.bytes(d + "ef0102.bin"), 15: try Samples.bytes(d + "ef010F.bin")])
        let trust = try CSCATrust.load(paths: [try Samples.path("pki/nl-csca")])
        let r = try ChipReader(trust: trust).read(files, at: Samples.day("2010-01-01"),
                                                 printedMRZ: ["P<NLDMEULENDIJK<<LOES<ALBERTINE<<<<<<<<<<<<<", "XY00013286NLD7110195F1110012123456789<<<<<76"])
        let pa = r.passiveAuthentication
        XCTAssertEqual(pa.signature.outcome, .valid)
        XCTAssertEqual(pa.documentSigner?.info.issuer, "C=NL,O=Sdu Identification bv,OU=CSCA Test,CN=CSCA Test")
        XCTAssertEqual(outcomes(pa), [1: .matches, 2: .matches, 15: .matches])
        XCTAssertEqual(pa.chain.outcome, .cscaUnknown)
        XCTAssertEqual(pa.failures, [.cscaUnknown])
        XCTAssertEqual(pa.signerCountries, SignerCountriesEvidence(documentSigner: ["NL"], documentSignerIssuer: ["NL"], csca: nil))
        XCTAssertEqual(r.issuingState?.code, "NLD")
        XCTAssertEqual(r.issuingState?.x509CountryNames, ["NL"])
        XCTAssertEqual(r.dg1?.mrz.fields.surname, "MEULENDIJK")
        let face = try XCTUnwrap(r.portrait)
        XCTAssertEqual(face.imageData, try Samples.bytes(d + "DG2_face_extracted.jp2"))
        let px = try JPEG2000.decode(face.imageData)
        XCTAssertEqual([px.width, px.height], [449, 598])
        XCTAssertEqual(face.width, 449)
        XCTAssertEqual(face.height, 598)
        if let x = r.mrzCrossCheck, let lines = r.dg1?.lines {
            // Cross-check against the chip's own lines matches; against a changed document number it names the field.
            XCTAssertEqual(MRZCrossCheck.compare(chip: lines, printed: lines).outcome, .matches)
            XCTAssertEqual(x.outcome, .differs)
            XCTAssertEqual(x.differingFields, ["document_number"])
        } else { XCTFail("no MRZ cross-check") }
    }

    /// NZ 2013 SOD: the signature verifies with its NZ DSC; the NL master list's NZ CSCAs have the DSC's issuer
    /// name but not its key — "CSCA signature invalid", not "CSCA unknown".
    func testNZLSODAgainstTheMasterListsNZCSCAs() throws {
        let trust = try CSCATrust.load(paths: [try Samples.path("pki/nl-csca")])
        let files = ChipFiles(sod: try Samples.bytes("nzl-2013-sod-only/NZ2013_EF_SOD.BIN"))
        let r = try ChipReader(trust: trust).read(files, at: Samples.day("2013-06-01"))
        let pa = r.passiveAuthentication
        XCTAssertEqual(pa.signature.outcome, .valid)
        XCTAssertEqual(pa.chain.outcome, .cscaSignatureInvalid)
        // C=NZ on the DSC and its issuer; no CSCA verified it, so no CSCA country; no DG1, so no issuing state.
        XCTAssertEqual(pa.signerCountries, SignerCountriesEvidence(documentSigner: ["NZ"], documentSignerIssuer: ["NZ"], csca: nil))
        XCTAssertNil(r.issuingState)
        XCTAssertGreaterThanOrEqual(pa.chain.candidates, 1)
        XCTAssertEqual(pa.revocation.outcome, .notChecked)
        XCTAssertEqual(Set(pa.dataGroups.map(\.outcome)), [.notPresented])
        XCTAssertEqual(pa.dataGroups.map(\.dataGroup), [1, 2, 12, 13, 15])
        XCTAssertEqual(pa.validity.signingTimeWithinDocumentSignerValidity, true)
        XCTAssertEqual(pa.failures, [.cscaSignatureInvalid])
        // Without the master list the same DSC's CSCA is simply unknown.
        XCTAssertEqual(try ChipReader(trust: CSCATrust()).read(files, at: Samples.day("2013-06-01")).passiveAuthentication.failures, [.cscaUnknown])
    }

    /// The NL master list: CMS signature verifies; its signer was issued by CSCA NL (serial 6), which the list holds.
    func testNLMasterListAndCRL() throws {
        let ml = try MasterList(try Samples.bytes("pki/nl-csca/NL_MASTERLIST_20211207.mls"))
        XCTAssertEqual(ml.signature, .valid)
        XCTAssertEqual(ml.certificates.count + ml.unreadableCertificates, 306)
        XCTAssertGreaterThan(ml.certificates.count, 290)
        XCTAssertEqual(ml.signer?.info.subject.contains("Masterlist Signer NL"), true)
        let nl = try Certificate(try Samples.bytes("pki/nl-csca/CSCA_NL_serial6_2021-2034.cer"))
        XCTAssertTrue(nl.isSelfSigned)
        XCTAssertEqual(ml.signerIssuer?.fingerprint, nl.fingerprint)
        let m = try TrustMaterial(try Samples.bytes("pki/nl-csca/NL_MASTERLIST_20211207.mls"))
        XCTAssertEqual(m.kind, .masterList)
        // COL.crl: Colombia's CSCA CRL (2020), signed by a Colombian CSCA the master list carries.
        let crl = try RevocationList(try Samples.bytes("pki/nl-csca/COL.crl"))
        XCTAssertEqual(crl.issuer, "CN=Government of Colombia CSCA,OU=Certification Authorities,O=Colombia,C=CO")
        XCTAssertGreaterThanOrEqual(crl.revokedCount, 9)
        XCTAssertTrue(ml.certificates.contains { crl.isIssuedByName($0) && crl.isSigned(by: $0) })
        // One byte changed inside the list's content: its own signature no longer verifies and import is refused.
        var tampered = try Samples.bytes("pki/nl-csca/NL_MASTERLIST_20211207.mls")
        tampered[tampered.count / 2] ^= 0x01
        XCTAssertThrowsError(try TrustMaterial(tampered)) { e in
            guard case .masterListSignatureInvalid = e as? TrustError else { return XCTFail("\(e)") }
        }
    }

    /// DG14 example of ICAO 9303 and garbage in every file slot: clear, typed refusals.
    func testSpecSampleDG14AndGarbage() throws {
        let dg14 = try DG14(try Samples.bytes("icao9303-spec-samples/spec_sample_encoded_dg14.bin"))
        XCTAssertFalse(dg14.securityInfos.isEmpty)
        XCTAssertThrowsError(try SecurityObject(Array("not a SOD at all".utf8))) { e in
            XCTAssertEqual((e as? LDSError)?.file, .sod)
        }
        // Garbage CMS inside a well-formed 77 wrapper.
        XCTAssertThrowsError(try SecurityObject(DER.tlv(0x77, [0x30, 0x03, 0x02, 0x01, 0x00]))) { e in
            guard case .crypto(.sod, let c)? = e as? LDSError else { return XCTFail("\(e)") }
            XCTAssertEqual(c.kind, .parse)
        }
        // A DG1 given where the SOD was expected.
        let dg1 = try Samples.bytes("bsi2008-erika-mustermann/Datagroup1.bin")
        XCTAssertThrowsError(try SecurityObject(dg1)) { XCTAssertEqual($0 as? LDSError, .wrongFile(.sod, found: BERTag(0x61))) }
        // A truncated SOD: the declared length runs past the end.
        let sod = try Samples.bytes("bsi2008-erika-mustermann/EF_SOD.bin")
        XCTAssertThrowsError(try SecurityObject(Array(sod.prefix(500)))) { e in
            guard case .encoding(.sod, .lengthExceedsInput)? = e as? LDSError else { return XCTFail("\(e)") }
        }
        // A truncated DG2 is reported as a parse error of DG2 while its hash is still checked (and mismatches).
        let dg2 = try Samples.bytes("bsi2008-erika-mustermann/Datagroup2.bin")
        let r = try ChipReader(trust: CSCATrust()).read(ChipFiles(sod: sod, dataGroups: [2: Array(dg2.prefix(4000))]))
        XCTAssertEqual(r.parseErrors.map(\.file), [.dataGroup(2)])
        XCTAssertEqual(r.passiveAuthentication.dataGroups.first { $0.dataGroup == 2 }?.outcome, .mismatch)
        XCTAssertThrowsError(try JPEG2000.decode(Array("garbage".utf8) + Array(repeating: 0, count: 20)))
    }

    /// The 306 CSCAs of the NL master list (100 states) each carry one countryName, and every one is an assigned
    /// ISO 3166-1 alpha-2 code (upper or lower case: `al`, `gb`, `ro`, `si` occur) or one of the codes the
    /// signer-country table lists for ICAO's own codes (`EU`, `UN`/`ZZ`, `KS`); a CSCA's issuer carries its subject's.
    func testMasterListCSCAsCarryTheirStatesCountry() throws {
        let ml = try MasterList(try Samples.bytes("pki/nl-csca/NL_MASTERLIST_20211207.mls"))
        XCTAssertEqual(ml.certificates.count, 306)
        let exceptions = Set(["EUE", "UNO", "RKS"].flatMap(CountryCodes.x509CountryNames(ofIssuingState:)))
        XCTAssertEqual(exceptions, ["EU", "UN", "ZZ", "XK", "KS"])
        var seen = Set<String>()
        for c in ml.certificates {
            XCTAssertEqual(c.subjectCountries.count, 1, c.info.subject)
            let code = c.subjectCountries.first?.uppercased() ?? ""
            XCTAssertTrue(CountryCodes.alpha3(ofAlpha2: code) != nil || exceptions.contains(code), c.info.subject)
            XCTAssertEqual(c.issuerCountries.map { $0.uppercased() }, [code], c.info.subject)
            seen.insert(code)
        }
        XCTAssertTrue(seen.isSuperset(of: ["NL", "DE", "NZ", "EU", "UN", "ZZ", "KS"]), "\(seen.sorted())")
        // Hong Kong's and Macao's CSCAs carry CN: their passports' issuing state is CHN.
        XCTAssertTrue(ml.certificates.contains { $0.info.subject.contains("Hong Kong") && $0.subjectCountries == ["CN"] })
    }
}
