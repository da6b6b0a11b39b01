import EMRTDCore
import Foundation

/// The session keys of secure messaging: KS_enc and KS_mac for one cipher (ICAO 9303-11 §9.7.1, §9.8).
public struct SessionKeys: Sendable, Equatable {
    public var cipher: SessionCipher
    public var encryption: [UInt8]
    public var mac: [UInt8]

    public init(cipher: SessionCipher, encryption: [UInt8], mac: [UInt8]) { self.cipher = cipher; self.encryption = encryption; self.mac = mac }

    /// KS_enc = KDF(K, 1), KS_mac = KDF(K, 2) from a shared secret K (ICAO 9303-11 §9.7.1).
    public static func derive(from secret: [UInt8], cipher: SessionCipher, crypto: ChipCryptography) -> SessionKeys {
        SessionKeys(cipher: cipher, encryption: crypto.deriveKey(secret, counter: 1, cipher: cipher),
                    mac: crypto.deriveKey(secret, counter: 2, cipher: cipher))
    }
}

/// ISO/IEC 7816-4 secure messaging as ICAO 9303-11 §9.8 profiles it, for both ends of the link: the terminal
/// protects commands and unprotects responses, a chip (the virtual eMRTD) the reverse.
///
/// - Command: CLA with bits `0C` set; the data, padded (ISO/IEC 9797-1 method 2) and CBC-encrypted, in DO'87'
///   (`01` ‖ cryptogram; even INS) or DO'85' (odd INS, e.g. READ BINARY B1); Ne in DO'97'; DO'8E' the MAC over
///   SSC ‖ padded header ‖ DO'87'/'85' ‖ DO'97'. Le is `00` (or `0000` for extended lengths).
/// - Response: DO'87'/'85' with the encrypted data, DO'99' with the status word, DO'8E' the MAC over
///   SSC ‖ DO'87'/'85' ‖ DO'99'.
/// - The send sequence counter (SSC, one block: 8 octets for 3DES, 16 for AES) is incremented before each command
///   and each response. 3DES encrypts with IV 0 and MACs with the retail MAC; AES with IV = E(KS_enc, SSC) and
///   CMAC truncated to 8 octets.
///
/// Not thread-safe: one session per chip connection.
public final class SecureMessaging: @unchecked Sendable {
    public let keys: SessionKeys
    let crypto: ChipCryptography
    /// The send sequence counter, big-endian.
    public private(set) var ssc: [UInt8]

    /// A session with `keys`; `ssc` defaults to zero (PACE, Chip Authentication). BAC starts from its own SSC.
    public init(keys: SessionKeys, ssc: [UInt8]? = nil, crypto: ChipCryptography) {
        self.keys = keys
        self.crypto = crypto
        self.ssc = ssc ?? [UInt8](repeating: 0, count: keys.cipher.blockSize)
        precondition(self.ssc.count == keys.cipher.blockSize, "SSC of \(self.ssc.count) octets for a \(keys.cipher.blockSize)-octet block")
    }

    var cipher: BlockCipher { keys.cipher.blockCipher }
    var blockSize: Int { keys.cipher.blockSize }

    /// Advances the send sequence counter by one (each protect / unprotect does; a chip simulating a lost count too).
    public func incrementSSC() {
        var i = ssc.count - 1
        while i >= 0 {
            ssc[i] &+= 1
            if ssc[i] != 0 { break }
            i -= 1
        }
    }

    /// The CBC IV: zero for 3DES, E(KS_enc, SSC) for AES (ICAO 9303-11 §9.8.6.2).
    func iv() throws -> [UInt8] {
        let zero = [UInt8](repeating: 0, count: blockSize)
        guard cipher == .aes else { return zero }
        return try crypto.cbcEncrypt(.aes, key: keys.encryption, iv: zero, ssc)
    }

    func encrypt(_ data: [UInt8]) throws -> [UInt8] {
        try crypto.cbcEncrypt(cipher, key: keys.encryption, iv: iv(), ISO9797Padding.pad(data, blockSize: blockSize))
    }

