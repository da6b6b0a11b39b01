// Fuzz harness support for `chip-sm`, shared by the libFuzzer target (Fuzz/ChipAccess/ChipSMTarget.swift, built
// by scripts/fuzz with ChipAccess, EMRTDCore and MRZ as modules and ChipAccessOpenSSL's sources in the target) and
// by Tests/ChipAccessTests/ChipSMFuzzRegressionTests.swift (which sees this file through a symlink): which parser
// an input drives, and what must hold whatever the bytes.
#if canImport(ChipAccess)
import ChipAccess
#endif
#if canImport(ChipAccessOpenSSL)
import ChipAccessOpenSSL
#endif
import EMRTDCore
import Foundation

/// What the first byte of a `chip-sm` input chooses (modulo the count); the second byte picks the session cipher
/// where one is needed; the rest is the data.
enum ChipSMParser: Int, CaseIterable {
    /// A response APDU unprotected by the terminal (ICAO 9303-11 §9.8).
    case smResponse
    /// A command APDU unprotected by the chip.
    case smCommand
    /// Plain response data protected by the chip and unprotected by the terminal: must come back unchanged.
    case smRoundTrip
    /// EF.CardAccess (SecurityInfos).
    case cardAccess
    /// DG14 (6E around SecurityInfos).
    case dg14
    /// DG15 (6F around a SubjectPublicKeyInfo).
    case dg15
    /// A command APDU's length fields (ISO/IEC 7816-4 §5.1).
    case commandAPDU
    /// A BER-TLV header read alone against the full reader.
    case berHeader
    /// An Active Authentication signature checked against fixed keys.
    case activeAuthentication
}

/// Fixed material for the harness: session keys for each cipher and an RSA and an EC public key.
enum ChipSMFixtures {
    static let crypto = OpenSSLChipCryptography()
    static let ciphers = SessionCipher.allCases
    static func keys(_ selector: UInt8) -> SessionKeys {
        let cipher = ciphers[Int(selector) % ciphers.count]
        return SessionKeys.derive(from: Array(repeating: 0x5A, count: 32), cipher: cipher, crypto: crypto)
    }
    /// ICAO 9303-11 Appendix G.1's mapped point as an EC key on brainpoolP256r1, and a 1024-bit RSA modulus (any odd
    /// number works for the public operation).
    static let ecKey: SubjectPublicKeyInfo = {
        guard case .ec(let c)? = StandardizedDomainParameters.parameters(id: 13) else { fatalError("table") }
        return SubjectPublicKeyInfo.encodeEC(algorithm: ChipOID.ecPublicKey, curve: c, point: Bytes.hex(
            "048CED63C91426D4F0EB1435E7CB1D74A46723A0AF21C89634F65A9AE87A9265E28C879506743F8611AC33645C5B985C80B5F09A0B83407C1B6A4D857AE76FE522"))
    }()
    static let rsaKey = SubjectPublicKeyInfo(algorithm: ChipOID.rsaEncryption, key: .rsa(modulus: [0xC5] + Array(repeating: 0x37, count: 126) + [0x0B], exponent: [1, 0, 1]), encoded: [])
}

