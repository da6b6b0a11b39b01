import EMRTDCore
import Foundation

/// An elementary file of the eMRTD: EF.CardAccess in the master file, and EF.COM, EF.SOD and the data groups of the
/// LDS1 application (ICAO 9303-10 §4.6–4.7, Table 33).
public enum ChipFile: Hashable, Sendable, Comparable, CustomStringConvertible {
    case cardAccess
    case com
    case sod
    case dataGroup(Int)

    /// The file identifier: 011C, 011E, 011D, 0101…0110.
    public var fileIdentifier: [UInt8] {
        switch self {
        case .cardAccess: return [0x01, 0x1C]
        case .com: return [0x01, 0x1E]
        case .sod: return [0x01, 0x1D]
        case .dataGroup(let n): return [0x01, UInt8(n)]
        }
    }

    /// The name `idvd chip verify --dir` reads the file under: `EF_CardAccess.bin`, `EF_COM.bin`, `EF_SOD.bin`, `DG<n>.bin`.
    public var fileName: String {
        switch self {
        case .cardAccess: return "EF_CardAccess.bin"
        case .com: return "EF_COM.bin"
        case .sod: return "EF_SOD.bin"
        case .dataGroup(let n): return "DG\(n).bin"
        }
    }

    public var description: String {
        switch self {
        case .cardAccess: return "EF.CardAccess"
        case .com: return "EF.COM"
        case .sod: return "EF.SOD"
        case .dataGroup(let n): return "DG\(n)"
        }
    }

    private var order: Int { switch self { case .cardAccess: return -2; case .com: return -1; case .sod: return 100; case .dataGroup(let n): return n } }
    public static func < (a: ChipFile, b: ChipFile) -> Bool { a.order < b.order }
}

/// How far reading one file has got: octets read of the file's total (its TLV length, known after the first read).
public struct ReadProgress: Sendable, Equatable {
    public var file: ChipFile
    public var bytesRead: Int
    public var totalBytes: Int
}

/// Which access control ran.
public enum AccessControlOutcome: Sendable, Equatable, CustomStringConvertible {
    /// PACE with `protocol` on `domain`, opened with the MRZ or the CAN.
    case pace(protocol: PACEProtocol, domain: String, password: String)
    /// BAC (3DES secure messaging); `paceFailure` says why PACE was not used when the chip offered it.
    case bac(paceFailure: String?)

    public var accessProtocol: AccessProtocol { if case .pace = self { return .pace } else { return .bac } }

    public var description: String {
        switch self {
        case let .pace(p, d, pw): return "PACE (\(p), \(d), password \(pw))"
        case .bac(let f): return "BAC" + (f.map { " (PACE not used: \($0))" } ?? "")
        }
    }
}

/// What Chip Authentication came to.
public enum ChipAuthenticationOutcome: Sendable, Equatable, CustomStringConvertible {
    /// It ran and the session continued with the new keys: the chip holds DG14's private key.
    case succeeded(protocol: ChipAuthenticationProtocol, keyId: Int?)
    /// DG14 offers it but it failed (the chip refused, or the session did not continue with the new keys).
    case failed(String)
    /// DG14 is absent or offers no Chip Authentication key.
    case notOffered
    /// The caller did not ask for it.
    case notRun

    public var description: String {
        switch self {
        case let .succeeded(p, id): return "succeeded (\(p)\(id.map { ", key \($0)" } ?? ""))"
        case .failed(let s): return "failed: \(s)"
        case .notOffered: return "not offered (no Chip Authentication key in DG14)"
        case .notRun: return "not run"
        }
    }
}

/// What Active Authentication came to.
public enum ActiveAuthenticationOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The chip signed the challenge; the signature octets as the chip returned them (the server verifies them).
    case signed(challenge: [UInt8], signature: [UInt8])
    /// The chip has DG15 but did not sign (its status word or the error).
    case failed(String)
    /// No DG15: the chip offers no Active Authentication.
    case notOffered
    /// No challenge was given.
    case notRequested

    public var description: String {
        switch self {
        case let .signed(c, s): return "signed (challenge \(Bytes.hexString(c)), signature of \(s.count) octets)"
        case .failed(let s): return "failed: \(s)"
        case .notOffered: return "not offered (no DG15)"
        case .notRequested: return "not requested (no challenge)"
        }
    }
}