    func decrypt(_ cryptogram: [UInt8]) throws -> [UInt8] {
        guard !cryptogram.isEmpty, cryptogram.count % blockSize == 0 else {
            throw ChipAccessError.secureMessaging("a cryptogram of \(cryptogram.count) octets is not a whole number of \(blockSize)-octet blocks")
        }
        let plain = try chipCrypto { try crypto.cbcDecrypt(cipher, key: keys.encryption, iv: iv(), cryptogram) }
        guard let data = ISO9797Padding.unpad(plain) else { throw ChipAccessError.secureMessaging("the decrypted data is not padded as ISO/IEC 9797-1 method 2 requires") }
        return data
    }

    /// The 8-octet MAC of SSC ‖ `data` (padded to whole blocks).
    func mac(_ data: [UInt8]) throws -> [UInt8] {
        switch keys.cipher {
        case .tripleDES: return try crypto.retailMAC(key: keys.mac, ssc + data)
        case .aes128, .aes192, .aes256: return Array(try crypto.cmac(key: keys.mac, ISO9797Padding.pad(ssc + data, blockSize: 16)).prefix(8))
        }
    }

    // MARK: Terminal side

    /// The protected form of `command` (increments the SSC). `extended`: use extended length fields for the
    /// protected command (needed when the original is extended, the protected data exceeds 255 octets, or the
    /// protected response will exceed 256 and the chip takes extended lengths).
    public func protect(_ command: CommandAPDU, extended: Bool) throws -> CommandAPDU {
        incrementSSC()
        let cla = command.cla | 0x0C
        let header = ISO9797Padding.pad([cla, command.ins, command.p1, command.p2], blockSize: blockSize)
        var objects: [UInt8] = []
        if !command.data.isEmpty {
            let cryptogram = try chipCrypto { try encrypt(command.data) }
            objects += command.ins & 1 == 1 ? DER.tlv(0x85, cryptogram) : DER.tlv(0x87, [0x01] + cryptogram)
        }
        if let ne = command.ne {
            let longLe = command.isExtended || ne > 256
            objects += DER.tlv(0x97, longLe ? [UInt8((ne & 0xFFFF) >> 8), UInt8(ne & 0xFF)] : [UInt8(ne & 0xFF)])
        }
        let checksum = try chipCrypto { try mac(header + objects) }
        objects += DER.tlv(0x8E, checksum)
        let ext = extended || command.isExtended || objects.count > 255
        return CommandAPDU(cla: cla, ins: command.ins, p1: command.p1, p2: command.p2, data: objects, ne: ext ? 65_536 : 256, extended: ext)
    }

    /// The plain response of a protected `response` (increments the SSC): verifies DO'8E' over the data objects,
    /// decrypts DO'87'/'85' and takes the status word from DO'99'. Throws `ChipAccessError.secureMessaging` for a
    /// response without secure-messaging objects (the chip ended the session), a bad MAC, or malformed objects.
    public func unprotect(_ response: ResponseAPDU) throws -> ResponseAPDU {
        incrementSSC()
        guard !response.data.isEmpty else {
            throw ChipAccessError.secureMessaging("the chip answered \(response.status) without secure messaging, which ends the session")
        }
        let objects = try Self.dataObjects(response.data)
        guard let macObject = objects.last, macObject.tag == 0x8E else {
            throw ChipAccessError.secureMessaging("the response has no MAC (DO'8E') at its end")
        }
        guard macObject.value.count == 8 else { throw ChipAccessError.secureMessaging("a MAC of \(macObject.value.count) octets") }
        let covered = Array(response.data[..<macObject.start])
        let expected = try chipCrypto { try mac(covered) }
        guard Bytes.constantTimeEqual(expected, macObject.value) else {
            throw ChipAccessError.secureMessaging("the response's MAC does not verify (wrong session keys or send sequence counter)")
        }
        var data: [UInt8] = []
        var status: StatusWord?
        for o in objects.dropLast() {
            switch o.tag {
            case 0x87:
                guard o.value.first == 0x01 else { throw ChipAccessError.secureMessaging("DO'87' without the padding-content indicator 01") }
                data = try decrypt(Array(o.value.dropFirst()))
            case 0x85:
                data = try decrypt(o.value)
            case 0x81:
                data = o.value   // plain data object, allowed by ISO/IEC 7816-4
            case 0x99:
                guard o.value.count == 2 else { throw ChipAccessError.secureMessaging("DO'99' of \(o.value.count) octets") }
                status = StatusWord(sw1: o.value[0], sw2: o.value[1])
            default:
                throw ChipAccessError.secureMessaging(String(format: "unexpected data object %02X in the response", o.tag))
            }
        }
        guard let status else { throw ChipAccessError.secureMessaging("the response has no status word (DO'99')") }
        return ResponseAPDU(data: data, status: status)
    }

