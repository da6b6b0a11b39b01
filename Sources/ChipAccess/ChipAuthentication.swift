import EMRTDCore

/// Chip Authentication (ICAO 9303-11 §6.2; BSI TR-03110-1 v1.11 §4.2 for 3DES): ephemeral-static key agreement
/// with the chip's static key in DG14, then secure messaging restarted with keys from the shared secret (SSC 0).
/// Only the chip holding the private key of DG14's public key can continue the session, so once passive
/// authentication has verified DG14, a session that continues proves the chip genuine (not a copy).
///
/// - 3DES (`id-CA-*-3DES-CBC-CBC`): MSE:Set KAT (`22 41 A6`) with the ephemeral public key in DO'91' and the key
///   ID in DO'84'.
/// - AES: MSE:Set AT (`22 41 A4`) with the protocol OID in DO'80' and the key ID in DO'84', then GENERAL
///   AUTHENTICATE with 7C { 80 ephemeral public key }.
public enum ChipAuthentication {
    /// The protocol and key Chip Authentication will use.
    public struct Choice: Sendable, Equatable {
        public var info: ChipAuthenticationInfo
        public var publicKey: ChipAuthenticationPublicKeyInfo
        /// Whether the protocol was inferred from the key because DG14 has no ChipAuthenticationInfo (older chips:
        /// 3DES is implied).
        public var inferred: Bool
    }

    /// The protocol to run from DG14's SecurityInfos: the strongest ChipAuthenticationInfo with a matching public
    /// key (ECDH before DH, AES-256 before 3DES); with no ChipAuthenticationInfo, 3DES on the first key. nil when
    /// DG14 offers no Chip Authentication key.
    public static func choose(_ infos: SecurityInfos) -> Choice? {
        let keys = infos.chipAuthenticationPublicKeyInfos
        guard !keys.isEmpty else { return nil }
        func rank(_ i: ChipAuthenticationInfo) -> Int { (i.protocol.keyAgreement == .ecdh ? 100 : 0) + i.protocol.cipher.arc }
        for info in infos.chipAuthenticationInfos.sorted(by: { rank($0) > rank($1) }) {
            let key = keys.first { $0.keyAgreement == info.protocol.keyAgreement && (info.keyId == nil || $0.keyId == info.keyId) }
            if let key { return Choice(info: info, publicKey: key, inferred: false) }
        }
        guard infos.chipAuthenticationInfos.isEmpty else { return nil }
        let key = keys[0]
        return Choice(info: ChipAuthenticationInfo(protocol: ChipAuthenticationProtocol(keyAgreement: key.keyAgreement, cipher: .tripleDES),
                                                   version: 1, keyId: key.keyId), publicKey: key, inferred: true)
    }

    /// The domain of the chip's static key.
    static func domain(of key: ChipAuthenticationPublicKeyInfo) throws -> (KeyAgreementDomain, [UInt8]) {
        switch key.publicKey.key {
        case let .ec(curve, point): return (KeyAgreementDomain(.ec(curve)), point)
        case let .dh(group, y): return (KeyAgreementDomain(.dh(group)), y)
        case .rsa: throw ChipAccessError.unsupportedProtocol("an RSA key in a ChipAuthenticationPublicKeyInfo")
        }
    }

    /// A key ID as DO'84' carries it: the INTEGER's value octets.
    static func keyIdObject(_ id: Int?) -> [UInt8] {
        guard let id else { return [] }
        return DER.tlv(0x84, Array(DER.integer(id).dropFirst(2)))
    }

    /// Runs Chip Authentication on `channel`, which must carry a secure-messaging session (from BAC or PACE), and
    /// replaces that session with the new one. `fixedPrivateKey` is for tests; nil draws the ephemeral key.
    /// Throws when the chip refuses (`unexpectedStatus`, the old session still up) or the key is unusable.
    /// Success is confirmed only when the next protected response verifies with the new keys.
    public static func run(on channel: APDUChannel, choice: Choice, crypto: ChipCryptography, fixedPrivateKey: [UInt8]? = nil) throws {
        guard channel.secureMessaging != nil else { throw ChipAccessError.invalidInput("Chip Authentication needs a secure-messaging session first") }
        let (domain, chipKey) = try domain(of: choice.publicKey)
        let ephemeralPrivate = try fixedPrivateKey ?? domain.randomPrivateKey(crypto)
        let ephemeralPublic = try domain.publicKey(ephemeralPrivate, crypto)
        let secret = try domain.sharedSecret(ephemeralPrivate, peer: chipKey, crypto)
        let cipher = choice.info.protocol.cipher
        let keyId = keyIdObject(choice.info.keyId ?? choice.publicKey.keyId)
        if cipher == .tripleDES {
            let r = try channel.send(CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xA6, data: DER.tlv(0x91, ephemeralPublic) + keyId))
            guard r.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "MSE:Set KAT (Chip Authentication)", status: r.status) }
        } else {
            let oid = Array(DER.oid(choice.info.protocol.oid).dropFirst(2))
            let set = try channel.send(CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xA4, data: DER.tlv(0x80, oid) + keyId))
            guard set.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "MSE:Set AT (Chip Authentication)", status: set.status) }
            let ga = try channel.send(CommandAPDU(ins: 0x86, p1: 0, p2: 0, data: DER.tlv(0x7C, DER.tlv(0x80, ephemeralPublic)), ne: 256))
            guard ga.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "GENERAL AUTHENTICATE (Chip Authentication)", status: ga.status) }
        }
        channel.secureMessaging = SecureMessaging(keys: SessionKeys.derive(from: secret, cipher: cipher, crypto: crypto), crypto: crypto)
    }
}
