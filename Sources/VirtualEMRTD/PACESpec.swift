import EMRTDCore

extension PACEInfo {
    /// A PACEInfo from a short spelling, for the command line and tests: `ECDH-GM-AES-128:13`, `DH-GM-3DES:0`,
    /// `id-PACE-ECDH-GM-AES-CBC-CMAC-256:17` — key agreement, mapping, cipher, then the standardized domain parameter
    /// ID (ICAO 9303-11 §9.5.1: 0–2 DH groups, 8–18 curves; 12 P-256, 13 brainpoolP256r1, 16 brainpoolP384r1,
    /// 17 brainpoolP512r1). Nil when `spec` names no such protocol or ID.
    public init?(spec: String) {
        let parts = spec.split(separator: ":")
        guard parts.count == 2, let id = Int(parts[1]), let domain = StandardizedDomainParameters.parameters(id: id) else { return nil }
        var name = String(parts[0]).uppercased()
        if name.hasPrefix("ID-PACE-") { name = String(name.dropFirst(8)) }
        let words = name.split(separator: "-").map(String.init)
        guard words.count >= 3, let agreement = KeyAgreementAlgorithm(rawValue: words[0]), words[1] == "GM" else { return nil }
        let cipherWords = Set(words.dropFirst(2))
        let cipher: SessionCipher
        if cipherWords.contains("3DES") { cipher = .tripleDES }
        else if cipherWords.contains("128") { cipher = .aes128 }
        else if cipherWords.contains("192") { cipher = .aes192 }
        else if cipherWords.contains("256") { cipher = .aes256 }
        else { return nil }
        switch (agreement, domain) {
        case (.ecdh, .ec), (.dh, .dh): break
        default: return nil
        }
        self.init(protocol: PACEProtocol(mapping: .generic, keyAgreement: agreement, cipher: cipher), version: 2, parameterId: id)
    }
}