    // MARK: Chip side

    /// The plain command of a protected `command` (increments the SSC), as the chip reads it. Throws
    /// `ChipAccessError.secureMessaging` for an unprotected command, missing objects or a bad MAC.
    public func unprotectCommand(_ command: CommandAPDU) throws -> CommandAPDU {
        incrementSSC()
        guard command.cla & 0x0C == 0x0C else { throw ChipAccessError.secureMessaging("a command without secure messaging") }
        let objects = try Self.dataObjects(command.data)
        guard let macObject = objects.last, macObject.tag == 0x8E, macObject.value.count == 8 else {
            throw ChipAccessError.secureMessaging("the command has no MAC (DO'8E') at its end")
        }
        let header = ISO9797Padding.pad([command.cla, command.ins, command.p1, command.p2], blockSize: blockSize)
        let expected = try chipCrypto { try mac(header + Array(command.data[..<macObject.start])) }
        guard Bytes.constantTimeEqual(expected, macObject.value) else {
            throw ChipAccessError.secureMessaging("the command's MAC does not verify")
        }
        var plain = CommandAPDU(cla: command.cla & ~0x0C, ins: command.ins, p1: command.p1, p2: command.p2)
        for o in objects.dropLast() {
            switch o.tag {
            case 0x87:
                guard o.value.first == 0x01 else { throw ChipAccessError.secureMessaging("DO'87' without 01") }
                plain.data = try decrypt(Array(o.value.dropFirst()))
            case 0x85: plain.data = try decrypt(o.value)
            case 0x97:
                guard (1...2).contains(o.value.count) else { throw ChipAccessError.secureMessaging("DO'97' of \(o.value.count) octets") }
                let le = o.value.reduce(0) { $0 << 8 | Int($1) }
                plain.ne = le == 0 ? (o.value.count == 1 ? 256 : 65_536) : le
                plain.extended = o.value.count == 2
            default:
                throw ChipAccessError.secureMessaging(String(format: "unexpected data object %02X in the command", o.tag))
            }
        }
        if plain.data.count > 255 { plain.extended = true }
        return plain
    }

    /// The protected form of the chip's `response` to a command with instruction `ins` (increments the SSC).
    public func protectResponse(_ response: ResponseAPDU, ins: UInt8) throws -> ResponseAPDU {
        incrementSSC()
        var objects: [UInt8] = []
        if !response.data.isEmpty {
            let cryptogram = try chipCrypto { try encrypt(response.data) }
            objects += ins & 1 == 1 ? DER.tlv(0x85, cryptogram) : DER.tlv(0x87, [0x01] + cryptogram)
        }
        objects += DER.tlv(0x99, [response.status.sw1, response.status.sw2])
        objects += DER.tlv(0x8E, try chipCrypto { try mac(objects) })
        return ResponseAPDU(data: objects, status: response.status)
    }

    // MARK: Data objects

    struct DataObject { let tag: UInt32; let value: [UInt8]; let start: Int }

    /// The BER-TLV data objects of a secure-messaging field, in order, each with its start offset.
    static func dataObjects(_ bytes: [UInt8]) throws -> [DataObject] {
        var r = BERReader(bytes, limits: BERLimits(maxLength: 70_000, maxDepth: 2))
        var out: [DataObject] = []
        do {
            while !r.atEnd {
                let e = try r.read()
                out.append(DataObject(tag: e.tag.raw, value: e.valueBytes, start: e.start))
            }
        } catch let e as BERError {
            throw ChipAccessError.secureMessaging("malformed data objects: \(e)")
        }
        return out
    }
}