/// What `EMRTDReader.read` should do beyond the defaults.
public struct ChipReadOptions: Sendable {
    /// Data groups to read; nil: every group EF.COM lists except DG3 and DG4 (Extended Access Control protects
    /// them; a chip answers 6982).
    public var dataGroups: Set<Int>?
    /// Run Chip Authentication when DG14 offers it (ICAO 9303-11 §6.2).
    public var chipAuthentication = true
    /// The server's 8-octet challenge for Active Authentication; nil: AA is not run.
    public var activeAuthenticationChallenge: [UInt8]?
    /// Try PACE first when EF.CardAccess offers it (ICAO 9303-11 §4.2); false: BAC only (MRZ keys).
    public var preferPACE = true
    /// Called after every READ BINARY with the file's progress.
    public var progress: (@Sendable (ReadProgress) -> Void)?

    public init(dataGroups: Set<Int>? = nil, chipAuthentication: Bool = true, activeAuthenticationChallenge: [UInt8]? = nil,
                preferPACE: Bool = true, progress: (@Sendable (ReadProgress) -> Void)? = nil) {
        self.dataGroups = dataGroups; self.chipAuthentication = chipAuthentication
        self.activeAuthenticationChallenge = activeAuthenticationChallenge; self.preferPACE = preferPACE; self.progress = progress
    }
}

/// Everything one read brought back: the files exactly as read, which protocols ran and how, and the AA signature.
public struct ChipReadResult: Sendable {
    /// EF.CardAccess (nil when the chip has none), EF.COM, EF.SOD, and each data group read.
    public var cardAccess: [UInt8]?
    public var com: [UInt8]?
    public var sod: [UInt8]?
    public var dataGroups: [Int: [UInt8]]
    /// Data groups the chip listed but refused or lacked, with the status word (DG3/DG4 need EAC: 6982).
    public var skippedDataGroups: [Int: StatusWord]
    public var accessControl: AccessControlOutcome
    public var chipAuthentication: ChipAuthenticationOutcome
    public var activeAuthentication: ActiveAuthenticationOutcome
    /// Named steps (`access control`, `EF.COM`, `DG2`, `chip authentication`, `active authentication`) with their
    /// wall time in seconds and APDU count, in order.
    public var steps: [Step]
    /// Every command sent (GET RESPONSE included) and octets each way.
    public var commandCount: Int
    public var bytesSent: Int
    public var bytesReceived: Int

    public struct Step: Sendable, Equatable {
        public var name: String
        public var seconds: Double
        public var commands: Int
    }

    /// Every file read, named as `idvd chip verify --dir` reads them (`ChipFile.fileName`).
    public var files: [ChipFile: [UInt8]] {
        var out: [ChipFile: [UInt8]] = [:]
        if let cardAccess { out[.cardAccess] = cardAccess }
        if let com { out[.com] = com }
        if let sod { out[.sod] = sod }
        for (n, b) in dataGroups { out[.dataGroup(n)] = b }
        return out
    }

    /// Writes every file into `directory` (created if needed) as `EF_CardAccess.bin`, `EF_COM.bin`, `EF_SOD.bin`,
    /// `DG<n>.bin`; returns the names written, in file order.
    @discardableResult
    public func write(to directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var names: [String] = []
        for (file, bytes) in files.sorted(by: { $0.key < $1.key }) {
            try Data(bytes).write(to: directory.appendingPathComponent(file.fileName))
            names.append(file.fileName)
        }
        return names
    }
}

