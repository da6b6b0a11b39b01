import EMRTDCore

/// PACE with the generic mapping (ICAO 9303-11 §4.4; BSI TR-03110-2 §3.2): MSE:Set AT, then four GENERAL
/// AUTHENTICATE steps — the encrypted nonce, the mapping, the key agreement on the mapped generator, the mutual
/// authentication tokens — and secure messaging with the derived keys (SSC 0). Supports DH and ECDH on any domain
/// of `StandardizedDomainParameters` (or given by a PACEDomainParameterInfo) with 3DES and AES-128/192/256.
/// Integrated Mapping and Chip Authentication Mapping are not implemented (`ChipAccessError.unsupportedProtocol`).
public enum PACE {
    /// What one PACE run established.
    public struct Outcome: Sendable, Equatable {
        public var info: PACEInfo
        /// The domain parameters' name (`brainpoolP256r1`, `DH 1024-bit MODP, 160-bit subgroup`).
        public var domain: String
        public var session: SessionKeys
        /// The chip's authentication token and any certification-authority references it sent (DO'87', DO'88').
        public var chipToken: [UInt8]
    }

    /// Whether this implementation runs `info`'s protocol.
    public static func supports(_ info: PACEInfo) -> Bool { info.protocol.mapping == .generic && info.version == 2 }

    /// K_π = KDF(f(π), 3) (§9.7.3).
    public static func passwordKey(_ key: AccessKey, cipher: SessionCipher, _ crypto: ChipCryptography) -> [UInt8] {
        crypto.deriveKey(key.pacePasswordSeed(crypto), counter: 3, cipher: cipher)
    }

    /// The authentication token T = MAC(KS_mac, 7F49 { 06 OID, public key }) over the other party's ephemeral
    /// public key (§4.4.3.5, §9.4): the retail MAC (3DES) or CMAC truncated to 8 octets (AES).
    public static func authenticationToken(_ protocolInfo: PACEProtocol, macKey: [UInt8], publicKey: [UInt8],
                                           domain: KeyAgreementDomain, _ crypto: ChipCryptography) throws -> [UInt8] {
        let input = tokenInput(protocolInfo, publicKey: publicKey, domain: domain)
        return try crypto.mac(protocolInfo.cipher, key: macKey, input)
    }

    /// The public-key data object 7F49 the token is computed over.
    public static func tokenInput(_ protocolInfo: PACEProtocol, publicKey: [UInt8], domain: KeyAgreementDomain) -> [UInt8] {
        DER.tlv(0x7F49, DER.oid(protocolInfo.oid) + domain.publicKeyObject(publicKey))
    }

    /// MSE:Set AT for PACE (§4.4.4.1): DO'80' the protocol OID, DO'83' the password reference, DO'84' the domain
    /// parameter ID when the chip offers more than one set for the protocol.
    public static func setAuthenticationTemplate(_ info: PACEInfo, key: AccessKey, includeParameterId: Bool) -> CommandAPDU {
        var data = DER.tlv(0x80, Array(DER.oid(info.protocol.oid).dropFirst(2))) + DER.tlv(0x83, [key.paceReference])
        if includeParameterId, let id = info.parameterId { data += DER.tlv(0x84, [UInt8(id & 0xFF)]) }
        return CommandAPDU(ins: 0x22, p1: 0xC1, p2: 0xA4, data: data)
    }

    /// GENERAL AUTHENTICATE with dynamic authentication data 7C { `object` } (command chaining, CLA 10, unless `last`).
    static func generalAuthenticate(_ object: [UInt8], last: Bool) -> CommandAPDU {
        CommandAPDU(cla: last ? 0x00 : 0x10, ins: 0x86, p1: 0, p2: 0, data: DER.tlv(0x7C, object), ne: 256)
    }

    /// The value of `tag` inside the response's dynamic authentication data 7C.
    static func responseObject(_ r: ResponseAPDU, tag: UInt32, step: String) throws -> [UInt8] {
        do {
            let root = try BERReader.single(r.data)
            guard root.tag.raw == 0x7C, let o = try root.children().first(where: { $0.tag.raw == tag }) else {
                throw ChipAccessError.malformedResponse(String(format: "PACE %@: the response lacks DO'%02X' in 7C", step, tag))
            }
            return o.valueBytes
        } catch let e as BERError {
            throw ChipAccessError.malformedResponse("PACE \(step): the response is not BER-TLV (\(e))")
        }
    }

