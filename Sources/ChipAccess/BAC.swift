import EMRTDCore

/// Basic Access Control (ICAO 9303-11 §4.3): challenge-response with 3DES keys derived from the MRZ, then 3DES
/// secure messaging. The chip must have the eMRTD application selected first.
public enum BAC {
    /// K_seed: the first 16 octets of SHA-1(MRZ_information) (§9.7.2).
    public static func keySeed(_ key: MRZKey, _ crypto: ChipCryptography) -> [UInt8] {
        keySeed(MRZInformationDigest(key, crypto))
    }

    /// K_seed from SHA-1(MRZ_information) itself (its first 16 octets, §9.7.2): what a terminal given the digest
    /// rather than the MRZ's fields uses.
    public static func keySeed(_ digest: MRZInformationDigest) -> [UInt8] { Array(digest.octets.prefix(16)) }

    /// K_enc and K_mac of the document basic access keys (§9.7.1, §4.3.2).
    public static func basicAccessKeys(_ key: MRZKey, _ crypto: ChipCryptography) -> SessionKeys {
        basicAccessKeys(MRZInformationDigest(key, crypto), crypto)
    }

    /// K_enc and K_mac of the document basic access keys from SHA-1(MRZ_information) (§9.7.1–9.7.2).
    public static func basicAccessKeys(_ digest: MRZInformationDigest, _ crypto: ChipCryptography) -> SessionKeys {
        SessionKeys.derive(from: keySeed(digest), cipher: .tripleDES, crypto: crypto)
    }

    /// E ‖ M: the 3DES-CBC cryptogram (IV 0) of `plain` and its retail MAC (§4.3.3.1 steps 3–4, 10).
    public static func cryptogram(_ plain: [UInt8], keys: SessionKeys, _ crypto: ChipCryptography) throws -> [UInt8] {
        let e = try crypto.cbcEncrypt(.tripleDES, key: keys.encryption, iv: [UInt8](repeating: 0, count: 8), plain)
        return e + (try crypto.retailMAC(key: keys.mac, e))
    }

    /// The plain text of a 40-octet E ‖ M whose MAC verifies, or nil.
    public static func openCryptogram(_ em: [UInt8], keys: SessionKeys, _ crypto: ChipCryptography) throws -> [UInt8]? {
        guard em.count == 40 else { return nil }
        let e = Array(em[0..<32]), m = Array(em[32..<40])
        guard Bytes.constantTimeEqual(try crypto.retailMAC(key: keys.mac, e), m) else { return nil }
        return try crypto.cbcDecrypt(.tripleDES, key: keys.encryption, iv: [UInt8](repeating: 0, count: 8), e)
    }

    /// The session: KS_enc, KS_mac from K.IFD ⊕ K.IC, and SSC = the last 4 octets of RND.IC ‖ those of RND.IFD
    /// (§4.3.3.3, §9.8.2).
    public static func session(kIFD: [UInt8], kIC: [UInt8], rndIC: [UInt8], rndIFD: [UInt8], _ crypto: ChipCryptography) -> SecureMessaging {
        let seed = zip(kIFD, kIC).map { $0 ^ $1 }
        let keys = SessionKeys.derive(from: seed, cipher: .tripleDES, crypto: crypto)
        return SecureMessaging(keys: keys, ssc: Array(rndIC.suffix(4)) + Array(rndIFD.suffix(4)), crypto: crypto)
    }

    /// Runs BAC on `channel` (§4.3.3.1): GET CHALLENGE, EXTERNAL AUTHENTICATE with RND.IFD ‖ RND.IC ‖ K.IFD,
    /// check of the chip's RND.IC ‖ RND.IFD ‖ K.IC; installs the secure-messaging session on the channel.
    /// `terminalRandom` (RND.IFD ‖ K.IFD, 24 octets) is for the standard's worked example; nil draws it.
    /// Throws `ChipAccessError.accessDenied(.bac, …)` when the chip refuses the MRZ.
    @discardableResult
    public static func run(on channel: APDUChannel, key: MRZKey, crypto: ChipCryptography, terminalRandom: [UInt8]? = nil) throws -> SecureMessaging {
        try run(on: channel, digest: MRZInformationDigest(key, crypto), crypto: crypto, terminalRandom: terminalRandom)
    }

    /// BAC with the keys derived from SHA-1(MRZ_information) (§9.7.2) instead of the MRZ's fields; otherwise as
    /// ``run(on:key:crypto:terminalRandom:)``.
    @discardableResult
    public static func run(on channel: APDUChannel, digest: MRZInformationDigest, crypto: ChipCryptography,
                           terminalRandom: [UInt8]? = nil) throws -> SecureMessaging {
        let keys = basicAccessKeys(digest, crypto)
        channel.secureMessaging = nil
        let challenge = try channel.send(CommandAPDU(ins: 0x84, p1: 0, p2: 0, ne: 8))
        guard challenge.status.isSuccess, challenge.data.count == 8 else {
            throw ChipAccessError.unexpectedStatus(command: "GET CHALLENGE", status: challenge.status)
        }
        let rndIC = challenge.data
        let random = try terminalRandom ?? chipCrypto { try crypto.randomBytes(24) }
        guard random.count == 24 else { throw ChipAccessError.invalidInput("BAC terminal random of \(random.count) octets, 24 expected") }
        let rndIFD = Array(random[0..<8]), kIFD = Array(random[8..<24])
        let em = try chipCrypto { try cryptogram(rndIFD + rndIC + kIFD, keys: keys, crypto) }
        let r = try channel.send(CommandAPDU(ins: 0x82, p1: 0, p2: 0, data: em, ne: 40))
        if r.status.isAuthenticationFailure || r.status == .securityStatusNotSatisfied {
            throw ChipAccessError.accessDenied(.bac, status: r.status, triesLeft: r.status.sw1 == 0x63 && r.status.sw2 >= 0xC0 ? Int(r.status.sw2 & 0x0F) : nil)
        }
        guard r.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "EXTERNAL AUTHENTICATE", status: r.status) }
        guard let plain = try chipCrypto({ try openCryptogram(r.data, keys: keys, crypto) }) else {
            throw ChipAccessError.authenticationFailed("the chip's BAC cryptogram does not verify with the keys of this MRZ")
        }
        guard Array(plain[0..<8]) == rndIC, Array(plain[8..<16]) == rndIFD else {
            throw ChipAccessError.authenticationFailed("the chip's BAC response does not return the challenges")
        }
        let sm = session(kIFD: kIFD, kIC: Array(plain[16..<32]), rndIC: rndIC, rndIFD: rndIFD, crypto)
        channel.secureMessaging = sm
        return sm
    }
}