/// Reads an eMRTD chip through a `ChipTransport` (ICAO 9303-11 §4 access control and §6 chip authentication,
/// 9303-10 files): the one-call `read(_:options:)`, or step by step — `establishAccess`, `readFile`,
/// `runChipAuthentication`, `runActiveAuthentication` — for a caller that interleaves its own steps (the server's
/// challenge). Blocking; not thread-safe (one reader per chip session; on iOS call it off the main thread).
public final class EMRTDReader {
    public let channel: APDUChannel
    let crypto: ChipCryptography
    /// The access control that ran, once `establishAccess` succeeded.
    public private(set) var accessControl: AccessControlOutcome?
    /// EF.CardAccess as read before access control (nil: the chip has none).
    public private(set) var cardAccess: [UInt8]?
    private var key: AccessKey?
    private var preferPACE = true
    /// The most octets one READ BINARY asks for: 223 with short lengths (the protected response stays within 256
    /// octets), `extendedReadLength` when the chip takes extended lengths.
    public var extendedReadLength = 4096
    static let shortReadLength = 0xDF
    /// Files larger than this are refused unread (`ChipFiles.fileLimit` on the server: 4 MiB).
    public static let fileLimit = 4 << 20

    public init(transport: ChipTransport, crypto: ChipCryptography) {
        channel = APDUChannel(transport: transport, crypto: crypto)
        self.crypto = crypto
    }

    // MARK: Access control

    /// Opens the chip with `key`: PACE when EF.CardAccess offers a protocol this reader runs, else BAC (ICAO
    /// 9303-11 §4.2); a chip refusing PACE for another reason than the password falls back to BAC with an MRZ
    /// key. Selects the eMRTD application. Throws `accessDenied` for a wrong MRZ or CAN, `unsupportedProtocol`
    /// for a CAN on a chip without PACE.
    @discardableResult
    public func establishAccess(_ key: AccessKey, preferPACE: Bool = true) throws -> AccessControlOutcome {
        self.key = key
        self.preferPACE = preferPACE
        channel.secureMessaging = nil
        accessControl = nil
        cardAccess = try readPlainCardAccess()
        var paceFailure: String?
        if preferPACE, let bytes = cardAccess {
            do {
                let infos = try SecurityInfos(cardAccess: bytes)
                if let (info, domain) = Self.choosePACE(infos) {
                    let several = infos.paceInfos.filter { $0.protocol == info.protocol }.count > 1
                    let o = try PACE.run(on: channel, info: info, domain: domain, key: key, crypto: crypto, includeParameterId: several)
                    try selectApplication()
                    let outcome = AccessControlOutcome.pace(protocol: info.protocol, domain: o.domain, password: key.description)
                    accessControl = outcome
                    return outcome
                }
                paceFailure = "EF.CardAccess offers no PACE protocol this reader runs (\(infos.paceInfos.map(\.protocol.description).joined(separator: ", ")))"
            } catch let e as ChipAccessError {
                if e.isAccessDenied { throw e }
                if case .cardRemoved = e { throw e }
                if case .timeout = e { throw e }
                paceFailure = e.description
            } catch let e as SecurityInfoError {
                paceFailure = "EF.CardAccess cannot be read: \(e)"
            }
        }
        let mrz: MRZInformationDigest
        switch key {
        case .mrz(let fields): mrz = MRZInformationDigest(fields, crypto)
        case .mrzDigest(let digest): mrz = digest
        case .can:
            throw ChipAccessError.unsupportedProtocol(paceFailure.map { "a CAN opens a chip only with PACE, and \($0)" }
                ?? "the chip offers no PACE (no EF.CardAccess), and a CAN opens a chip only with PACE; use the MRZ")
        }
        channel.secureMessaging = nil
        try selectApplication()
        do {
            try BAC.run(on: channel, digest: mrz, crypto: crypto)
        } catch let e as ChipAccessError {
            if case .unexpectedStatus(_, let sw) = e, sw == .instructionNotSupported || sw == .conditionsNotSatisfied, let paceFailure {
                throw ChipAccessError.unsupportedProtocol("the chip does not take BAC (status \(sw)) and PACE failed: \(paceFailure)")
            }
            throw e
        }
        let outcome = AccessControlOutcome.bac(paceFailure: paceFailure)
        accessControl = outcome
        return outcome
    }

    /// The PACE protocol to run: generic mapping with known domain parameters, ECDH before DH, stronger ciphers first.
    static func choosePACE(_ infos: SecurityInfos) -> (PACEInfo, DomainParameters)? {
        let usable = infos.paceInfos.compactMap { info -> (PACEInfo, DomainParameters)? in
            guard PACE.supports(info), let d = infos.domainParameters(for: info), d.isEC == (info.protocol.keyAgreement == .ecdh) else { return nil }
            return (info, d)
        }
        func rank(_ i: PACEInfo) -> Int { (i.protocol.keyAgreement == .ecdh ? 100 : 0) + i.protocol.cipher.arc }
        return usable.max { rank($0.0) < rank($1.0) }
    }

