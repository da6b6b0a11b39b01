import CChipCrypto
import ChipAccess
import EMRTDCore
import Foundation

/// `ChipCryptography` on OpenSSL's libcrypto (Debian `libssl-dev`), through the C shim `CChipCrypto`: what chip
/// access uses on Linux. EC groups are built once per curve and cached (a named OpenSSL curve when the parameters
/// equal one, for its optimised arithmetic). Thread-safe.
public final class OpenSSLChipCryptography: ChipCryptography, @unchecked Sendable {
    private let lock = NSLock()
    private var groups: [ECCurveParameters: OpaquePointer] = [:]

    public init() {}

    deinit { for g in groups.values { cc_ec_group_free(g) } }

    /// The OpenSSL version in use ("OpenSSL 3.0.19 …").
    public static var version: String { String(cString: cc_openssl_version()) }

    public func randomBytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard cc_random(&out, count) == 1 else { throw ChipCryptoError(.internal, "OpenSSL's random generator failed") }
        return out
    }

    public func digest(_ algorithm: HashAlgorithm, _ data: [UInt8]) -> [UInt8] {
        let name: String
        switch algorithm {
        case .sha1: name = "SHA1"
        case .sha224: name = "SHA224"
        case .sha256: name = "SHA256"
        case .sha384: name = "SHA384"
        case .sha512: name = "SHA512"
        }
        var out = [UInt8](repeating: 0, count: 64)
        var n = 0
        let st = cc_digest(name, data, data.count, &out, &n)
        precondition(st == CC_OK, "OpenSSL lacks \(name)")
        return Array(out.prefix(n))
    }

    private func cbc(_ cipher: BlockCipher, encrypt: Bool, key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        guard iv.count == cipher.blockSize else { throw ChipCryptoError(.invalidInput, "an IV of \(iv.count) octets for \(cipher.rawValue)") }
        guard data.count % cipher.blockSize == 0 else {
            throw ChipCryptoError(.invalidInput, "\(data.count) octets are not whole \(cipher.rawValue) blocks")
        }
        var out = [UInt8](repeating: 0, count: data.count)
        let st = cc_cbc(cipher == .tripleDES ? Int32(CC_CIPHER_3DES) : Int32(CC_CIPHER_AES), encrypt ? 1 : 0, key, key.count, iv, data, data.count, &out)
        guard st == CC_OK else { throw ChipCryptoError(st == CC_ERR_INVALID ? .invalidInput : .internal, "\(cipher.rawValue)-CBC with a \(key.count)-octet key failed") }
        return out
    }

    public func cbcEncrypt(_ cipher: BlockCipher, key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try cbc(cipher, encrypt: true, key: key, iv: iv, data)
    }

    public func cbcDecrypt(_ cipher: BlockCipher, key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try cbc(cipher, encrypt: false, key: key, iv: iv, data)
    }

    public func cmac(key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        guard cc_cmac(key, key.count, data, data.count, &out) == CC_OK else { throw ChipCryptoError(.invalidInput, "AES-CMAC with a \(key.count)-octet key failed") }
        return out
    }

    /// The cached OpenSSL group of `curve`.
    private func group(_ curve: ECCurveParameters) throws -> OpaquePointer {
        lock.lock()
        defer { lock.unlock() }
        if let g = groups[curve] { return g }
        var g: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let st = cc_ec_group_new(curve.p, curve.p.count, curve.a, curve.a.count, curve.b, curve.b.count, curve.generator, curve.generator.count,
                                 curve.order, curve.order.count, Int32(curve.cofactor), curve.name, &g, &message, message.count)
        guard st == CC_OK, let g else { throw ChipCryptoError(.invalidInput, "curve \(curve): \(Self.text(message))") }
        groups[curve] = g
        return g
    }

    public func ecMultiply(_ curve: ECCurveParameters, scalar: [UInt8], point: [UInt8]?) throws -> [UInt8] {
        let g = try group(curve)
        var out = [UInt8](repeating: 0, count: 1 + 2 * 66)
        var n = 0
        var message = [CChar](repeating: 0, count: 256)
        let st: cc_status
        if let point {
            st = cc_ec_mul(g, scalar, scalar.count, point, point.count, &out, &n, &message, message.count)
        } else {
            st = cc_ec_mul(g, scalar, scalar.count, nil, 0, &out, &n, &message, message.count)
        }
        guard st == CC_OK else { throw ChipCryptoError(st == CC_ERR_INVALID ? .invalidInput : .internal, Self.text(message)) }
        return Array(out.prefix(n))
    }

    public func ecAdd(_ curve: ECCurveParameters, _ a: [UInt8], _ b: [UInt8]) throws -> [UInt8] {
        let g = try group(curve)
        var out = [UInt8](repeating: 0, count: 1 + 2 * 66)
        var n = 0
        var message = [CChar](repeating: 0, count: 256)
        let st = cc_ec_add(g, a, a.count, b, b.count, &out, &n, &message, message.count)
        guard st == CC_OK else { throw ChipCryptoError(st == CC_ERR_INVALID ? .invalidInput : .internal, Self.text(message)) }
        return Array(out.prefix(n))
    }

    public func ecIsOnCurve(_ curve: ECCurveParameters, _ point: [UInt8]) -> Bool {
        guard let g = try? group(curve) else { return false }
        return cc_ec_is_on_curve(g, point, point.count) == 1
    }

    public func modExp(base: [UInt8], exponent: [UInt8], modulus: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: modulus.count)
        let st = cc_mod_exp(base, base.count, exponent, exponent.count, modulus, modulus.count, &out, out.count)
        guard st == CC_OK else { throw ChipCryptoError(.invalidInput, "modular exponentiation with a \(modulus.count)-octet modulus failed") }
        return out
    }

    public func modMultiply(_ a: [UInt8], _ b: [UInt8], modulus: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: modulus.count)
        let st = cc_mod_mul(a, a.count, b, b.count, modulus, modulus.count, &out, out.count)
        guard st == CC_OK else { throw ChipCryptoError(.invalidInput, "modular multiplication with a \(modulus.count)-octet modulus failed") }
        return out
    }

    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