    /// Runs PACE on `channel` and installs its secure-messaging session. `domain`: the PACEInfo's parameters
    /// (`SecurityInfos.domainParameters(for:)`). `includeParameterId`: send DO'84' (the chip offers several sets).
    /// `fixedPrivateKeys`: the mapping and key-agreement private keys of the standard's worked example; nil draws them.
    /// Throws `ChipAccessError.accessDenied(.pace, …)` when the chip refuses the password,
    /// `.unsupportedProtocol` when it refuses the protocol or parameters.
    @discardableResult
    public static func run(on channel: APDUChannel, info: PACEInfo, domain parameters: DomainParameters, key: AccessKey,
                           crypto: ChipCryptography, includeParameterId: Bool = false,
                           fixedPrivateKeys: [[UInt8]]? = nil) throws -> Outcome {
        guard supports(info) else { throw ChipAccessError.unsupportedProtocol("\(info.protocol) (only the generic mapping is implemented)") }
        guard (info.protocol.keyAgreement == .ecdh) == (parameters.isEC) else {
            throw ChipAccessError.unsupportedProtocol("\(info.protocol) with \(parameters) domain parameters")
        }
        channel.secureMessaging = nil
        let cipher = info.protocol.cipher
        var privateKeys = fixedPrivateKeys ?? []
        let domain = KeyAgreementDomain(parameters)
        func nextPrivateKey(_ d: KeyAgreementDomain) throws -> [UInt8] {
            privateKeys.isEmpty ? try d.randomPrivateKey(crypto) : privateKeys.removeFirst()
        }

        let set = try channel.send(setAuthenticationTemplate(info, key: key, includeParameterId: includeParameterId))
        switch set.status {
        case .success: break
        case .referencedDataNotFound:
            throw ChipAccessError.unsupportedProtocol("the chip does not take PACE with a \(key) password (status \(set.status))")
        case .incorrectData, .incorrectParameters, .functionNotSupported, .wrongParameters, .instructionNotSupported:
            throw ChipAccessError.unsupportedProtocol("the chip refused \(info.protocol) (status \(set.status))")
        default:
            if set.status.isAuthenticationFailure || set.status == .authenticationMethodBlocked {
                throw ChipAccessError.accessDenied(.pace, status: set.status, triesLeft: nil)
            }
            throw ChipAccessError.unexpectedStatus(command: "MSE:Set AT (PACE)", status: set.status)
        }

        // 1. The encrypted nonce z; s = D(K_π, z).
        let r1 = try channel.send(generalAuthenticate([], last: false))
        try check(r1, step: "encrypted nonce")
        let z = try responseObject(r1, tag: 0x80, step: "encrypted nonce")
        guard !z.isEmpty, z.count % cipher.blockSize == 0 else { throw ChipAccessError.malformedResponse("PACE: an encrypted nonce of \(z.count) octets") }
        let kPi = passwordKey(key, cipher: cipher, crypto)
        let s = try chipCrypto { try crypto.cbcDecrypt(cipher.blockCipher, key: kPi, iv: [UInt8](repeating: 0, count: cipher.blockSize), z) }

        // 2. Generic mapping: exchange mapping keys, G' = s·G + H.
        let mapPrivate = try nextPrivateKey(domain)
        let mapPublic = try domain.publicKey(mapPrivate, crypto)
        let r2 = try channel.send(generalAuthenticate(DER.tlv(0x81, mapPublic), last: false))
        try check(r2, step: "mapping")
        let chipMapPublic = try responseObject(r2, tag: 0x82, step: "mapping")
        guard chipMapPublic != mapPublic else { throw ChipAccessError.authenticationFailed("the chip returned the terminal's own mapping key") }
        let h = try domain.sharedElement(mapPrivate, peer: chipMapPublic, crypto)
        let mapped = try domain.mapped(nonce: s, shared: h, crypto)

        // 3. Key agreement on the mapped generator.
        let ephemeralPrivate = try nextPrivateKey(mapped)
        let ephemeralPublic = try mapped.publicKey(ephemeralPrivate, crypto)
        let r3 = try channel.send(generalAuthenticate(DER.tlv(0x83, ephemeralPublic), last: false))
        try check(r3, step: "key agreement")
        let chipPublic = try responseObject(r3, tag: 0x84, step: "key agreement")
        guard chipPublic != ephemeralPublic else { throw ChipAccessError.authenticationFailed("the chip returned the terminal's own ephemeral key") }
        let secret = try mapped.sharedSecret(ephemeralPrivate, peer: chipPublic, crypto)
        let keys = SessionKeys.derive(from: secret, cipher: cipher, crypto: crypto)

        // 4. Mutual authentication.
        let token = try chipCrypto { try authenticationToken(info.protocol, macKey: keys.mac, publicKey: chipPublic, domain: mapped, crypto) }
        let r4 = try channel.send(generalAuthenticate(DER.tlv(0x85, token), last: true))
        if r4.status.isAuthenticationFailure || r4.status == .securityStatusNotSatisfied || r4.status == .authenticationMethodBlocked {
            throw ChipAccessError.accessDenied(.pace, status: r4.status, triesLeft: r4.status.sw1 == 0x63 && r4.status.sw2 >= 0xC0 ? Int(r4.status.sw2 & 0x0F) : nil)
        }
        try check(r4, step: "mutual authentication")
        let chipToken = try responseObject(r4, tag: 0x86, step: "mutual authentication")
        let expected = try chipCrypto { try authenticationToken(info.protocol, macKey: keys.mac, publicKey: ephemeralPublic, domain: mapped, crypto) }
        guard Bytes.constantTimeEqual(chipToken, expected) else {
            throw ChipAccessError.authenticationFailed("the chip's PACE authentication token does not verify")
        }
        channel.secureMessaging = SecureMessaging(keys: keys, crypto: crypto)
        return Outcome(info: info, domain: parameters.description, session: keys, chipToken: chipToken)
    }

    static func check(_ r: ResponseAPDU, step: String) throws {
        if r.status.isAuthenticationFailure { throw ChipAccessError.accessDenied(.pace, status: r.status, triesLeft: nil) }
        guard r.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "GENERAL AUTHENTICATE (PACE \(step))", status: r.status) }
    }
}

extension DomainParameters {
    var isEC: Bool { if case .ec = self { return true } else { return false } }
}