    /// EF.CardAccess read in the master file without secure messaging (before access control); nil when absent.
    func readPlainCardAccess() throws -> [UInt8]? {
        let r = try channel.send(selectCommand(.cardAccess))
        guard r.status.isSuccess else { return nil }
        switch try readSelected(.cardAccess) {
        case .read(let b): return b
        default: return nil
        }
    }

    /// SELECT of the eMRTD application by its AID (ICAO 9303-10 §4.1); protected once a session is up.
    public func selectApplication() throws {
        let r = try channel.send(CommandAPDU(ins: 0xA4, p1: 0x04, p2: 0x0C, data: LDSTags.applicationIdentifier))
        guard r.status.isSuccess else {
            if r.status == .fileNotFound { throw ChipAccessError.unsupportedProtocol("the chip has no eMRTD (LDS1) application (status \(r.status))") }
            throw ChipAccessError.unexpectedStatus(command: "SELECT eMRTD application", status: r.status)
        }
    }

    // MARK: Files

    /// What reading one file gave.
    public enum FileRead: Sendable, Equatable {
        case read([UInt8])
        /// SELECT or READ BINARY answered 6A82.
        case notFound
        /// The chip refused it (6982: Extended Access Control protects DG3 and DG4).
        case refused(StatusWord)
    }

    func selectCommand(_ file: ChipFile) -> CommandAPDU {
        CommandAPDU(ins: 0xA4, p1: 0x02, p2: 0x0C, data: file.fileIdentifier)
    }

