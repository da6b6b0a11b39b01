@testable import EMRTD
import Foundation
import XCTest

/// Active Authentication (ICAO 9303-11 §6.1) with test vectors built here: signatures made through OpenSSL the way a
/// chip makes them (ISO/IEC 9796-2 scheme 1 representatives put through the raw RSA private operation; plain ECDSA),
/// verified by `ActiveAuthentication.verify`, and every way a signature can fail.
final class ActiveAuthenticationTests: XCTestCase {
    static let rsa = Result { try SigningKey.rsa(bits: 2048, seed: "AA test RSA") }
    static let otherRSA = Result { try SigningKey.rsa(bits: 2048, seed: "AA test RSA other") }
    static let rsa1024 = Result { try SigningKey.rsa(bits: 1024, seed: "AA test RSA 1024") }
    let challenge: [UInt8] = [0x47, 0x11, 0xC0, 0xFF, 0xEE, 0x00, 0x7A, 0x93]
    let otherChallenge: [UInt8] = [0x47, 0x11, 0xC0, 0xFF, 0xEE, 0x00, 0x7A, 0x94]

    func spki(_ k: SigningKey) throws -> [UInt8] { try k.subjectPublicKeyInfo() }

    /// A fixed M1 for a 2048-bit key and `digest` with a one- or two-byte trailer.
    func m1(_ digest: DigestAlgorithm, trailer: Int, bits: Int = 2048) -> [UInt8] {
        (0..<(bits / 8 - ActiveAuthentication.length(digest) - trailer - 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    func testDeterministicRSAKeysAndPEMRoundTrip() throws {
        let a = try Self.rsa.get(), again = try SigningKey.rsa(bits: 2048, seed: "AA test RSA")
        XCTAssertEqual(try spki(a), try spki(again), "the same seed gives the same key")
        XCTAssertNotEqual(try spki(a), try spki(try Self.otherRSA.get()))
        let d = try a.publicKeyDescription()
        XCTAssertEqual(d.kind, .rsa)
        XCTAssertEqual(d.bits, 2048)
        XCTAssertNil(d.curve)
        XCTAssertEqual(try Self.rsa1024.get().publicKeyDescription().bits, 1024)
        // The exponent is 65537: the SPKI's RSAPublicKey ends in INTEGER 01 00 01.
        XCTAssertEqual(Array(try spki(a).suffix(5)), [0x02, 0x03, 0x01, 0x00, 0x01])
        // PKCS#8 PEM out and back in: the same key.
        let pem = try a.pkcs8PEM()
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"), pem.prefix(40).description)
        XCTAssertEqual(try spki(try SigningKey(pem: Array(pem.utf8))), try spki(a))
        let ec = try SigningKey.ec(curve: "prime256v1", seed: "AA test EC")
        XCTAssertEqual(try spki(try SigningKey(pem: Array(try ec.pkcs8PEM().utf8))), try spki(ec))
        let e = try ec.publicKeyDescription()
        XCTAssertEqual([e.kind.rawValue, e.curve ?? "-"], ["EC", "prime256v1"])
        XCTAssertEqual(e.orderBytes, 32)
        XCTAssertThrowsError(try SigningKey(pem: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)))
        XCTAssertThrowsError(try SigningKey.rsa(bits: 1000, seed: "odd size"))
    }

    func testRSASignaturesWithEveryTrailerVerify() throws {
        let key = try Self.rsa.get()
        let cases: [(DigestAlgorithm, Bool, [UInt8])] = [
            (.sha1, false, [0xBC]), (.sha1, true, [0x33, 0xCC]), (.sha224, true, [0x38, 0xCC]), (.sha256, true, [0x34, 0xCC]),
            (.sha384, true, [0x36, 0xCC]), (.sha512, true, [0x35, 0xCC]),
        ]
        for (digest, explicit, trailer) in cases {
            let m1 = self.m1(digest, trailer: trailer.count)
            let sig = try ActiveAuthentication.sign(challenge: challenge, with: key, digest: digest, explicitTrailer: explicit, m1: m1)
            XCTAssertEqual(sig.count, 256)
            // The representative the verifier recovers is exactly 6A ‖ M1 ‖ H(M1 ‖ challenge) ‖ trailer.
            let recovered = try ActiveAuthentication.recoverRSA(signature: sig, publicKey: try spki(key))
            XCTAssertEqual(recovered, [0x6A] + m1 + digest.digest(m1 + challenge) + trailer, "\(digest)")
            let r = ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(key), signatureAlgorithm: nil)
            XCTAssertEqual(r, .success(.rsaISO9796_2(digest, implicitTrailer: !explicit)), "\(digest)")
            // The signature algorithm OID of an ActiveAuthenticationInfo is ignored for RSA (the trailer names the hash).
            XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(key),
                                                       signatureAlgorithm: ActiveAuthentication.ecdsaPlainOIDs[.sha512]),
                           .success(.rsaISO9796_2(digest, implicitTrailer: !explicit)))
        }
        // A random M1 (as a chip makes it) and a 1024-bit key (the size of the real NL 2006 and BSI DG15 keys).
        let small = try Self.rsa1024.get()
        let sig = try ActiveAuthentication.sign(challenge: challenge, with: small, digest: .sha1)
        XCTAssertEqual(sig.count, 128)
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(small), signatureAlgorithm: nil),
                       .success(.rsaISO9796_2(.sha1, implicitTrailer: true)))
        XCTAssertEqual(ActiveAuthentication.Mechanism.rsaISO9796_2(.sha256, implicitTrailer: false).description, "rsa-iso9796-2-sha256")
    }

    /// ISO/IEC 9796-2's padding field `B…BA` before M1 (a shorter M1 than the block holds) is read, not refused.
    func testRSARepresentativeWithPaddingBeforeM1() throws {
        let key = try Self.rsa.get()
        let m1 = Array(self.m1(.sha1, trailer: 1).dropFirst(3))
        let block: [UInt8] = [0x6B, 0xBB, 0xBB, 0xBA] + m1 + DigestAlgorithm.sha1.digest(m1 + challenge) + [0xBC]
        XCTAssertEqual(block.count, 256)
        let sig = try ActiveAuthentication.rsaPrivateOperation(block, with: key)
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(key), signatureAlgorithm: nil),
                       .success(.rsaISO9796_2(.sha1, implicitTrailer: true)))
    }

    func testECDSAPlainSignaturesVerifyWithTheNamedHash() throws {
        for curve in ["prime256v1", "brainpoolP256r1", "brainpoolP384r1"] {
            let key = try SigningKey.ec(curve: curve, seed: "AA test EC \(curve)")
            for digest in [DigestAlgorithm.sha1, .sha224, .sha256, .sha384, .sha512] {
                let oid = try XCTUnwrap(ActiveAuthentication.ecdsaPlainOIDs[digest])
                let sig = try ActiveAuthentication.sign(challenge: challenge, with: key, digest: digest)
                XCTAssertEqual(sig.count, curve == "brainpoolP384r1" ? 96 : 64, "r ‖ s, each the order's length")
                XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(key), signatureAlgorithm: oid),
                               .success(.ecdsaPlain(digest)), "\(curve) \(digest)")
                // Another hash than the one signed with does not verify.
                let otherOID = ActiveAuthentication.ecdsaPlainOIDs[digest == .sha256 ? .sha384 : .sha256]
                XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(key), signatureAlgorithm: otherOID),
                               .failure(.signatureInvalid), "\(curve) \(digest)")
            }
        }
        XCTAssertEqual(ActiveAuthentication.digest(ofECDSAPlainOID: "0.4.0.127.0.7.1.1.4.1.3"), .sha256)
    }

    func testWrongChallengeFails() throws {
        let rsa = try Self.rsa.get()
        let sig = try ActiveAuthentication.sign(challenge: otherChallenge, with: rsa, digest: .sha256, m1: m1(.sha256, trailer: 2))
        // The representative is well-formed (the chip's own key signed): only the hash differs — another challenge.
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(rsa), signatureAlgorithm: nil),
                       .failure(.digestMismatch))
        let ec = try SigningKey.ec(curve: "prime256v1", seed: "AA test EC")
        let ecSig = try ActiveAuthentication.sign(challenge: otherChallenge, with: ec, digest: .sha256)
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: ecSig, publicKey: try spki(ec),
                                                   signatureAlgorithm: ActiveAuthentication.ecdsaPlainOIDs[.sha256]), .failure(.signatureInvalid))
        // An empty challenge is just another challenge.
        XCTAssertEqual(ActiveAuthentication.verify(challenge: [], signature: sig, publicKey: try spki(rsa), signatureAlgorithm: nil),
                       .failure(.digestMismatch))
    }

    func testWrongKeyFails() throws {
        // A copy's key signs the right challenge; DG15 holds the genuine key. RSA: the recovered representative is
        // noise, so its header already fails (deterministic here: both keys and M1 are fixed).
        let genuine = try Self.rsa.get(), copy = try Self.otherRSA.get()
        let sig = try ActiveAuthentication.sign(challenge: challenge, with: copy, digest: .sha1, m1: m1(.sha1, trailer: 1))
        let r = ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(genuine), signatureAlgorithm: nil)
        guard case let .failure(f) = r else { return XCTFail("a copy's signature verified") }
        XCTAssertTrue([.badPadding, .badTrailer, .signatureOutOfRange].contains(f), "\(f)")
        // Over many challenges a wrong key never verifies, and never gets as far as the hash comparison.
        var seen: [ActiveAuthentication.Failure: Int] = [:]
        for i in 0..<64 {
            let c = DigestAlgorithm.sha256.digest([UInt8(i)]).prefix(8).map { $0 }
            let s = try ActiveAuthentication.sign(challenge: c, with: copy, digest: .sha256)
            guard case let .failure(f) = ActiveAuthentication.verify(challenge: c, signature: s, publicKey: try spki(genuine), signatureAlgorithm: nil) else {
                return XCTFail("a copy's signature verified")
            }
            seen[f, default: 0] += 1
        }
        XCTAssertNil(seen[.digestMismatch], "\(seen)")
        XCTAssertEqual(seen.values.reduce(0, +), 64)
        let ec = try SigningKey.ec(curve: "prime256v1", seed: "AA test EC"), ecCopy = try SigningKey.ec(curve: "prime256v1", seed: "AA test EC copy")
        let ecSig = try ActiveAuthentication.sign(challenge: challenge, with: ecCopy, digest: .sha256)
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: ecSig, publicKey: try spki(ec),
                                                   signatureAlgorithm: ActiveAuthentication.ecdsaPlainOIDs[.sha256]), .failure(.signatureInvalid))
    }

    func testBadPaddingAndBadTrailer() throws {
        let key = try Self.rsa.get(), pub = try spki(key)
        let m1 = self.m1(.sha1, trailer: 1), h = DigestAlgorithm.sha1.digest(m1 + challenge)
        func verify(_ block: [UInt8]) throws -> Result<ActiveAuthentication.Mechanism, ActiveAuthentication.Failure> {
            XCTAssertEqual(block.count, 256)
            return ActiveAuthentication.verify(challenge: challenge, signature: try ActiveAuthentication.rsaPrivateOperation(block, with: key),
                                               publicKey: pub, signatureAlgorithm: nil)
        }
        XCTAssertEqual(try verify([0x6A] + m1 + h + [0xBC]), .success(.rsaISO9796_2(.sha1, implicitTrailer: true)), "the well-formed block")
        // Header: total recovery (the challenge cannot be in it), the wrong leading bits, padding that does not end in A.
        XCTAssertEqual(try verify([0x4A] + m1 + h + [0xBC]), .failure(.badPadding))
        XCTAssertEqual(try verify([0x2A] + m1 + h + [0xBC]), .failure(.badPadding))
        XCTAssertEqual(try verify([0x6C] + m1 + h + [0xBC]), .failure(.badPadding))
        XCTAssertEqual(try verify([0x6B, 0xBB, 0xBB, 0x11] + m1.dropFirst(3) + h + [0xBC]), .failure(.badPadding))
        // No room for M1: padding up to the hash.
        XCTAssertEqual(try verify([0x6B] + [UInt8](repeating: 0xBB, count: 233) + [0xBA] + h + [0xBC]), .failure(.badPadding))
        // Trailer: neither BC nor hh CC; a hash identifier of ISO/IEC 10118-3 not supported (31 RIPEMD-160).
        XCTAssertEqual(try verify([0x6A] + m1 + h + [0xBD]), .failure(.badTrailer))
        XCTAssertEqual(try verify([0x6A] + m1.dropLast() + h + [0x99, 0xCC]), .failure(.badTrailer))
        XCTAssertEqual(try verify([0x6A] + m1.dropLast() + h + [0x31, 0xCC]), .failure(.unsupportedHash))
        // A trailer naming SHA-256 over a SHA-1 hash: the hash taken is the wrong bytes.
        XCTAssertEqual(try verify([0x6A] + m1.dropLast() + h + [0x34, 0xCC]), .failure(.digestMismatch))
        // M1 altered after signing: the hash no longer matches.
        var altered = m1
        altered[5] ^= 0x01
        XCTAssertEqual(try verify([0x6A] + altered + h + [0xBC]), .failure(.digestMismatch))
    }

    func testTruncatedAndOutOfRangeSignatures() throws {
        let key = try Self.rsa.get(), pub = try spki(key)
        let sig = try ActiveAuthentication.sign(challenge: challenge, with: key, digest: .sha1)
        for bad in [Array(sig.dropLast()), Array(sig.prefix(128)), [], sig + [0x00], [0x00] + sig] {
            XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: bad, publicKey: pub, signatureAlgorithm: nil),
                           .failure(.signatureLength), "\(bad.count) bytes")
        }
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: [UInt8](repeating: 0xFF, count: 256), publicKey: pub, signatureAlgorithm: nil),
                       .failure(.signatureOutOfRange))
        let ec = try SigningKey.ec(curve: "prime256v1", seed: "AA test EC")
        let oid = ActiveAuthentication.ecdsaPlainOIDs[.sha256]
        let ecSig = try ActiveAuthentication.sign(challenge: challenge, with: ec, digest: .sha256)
        for bad in [Array(ecSig.dropLast()), Array(ecSig.prefix(32)), [], ecSig + [0]] {
            XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: bad, publicKey: try spki(ec), signatureAlgorithm: oid),
                           .failure(.signatureLength), "\(bad.count) bytes")
        }
        // r = 0 (and s = 0) is not a signature.
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: [UInt8](repeating: 0, count: 64), publicKey: try spki(ec), signatureAlgorithm: oid),
                       .failure(.signatureInvalid))
    }

    func testUnsupportedAlgorithmsAndKeys() throws {
        let ec = try SigningKey.ec(curve: "prime256v1", seed: "AA test EC")
        let sig = try ActiveAuthentication.sign(challenge: challenge, with: ec, digest: .sha256)
        // ecdsa-plain-RIPEMD160 (BSI TR-03111) is not supported; an unknown OID neither; an EC key needs one named.
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(ec), signatureAlgorithm: "0.4.0.127.0.7.1.1.4.1.6"),
                       .failure(.unsupportedSignatureAlgorithm))
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(ec), signatureAlgorithm: "1.2.840.10045.4.3.2"),
                       .failure(.unsupportedSignatureAlgorithm))
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: try spki(ec), signatureAlgorithm: nil),
                       .failure(.signatureAlgorithmNotNamed))
        // An Ed25519 key (RFC 8410 SubjectPublicKeyInfo) is neither RSA nor EC.
        let ed25519: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + [UInt8](repeating: 0x11, count: 32)
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: ed25519, signatureAlgorithm: nil),
                       .failure(.unsupportedKey))
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: [0x30, 0x03, 0x02, 0x01, 0x00], signatureAlgorithm: nil),
                       .failure(.malformedPublicKey))
        XCTAssertEqual(ActiveAuthentication.verify(challenge: challenge, signature: sig, publicKey: [], signatureAlgorithm: nil),
                       .failure(.malformedPublicKey))
        // The chip side refuses what it cannot sign with.
        XCTAssertThrowsError(try ActiveAuthentication.sign(challenge: challenge, with: try Self.rsa.get(), digest: .sha1, m1: [1, 2, 3]))
    }

    /// The real DG15 keys in ../shared/testdata/emrtd (NL 2006 specimen, BSI TR-03105-5 HJP): RSA-1024, read from
    /// the files; without their private keys no signature can verify, and a signature of the right length that is
    /// not theirs fails on its structure.
    func testRealDG15KeysAreRead() throws {
        for path in ["nld-specimen-2006-loes-meulendijk/ef010F.bin", "bsi-tr03105-5-hjp-erika-mustermann/Datagroup15.bin"] {
            let dg15 = try DG15(try Samples.bytes(path))
            let key = try PublicKeyDescription(subjectPublicKeyInfo: dg15.subjectPublicKeyInfo)
            XCTAssertEqual(key.kind, .rsa, path)
            XCTAssertEqual(key.bits, 1024, path)
            let someone = try ActiveAuthentication.sign(challenge: challenge, with: try Self.rsa1024.get(), digest: .sha1)
            let r = ActiveAuthentication.verify(challenge: challenge, signature: someone, publicKey: dg15.subjectPublicKeyInfo, signatureAlgorithm: nil)
            guard case let .failure(f) = r else { return XCTFail("\(path): another key's signature verified") }
            XCTAssertNotEqual(f, .digestMismatch, path)
        }
    }
}