/// The invariants one `chip-sm` input breaks. Thrown errors are the expected outcome for most inputs; a trap, a
/// sanitizer report, an SSC that did not advance by one, or a result the input does not support is a violation.
func chipSMViolations(_ input: UnsafeBufferPointer<UInt8>) -> [String] {
    guard input.count >= 2 else { return [] }
    let selector = input[0], cipherSelector = input[1]
    let bytes = Array(input.dropFirst(2))
    let crypto = ChipSMFixtures.crypto
    var out: [String] = []
    switch ChipSMParser(rawValue: Int(selector) % ChipSMParser.allCases.count)! {
    case .smResponse:
        let sm = SecureMessaging(keys: ChipSMFixtures.keys(cipherSelector), crypto: crypto)
        let before = sm.ssc
        guard let r = ResponseAPDU(bytes) else { break }
        do {
            _ = try sm.unprotect(r)
            // A random MAC verifies with probability 2⁻⁶⁴: an input that does is a finding.
            if r.data.count > 0 { out.append("a response of \(r.data.count) octets unprotected without the session's MAC") }
        } catch let e as ChipAccessError {
            if case .secureMessaging = e {} else { out.append("unprotect threw \(e), not a secure-messaging error") }
        } catch {
            out.append("unprotect threw \(error)")
        }
        if sm.ssc == before { out.append("the SSC did not advance") }
    case .smCommand:
        let chip = SecureMessaging(keys: ChipSMFixtures.keys(cipherSelector), crypto: crypto)
        guard let c = CommandAPDU(parsing: bytes) else { break }
        if let plain = try? chip.unprotectCommand(c), c.cla & 0x0C == 0x0C, !c.data.isEmpty {
            out.append("a command unprotected without the session's MAC: \(plain)")
        }
    case .smRoundTrip:
        let keys = ChipSMFixtures.keys(cipherSelector)
        let chip = SecureMessaging(keys: keys, crypto: crypto), terminal = SecureMessaging(keys: keys, crypto: crypto)
        let data = Array(bytes.prefix(4096))
        let status = StatusWord(sw1: bytes.first ?? 0x90, sw2: bytes.last ?? 0x00)
        let plain = ResponseAPDU(data: data, status: status)
        for ins: UInt8 in [0xB0, 0xB1] {
            do {
                let protected = try chip.protectResponse(plain, ins: ins)
                let back = try terminal.unprotect(protected)
                if back != plain { out.append("round trip changed the response (INS \(ins))") }
            } catch {
                out.append("round trip failed: \(error)")
            }
        }
        if chip.ssc != terminal.ssc { out.append("the two ends' SSCs differ") }
        // A command's protected form unprotects to itself at the chip.
        let command = CommandAPDU(ins: 0xB1, p1: 0, p2: 0, data: Array(data.prefix(255)), ne: data.isEmpty ? nil : Int(min(256, data.count)))
        do {
            let back = try chip.unprotectCommand(try terminal.protect(command, extended: cipherSelector & 0x80 != 0))
            if back.data != command.data || back.ne != command.ne { out.append("a protected command unprotected differently") }
        } catch {
            out.append("command round trip failed: \(error)")
        }
    case .cardAccess:
        guard let infos = try? SecurityInfos(cardAccess: bytes) else { break }
        out += reencodingViolations(infos) { try SecurityInfos(cardAccess: $0.encoded) }
    case .dg14:
        guard let infos = try? SecurityInfos(dg14: bytes) else { break }
        out += reencodingViolations(infos) { try SecurityInfos(dg14: $0.dg14Encoded) }
    case .dg15:
        guard let key = try? SubjectPublicKeyInfo(dg15: bytes) else { break }
        switch key.key {
        case let .ec(curve, point): if point.count != curve.pointSize { out.append("EC point of \(point.count) octets on \(curve)") }
        case let .dh(group, y): if y.count != group.size { out.append("DH value of \(y.count) octets for a \(group.size)-octet group") }
        case let .rsa(n, e): if n.isEmpty || e.isEmpty { out.append("empty RSA key") }
        }
    case .commandAPDU:
        guard let c = CommandAPDU(parsing: bytes) else { break }
        if c.data.count > 65_535 || (c.ne ?? 1) < 1 || (c.ne ?? 0) > 65_536 { out.append("APDU lengths out of range: \(c)") }
        if let again = CommandAPDU(parsing: c.encoded), again.data != c.data || again.ne != c.ne || again.ins != c.ins {
            out.append("APDU \(c) reads differently once re-encoded")
        } else if CommandAPDU(parsing: c.encoded) == nil {
            out.append("APDU \(c) does not read once re-encoded")
        }
    case .berHeader:
        var r = BERReader(bytes)
        guard let e = try? r.read() else { break }
        do {
            let h = try BERReader.header(bytes)
            if h.tag != e.tag || (h.valueLength.map { Int($0) != e.valueRange.count } ?? false) || (h.valueLength != nil && h.headerLength != e.valueRange.lowerBound - e.start) {
                out.append("header \(h) differs from the element read (\(e.tag), \(e.valueRange))")
            }
        } catch {
            out.append("the header of an element that reads does not read: \(error)")
        }
    case .activeAuthentication:
        let challenge = Array(bytes.prefix(8))
        let signature = Array(bytes.dropFirst(8))
        let rsa = ActiveAuthentication.verify(signature: signature, challenge: challenge, publicKey: ChipSMFixtures.rsaKey, info: nil, crypto: crypto)
        let ec = ActiveAuthentication.verify(signature: signature, challenge: challenge, publicKey: ChipSMFixtures.ecKey,
                                             info: ActiveAuthenticationInfo(signatureAlgorithm: ECDSAPlainSignature.sha256.oid), crypto: crypto)
        // Forging either is a finding (the RSA key's private exponent is unknown to anyone; so is the EC point's scalar).
        if rsa.isVerified { out.append("an RSA signature verified from fuzzed bytes") }
        if ec.isVerified { out.append("an ECDSA signature verified from fuzzed bytes") }
    }
    return out
}

/// Typed values that parsed must re-encode (DER) to bytes that parse to the same values.
func reencodingViolations(_ infos: SecurityInfos, _ again: (SecurityInfos) throws -> SecurityInfos) -> [String] {
    do {
        // DER sorts a SET's elements, so the order may change; the values may not.
        let second = try again(infos)
        func sorted(_ i: SecurityInfos) -> [[UInt8]] { i.infos.map(\.encoded).sorted { $0.lexicographicallyPrecedes($1) } }
        return sorted(second) == sorted(infos) ? [] : ["SecurityInfos read differently once re-encoded"]
    } catch {
        return ["SecurityInfos do not read once re-encoded: \(error)"]
    }
}