    /// SELECT and READ BINARY of `file` in the current application (EF.CardAccess: the master file), in chunks,
    /// B1 with an offset data object past offset 32 767, reporting progress after each chunk.
    public func readFile(_ file: ChipFile, progress: (@Sendable (ReadProgress) -> Void)? = nil) throws -> FileRead {
        let r = try channel.send(selectCommand(file))
        if r.status == .fileNotFound { return .notFound }
        if r.status == .securityStatusNotSatisfied || r.status == .conditionsNotSatisfied { return .refused(r.status) }
        guard r.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "SELECT \(file)", status: r.status) }
        return try readSelected(file, progress: progress)
    }

    var readLength: Int { channel.extendedLength ? max(Self.shortReadLength, extendedReadLength) : Self.shortReadLength }

    func readSelected(_ file: ChipFile, progress: (@Sendable (ReadProgress) -> Void)? = nil) throws -> FileRead {
        var first: [UInt8]
        switch try readBinary(offset: 0, length: readLength, file: file) {
        case .success(let b): first = b
        case .status(let sw):
            if sw == .fileNotFound { return .notFound }
            if sw == .securityStatusNotSatisfied || sw == .conditionsNotSatisfied { return .refused(sw) }
            throw ChipAccessError.unexpectedStatus(command: "READ BINARY \(file)", status: sw)
        }
        // The file's length from its TLV header (ICAO 9303-10 §4.4: every EF is one BER-TLV).
        if first.count < 2 { throw ChipAccessError.malformedResponse("\(file) starts with \(first.count) octets") }
        let total: Int
        do {
            let (_, headerLength, valueLength) = try BERReader.header(first)
            guard let valueLength else { throw ChipAccessError.malformedResponse("\(file) has an indefinite length") }
            guard valueLength <= UInt64(Self.fileLimit) else {
                throw ChipAccessError.malformedResponse("\(file) declares \(valueLength) octets, more than the limit of \(Self.fileLimit)")
            }
            total = headerLength + Int(valueLength)
        } catch let e as BERError {
            throw ChipAccessError.malformedResponse("\(file) does not start with a BER-TLV header (\(e))")
        }
        var data = Array(first.prefix(total))
        progress?(ReadProgress(file: file, bytesRead: data.count, totalBytes: total))
        while data.count < total {
            switch try readBinary(offset: data.count, length: min(readLength, total - data.count), file: file) {
            case .success(let b):
                guard !b.isEmpty else { throw ChipAccessError.malformedResponse("\(file): READ BINARY at \(data.count) returned no data, \(total - data.count) octets short") }
                data += b.prefix(total - data.count)
            case .status(let sw):
                throw ChipAccessError.unexpectedStatus(command: "READ BINARY \(file) at offset \(data.count)", status: sw)
            }
            progress?(ReadProgress(file: file, bytesRead: data.count, totalBytes: total))
        }
        return .read(data)
    }

    enum BinaryResult { case success([UInt8]); case status(StatusWord) }

    /// One READ BINARY: B0 with the offset in P1-P2 up to 32 767, else B1 with DO'54' (ISO/IEC 7816-4 §11.2.3).
    /// Accepts 6282 (end of file); retries a wrong Le (6Cxx) with the length the chip gives; on 6700 with a long
    /// Le falls back to short reads.
    func readBinary(offset: Int, length: Int, file: ChipFile) throws -> BinaryResult {
        var length = length
        for _ in 0..<3 {
            let command: CommandAPDU
            let odd = offset > 0x7FFF
            if odd {
                let o = offset > 0xFFFF ? [UInt8(offset >> 16), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF)] : [UInt8(offset >> 8), UInt8(offset & 0xFF)]
                // DO'53' around the data takes up to 4 octets of the response.
                let content = min(length, channel.extendedLength ? length : Self.shortReadLength - 4)
                command = CommandAPDU(ins: 0xB1, p1: 0, p2: 0, data: DER.tlv(0x54, o), ne: content + (content > 255 ? 4 : content > 127 ? 3 : 2))
            } else {
                command = CommandAPDU(ins: 0xB0, p1: UInt8(offset >> 8), p2: UInt8(offset & 0xFF), ne: length)
            }
            let r = try channel.send(command)
            if let exact = r.status.exactLength, exact < length { length = exact; continue }
            if r.status == .wrongLength, length > Self.shortReadLength {
                channel.extendedLength = false
                length = Self.shortReadLength
                continue
            }
            guard r.status.isSuccess || r.status == .endOfFile else { return .status(r.status) }
            guard odd else { return .success(r.data) }
            do {
                let e = try BERReader.single(r.data)
                guard e.tag.raw == 0x53 else { throw ChipAccessError.malformedResponse("READ BINARY (B1) of \(file) returned tag \(e.tag), not 53") }
                return .success(e.valueBytes)
            } catch let e as BERError {
                throw ChipAccessError.malformedResponse("READ BINARY (B1) of \(file): \(e)")
            }
        }
        throw ChipAccessError.malformedResponse("READ BINARY of \(file) at \(offset): the chip kept refusing the length")
    }

    // MARK: Chip and Active Authentication

    /// Runs Chip Authentication with DG14's SecurityInfos and confirms it: a protected SELECT must verify with the
    /// new session keys. A chip that refuses keeps the old session; a session that does not continue is
    /// re-established with the same access key (the chip ends SM on an error), and the outcome is `.failed`.
    public func runChipAuthentication(_ dg14: SecurityInfos) -> ChipAuthenticationOutcome {
        guard let choice = ChipAuthentication.choose(dg14) else { return .notOffered }
        do {
            try ChipAuthentication.run(on: channel, choice: choice, crypto: crypto)
        } catch let e as ChipAccessError {
            if case .secureMessaging = e { reestablish() }
            return .failed(e.description)
        } catch {
            return .failed("\(error)")
        }
        do {
            let r = try channel.send(selectCommand(.com))
            guard r.status.isSuccess || r.status == .fileNotFound else { throw ChipAccessError.unexpectedStatus(command: "SELECT after Chip Authentication", status: r.status) }
            return .succeeded(protocol: choice.info.protocol, keyId: choice.info.keyId ?? choice.publicKey.keyId)
        } catch let e as ChipAccessError {
            if case .cardRemoved = e { return .failed(e.description) }
            reestablish()
            return .failed("the session did not continue with the new keys (\(e.description))")
        } catch {
            reestablish()
            return .failed("\(error)")
        }
    }

    /// Opens the chip again with the same key after a broken session (best effort; a later command reports failure).
    private func reestablish() {
        guard let key else { return }
        channel.secureMessaging = nil
        _ = try? channel.send(CommandAPDU(ins: 0xA4, p1: 0x00, p2: 0x0C))   // back to the master file for PACE
        _ = try? establishAccess(key, preferPACE: preferPACE)
    }

    /// INTERNAL AUTHENTICATE with the caller's 8-octet challenge (ICAO 9303-11 §6.1): the chip's signature octets.
    public func runActiveAuthentication(challenge: [UInt8]) throws -> [UInt8] {
        try ActiveAuthentication.run(on: channel, challenge: challenge)
    }

    // MARK: One call

    /// Opens the chip with `key`, reads EF.COM, DG14 (then Chip Authentication), EF.SOD and the data groups, and
    /// runs Active Authentication on the given challenge when the chip has DG15. Throws for what stops the read
    /// (wrong key, card removed, timeout, broken secure messaging); CA and AA failures are outcomes, not errors.
    public func read(_ key: AccessKey, options: ChipReadOptions = ChipReadOptions()) throws -> ChipReadResult {
        var steps: [ChipReadResult.Step] = []
        func step<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
            let t0 = Date(), c0 = channel.commandCount
            defer { steps.append(.init(name: name, seconds: Date().timeIntervalSince(t0), commands: channel.commandCount - c0)) }
            return try body()
        }
        let access = try step("access control") { try establishAccess(key, preferPACE: options.preferPACE) }
        var groups: [Int: [UInt8]] = [:]
        var skipped: [Int: StatusWord] = [:]
        var com: [UInt8]?
        if case .read(let b) = try step("EF.COM", { try readFile(.com, progress: options.progress) }) { com = b }
        // EF.COM lists the data groups (it is not signed, so a group it omits is tried only when asked for).
        let listed = Set(com.flatMap { try? LDSTags.dataGroupsListed(inCOM: $0) } ?? Array(1...16))
        let wanted = options.dataGroups ?? listed.subtracting([3, 4])
        func readGroup(_ n: Int) throws {
            switch try step("DG\(n)", { try readFile(.dataGroup(n), progress: options.progress) }) {
            case .read(let b): groups[n] = b
            case .notFound: if listed.contains(n) && com != nil { skipped[n] = .fileNotFound }
            case .refused(let sw): skipped[n] = sw
            }
        }

        var ca = ChipAuthenticationOutcome.notRun
        if listed.contains(14), wanted.contains(14) || options.chipAuthentication { try readGroup(14) }
        if options.chipAuthentication {
            if let dg14 = groups[14], let infos = try? SecurityInfos(dg14: dg14) {
                ca = step("chip authentication") { runChipAuthentication(infos) }
                if case .failed = ca, channel.secureMessaging == nil {
                    throw ChipAccessError.secureMessaging("the session could not be re-established after Chip Authentication failed")
                }
            } else {
                ca = .notOffered
            }
        }
        var sod: [UInt8]?
        if case .read(let b) = try step("EF.SOD", { try readFile(.sod, progress: options.progress) }) { sod = b }
        for n in wanted.sorted() where groups[n] == nil && n != 14 { try readGroup(n) }

        var aa = ActiveAuthenticationOutcome.notRequested
        if let challenge = options.activeAuthenticationChallenge {
            // DG15 is looked for even when EF.COM (which is not signed) leaves it out.
            if groups[15] == nil, skipped[15] == nil { try readGroup(15) }
            if groups[15] == nil {
                aa = .notOffered
            } else {
                do {
                    let signature = try step("active authentication") { try runActiveAuthentication(challenge: challenge) }
                    aa = .signed(challenge: challenge, signature: signature)
                } catch let e as ChipAccessError {
                    switch e {
                    case .cardRemoved, .timeout, .secureMessaging, .invalidInput: throw e
                    default: aa = .failed(e.description)
                    }
                }
            }
        }
        return ChipReadResult(cardAccess: cardAccess, com: com, sod: sod, dataGroups: groups, skippedDataGroups: skipped, accessControl: access,
                              chipAuthentication: ca, activeAuthentication: aa, steps: steps, commandCount: channel.commandCount,
                              bytesSent: channel.bytesSent, bytesReceived: channel.bytesReceived)
    }
}
