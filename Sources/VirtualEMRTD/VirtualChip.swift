import ChipAccess
import ChipAccessOpenSSL
import EMRTDCore
import Foundation

/// A virtual eMRTD chip written for this project: the card side of ICAO 9303-11 over one chip folder — SELECT,
/// READ BINARY (B0 and B1), BAC, PACE generic mapping (MRZ and CAN; ECDH and DH; 3DES and AES), secure
/// messaging, Chip Authentication and Active Authentication (ISO/IEC 9796-2 scheme 1 for RSA keys, ECDSA plain
/// for EC keys) — so the client's reader is tested against a chip it does not share state with, through the real
/// PC/SC stack (`VPCDLink`, `PCSCDaemon`). Test faults (a card removed mid-read, a chip that stops answering, a
/// corrupted MAC, a skipped send sequence counter) come from `faults`.
///
/// Access rules, as an ICAO chip's: EF.CardAccess is readable in the master file without access control; the
/// eMRTD application can be selected, but its files need BAC or PACE; once a session is up, every command must be
/// protected (a plain or mis-protected command ends the session with 6987/6988). Not thread-safe: one link.
public final class VirtualChip: @unchecked Sendable {
    /// What the chip does with one command, for the link that carries it.
    public enum Action: Equatable {
        case respond([UInt8])
        /// Close the link without answering (the card left the field).
        case removeCard
        /// Hold the link open without answering (a chip that hangs).
        case stopAnswering
    }

    /// A fault to inject, for the reader's error paths.
    public enum Fault: Sendable, Equatable {
        /// Leave the field when a READ BINARY of `file` asks for data at or past `offset`.
        case removeCard(whenReading: ChipFile, atOffset: Int)
        /// Stop answering at the first READ BINARY of `file`.
        case stopAnswering(whenReading: ChipFile)
        /// Flip a bit of the MAC of the `n`th protected response (1-based, counted from the start of a session).
        case corruptResponseMAC(protectedResponse: Int)
        /// Increment the send sequence counter once more before the `n`th protected response.
        case skipSendSequenceCounter(protectedResponse: Int)
        /// A clone replaying a recorded answer: INTERNAL AUTHENTICATE returns `signature` (the genuine chip's answer
        /// to an earlier challenge) whatever the challenge.
        case replayActiveAuthentication(signature: [UInt8])
    }

    /// The chip folder served; a new one takes effect at the next power-on or reset.
    public var folder: ChipFolder
    let crypto = OpenSSLChipCryptography()
    /// Whether the ATR says extended length fields are supported (the default); false makes responses longer than
    /// 256 octets go through 61xx and GET RESPONSE.
    public let extendedLength: Bool
    public var faults: [Fault] = []
    /// Commands received since power-on (plain and protected), for tests and the benchmark.
    public private(set) var commandCount = 0

    enum DF { case master, application }
    enum Access: Equatable { case none, bac, pace }
    private var df = DF.master
    private var selected: ChipFile?
    private var sm: SecureMessaging?
    private var access = Access.none
    private var challenge: [UInt8]?
    private var pace: PACEState?
    private var chipAuthentication: (ChipAuthenticationProtocol, Int?)?
    private var pending: [UInt8] = []
    private var protectedResponses = 0

    struct PACEState {
        var info: PACEInfo
        var password: AccessKey
        var domain: KeyAgreementDomain
        var step = 0
        var nonce: [UInt8] = []
        var mapPrivate: [UInt8] = []
        var mapped: KeyAgreementDomain?
        var ephemeralPrivate: [UInt8] = []
        var ephemeralPublic: [UInt8] = []
        var terminalPublic: [UInt8] = []
        var keys: SessionKeys?
    }

    public init(folder: ChipFolder, extendedLength: Bool = true) {
        self.folder = folder
        self.extendedLength = extendedLength
    }

    /// The ATR a contactless reader builds for this chip (PC/SC Part 3 §3.1.3.2.3): `3B 85 80 01` and historical bytes
    /// `80 73 00 00 xx` — a card-capabilities object whose third byte says command chaining and, unless turned
    /// off, extended Lc/Le (ISO/IEC 7816-4 §12.1.1.9) — then TCK.
    public var answerToReset: [UInt8] {
        let historical: [UInt8] = [0x80, 0x73, 0x00, 0x00, extendedLength ? 0xC0 : 0x80]
        var atr: [UInt8] = [0x3B, 0x80 | UInt8(historical.count), 0x80, 0x01] + historical
        atr.append(atr.dropFirst().reduce(0, ^))
        return atr
    }

    /// Power-on or reset: the master file selected, no session.
    public func reset() {
        df = .master; selected = nil; sm = nil; access = .none; challenge = nil; pace = nil
        chipAuthentication = nil; pending = []; protectedResponses = 0
    }

    // MARK: Dispatch

    /// Handles one command APDU.
    public func process(_ bytes: [UInt8]) -> Action {
        commandCount += 1
        guard let command = CommandAPDU(parsing: bytes) else { return .respond(sw(.wrongLength)) }
        if command.ins == 0xC0 { return .respond(getResponse(command)) }
        pending = []
        if command.cla & 0x0C == 0x0C {
            guard let session = sm else { return .respond(sw(.secureMessagingDataObjectsMissing)) }
            let plain: CommandAPDU
            do { plain = try session.unprotectCommand(command) } catch {
                endSession()
                return .respond(sw(.secureMessagingDataObjectsIncorrect))
            }
            let (response, after) = handle(plain)
            if case .removeCard = response { return .removeCard }
            if case .stopAnswering = response { return .stopAnswering }
            guard case .respond(let r) = response, let plainResponse = ResponseAPDU(r) else { return response }
            protectedResponses += 1
            if faults.contains(.skipSendSequenceCounter(protectedResponse: protectedResponses)) { session.incrementSSC() }
            guard var protected = try? session.protectResponse(plainResponse, ins: plain.ins) else { return .respond(sw(.noPreciseDiagnosis)) }
            if faults.contains(.corruptResponseMAC(protectedResponse: protectedResponses)) {
                protected.data[protected.data.count - 1] ^= 0x01
            }
            after?()
            return .respond(chain(protected, ne: command.ne))
        }
        // A plain command ends a session (ICAO 9303-11 §9.8: the chip aborts secure messaging).
        if sm != nil { endSession() }
        let (response, after) = handle(command)
        after?()
        if case .respond(let r) = response, let rr = ResponseAPDU(r) { return .respond(chain(rr, ne: command.ne)) }
        return response
    }

    private func endSession() {
        sm = nil; access = .none; pace = nil; chipAuthentication = nil; protectedResponses = 0
        if df == .application { selected = nil }
    }

    func sw(_ s: StatusWord) -> [UInt8] { [s.sw1, s.sw2] }

    /// A response longer than the short maximum when extended lengths are off: the first 256 octets and 61xx.
    private func chain(_ r: ResponseAPDU, ne: Int?) -> [UInt8] {
        let bytes = r.encoded
        guard !extendedLength, r.data.count > 256 else { return bytes }
        pending = Array(r.data[256...]) + [r.status.sw1, r.status.sw2]
        let remaining = pending.count - 2
        return Array(r.data[0..<256]) + [0x61, UInt8(min(remaining, 256) & 0xFF)]
    }

    private func getResponse(_ command: CommandAPDU) -> [UInt8] {
        guard pending.count > 2 else { return sw(.conditionsNotSatisfied) }
        let data = Array(pending.dropLast(2)), status = Array(pending.suffix(2))
        let n = min(command.ne ?? 256, data.count)
        let chunk = Array(data[0..<n]), rest = Array(data[n...])
        if rest.isEmpty { pending = []; return chunk + status }
        pending = rest + status
        return chunk + [0x61, UInt8(min(rest.count, 256) & 0xFF)]
    }

    /// The plain response to a plain (or unprotected) command, and what to do once it is protected (Chip
    /// Authentication switches keys after answering under the old ones).
    private func handle(_ c: CommandAPDU) -> (Action, (() -> Void)?) {
        switch c.ins {
        case 0xA4: return (.respond(select(c)), nil)
        case 0xB0, 0xB1: return (readBinary(c), nil)
        case 0x84:
            guard c.ne != nil else { return (.respond(sw(.wrongLength)), nil) }
            challenge = (try? crypto.randomBytes(8)) ?? []
            return (.respond(challenge! + sw(.success)), nil)
        case 0x82: return (.respond(externalAuthenticate(c)), nil)
        case 0x22: return manageSecurityEnvironment(c)
        case 0x86: return generalAuthenticate(c)
        case 0x88: return (.respond(internalAuthenticate(c)), nil)
        default: return (.respond(sw(.instructionNotSupported)), nil)
        }
    }

    // MARK: Files

    private func select(_ c: CommandAPDU) -> [UInt8] {
        switch c.p1 {
        case 0x00:
            guard c.data.isEmpty || c.data == [0x3F, 0x00] else { return sw(.fileNotFound) }
            df = .master; selected = nil
            return sw(.success)
        case 0x04:
            guard c.data == LDSTags.applicationIdentifier else { return sw(.fileNotFound) }
            df = .application; selected = nil
            return sw(.success)
        case 0x02, 0x01:
            guard c.data.count == 2 else { return sw(.incorrectParameters) }
            if df == .master {
                guard c.data == ChipFile.cardAccess.fileIdentifier, folder.cardAccess != nil else { return sw(.fileNotFound) }
                selected = .cardAccess
                return sw(.success)
            }
            guard let file = folder.file(withIdentifier: c.data) else { return sw(.fileNotFound) }
            guard access != .none else { return sw(.securityStatusNotSatisfied) }
            selected = file
            return sw(.success)
        default:
            return sw(.incorrectParameters)
        }
    }

    private func readBinary(_ c: CommandAPDU) -> Action {
        let offset: Int
        if c.ins == 0xB0 {
            if c.p1 & 0x80 != 0 {
                // Short EF identifier in P1, offset in P2.
                let sfi = c.p1 & 0x1F
                guard df == .application || sfi == 0x1C, let file = folder.file(withShortIdentifier: sfi, inMaster: df == .master) else { return .respond(sw(.fileNotFound)) }
                guard file == .cardAccess || access != .none else { return .respond(sw(.securityStatusNotSatisfied)) }
                selected = file
                offset = Int(c.p2)
            } else {
                offset = Int(c.p1) << 8 | Int(c.p2)
            }
        } else {
            guard let e = try? BERReader.single(c.data), e.tag.raw == 0x54, (1...4).contains(e.value.count) else { return .respond(sw(.incorrectData)) }
            offset = e.value.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let file = selected, let bytes = folder.bytes(of: file) else { return .respond(sw(.conditionsNotSatisfied)) }
        for f in faults {
            switch f {
            case let .removeCard(target, at) where target == file && offset >= at: return .removeCard
            case let .stopAnswering(target) where target == file: return .stopAnswering
            default: continue
            }
        }
        guard offset <= bytes.count else { return .respond(sw(.wrongParameters)) }
        let wanted = c.ne ?? 256
        var n = min(wanted, bytes.count - offset)
        if c.ins == 0xB1 {
            // DO'53' around the data must fit in Ne.
            n = min(n, wanted - 2)
            if n > 127 { n = min(n, wanted - 3) }
            if n > 255 { n = min(n, wanted - 4) }
            n = max(0, n)
        }
        let data = Array(bytes[offset..<(offset + n)])
        let body = c.ins == 0xB1 ? DER.tlv(0x53, data) : data
        let status: StatusWord = body.count < wanted && offset + n >= bytes.count ? .endOfFile : .success
        return .respond(body + sw(status))
    }

    // MARK: BAC

    private func externalAuthenticate(_ c: CommandAPDU) -> [UInt8] {
        guard df == .application, let mrz = folder.mrzKey else { return sw(.conditionsNotSatisfied) }
        guard let rndIC = challenge else { return sw(.conditionsNotSatisfied) }
        challenge = nil
        let keys = BAC.basicAccessKeys(mrz, crypto)
        guard c.data.count == 40, let plain = try? BAC.openCryptogram(c.data, keys: keys, crypto), Array(plain[8..<16]) == rndIC else {
            return sw(.authenticationFailed)
        }
        let rndIFD = Array(plain[0..<8]), kIFD = Array(plain[16..<32])
        guard let kIC = try? crypto.randomBytes(16), let response = try? BAC.cryptogram(rndIC + rndIFD + kIC, keys: keys, crypto) else {
            return sw(.noPreciseDiagnosis)
        }
        sm = BAC.session(kIFD: kIFD, kIC: kIC, rndIC: rndIC, rndIFD: rndIFD, crypto)
        access = .bac
        protectedResponses = 0
        return response + sw(.success)
    }

    // MARK: MSE, PACE, Chip Authentication

    private func tlvs(_ data: [UInt8]) -> [UInt32: [UInt8]]? {
        var r = BERReader(data)
        var out: [UInt32: [UInt8]] = [:]
        while !r.atEnd {
            guard let e = try? r.read() else { return nil }
            out[e.tag.raw] = e.valueBytes
        }
        return out
    }

    private func manageSecurityEnvironment(_ c: CommandAPDU) -> (Action, (() -> Void)?) {
        guard let objects = tlvs(c.data) else { return (.respond(sw(.incorrectData)), nil) }
        switch (c.p1, c.p2) {
        case (0xC1, 0xA4):
            // PACE: DO'80' protocol, DO'83' password reference, DO'84' parameter ID (ICAO 9303-11 §4.4.4.1).
            guard sm == nil else { return (.respond(sw(.conditionsNotSatisfied)), nil) }
            guard let oid = objects[0x80], let ref = objects[0x83], ref.count == 1 else { return (.respond(sw(.incorrectData)), nil) }
            let dotted = (try? BERReader.single(DER.tlv(0x06, oid)).oidValue()) ?? ""
            let id = objects[0x84].map { $0.reduce(0) { $0 << 8 | Int($1) } }
            guard let infos = folder.securityInfos,
                  let info = infos.paceInfos.first(where: { $0.protocol.oid == dotted && (id == nil || $0.parameterId == id) }),
                  PACE.supports(info), let domain = infos.domainParameters(for: info) else {
                return (.respond(sw(.incorrectData)), nil)
            }
            let password: AccessKey
            switch ref[0] {
            case 0x01:
                guard let mrz = folder.mrzKey else { return (.respond(sw(.referencedDataNotFound)), nil) }
                password = .mrz(mrz)
            case 0x02:
                guard let can = folder.can else { return (.respond(sw(.referencedDataNotFound)), nil) }
                password = .can(can)
            default:
                return (.respond(sw(.referencedDataNotFound)), nil)
            }
            pace = PACEState(info: info, password: password, domain: KeyAgreementDomain(domain))
            return (.respond(sw(.success)), nil)
        case (0x41, 0xA4):
            // Chip Authentication with AES (ICAO 9303-11 §6.2.4): DO'80' protocol, DO'84' key ID.
            guard sm != nil else { return (.respond(sw(.securityStatusNotSatisfied)), nil) }
            guard let oid = objects[0x80], let p = ChipAuthenticationProtocol(oid: (try? BERReader.single(DER.tlv(0x06, oid)).oidValue()) ?? "") else {
                return (.respond(sw(.incorrectData)), nil)
            }
            guard folder.chipAuthenticationKey != nil, folder.chipAuthenticationProtocols.contains(p) else { return (.respond(sw(.referencedDataNotFound)), nil) }
            chipAuthentication = (p, objects[0x84].map { $0.reduce(0) { $0 << 8 | Int($1) } })
            return (.respond(sw(.success)), nil)
        case (0x41, 0xA6):
            // Chip Authentication with 3DES: MSE:Set KAT with the ephemeral key in DO'91'.
            guard let session = sm else { return (.respond(sw(.securityStatusNotSatisfied)), nil) }
            guard let key = objects[0x91] else { return (.respond(sw(.incorrectData)), nil) }
            guard folder.chipAuthenticationProtocols.contains(where: { $0.cipher == .tripleDES }),
                  let keys = chipAuthenticationKeys(peer: key, cipher: .tripleDES) else {
                return (.respond(sw(.referencedDataNotFound)), nil)
            }
            _ = session
            return (.respond(sw(.success)), { self.switchSession(keys) })
        default:
            return (.respond(sw(.incorrectParameters)), nil)
        }
    }

    /// Session keys from the chip's static CA key and the terminal's ephemeral key (nil when unusable).
    private func chipAuthenticationKeys(peer: [UInt8], cipher: SessionCipher) -> SessionKeys? {
        guard let (domain, privateKey) = folder.chipAuthenticationKey,
              let secret = try? domain.sharedSecret(privateKey, peer: peer, crypto) else { return nil }
        return SessionKeys.derive(from: secret, cipher: cipher, crypto: crypto)
    }

    private func switchSession(_ keys: SessionKeys) {
        sm = SecureMessaging(keys: keys, crypto: crypto)
        protectedResponses = 0
        chipAuthentication = nil
    }

    private func generalAuthenticate(_ c: CommandAPDU) -> (Action, (() -> Void)?) {
        guard let root = try? BERReader.single(c.data), root.tag.raw == 0x7C, let inner = tlvs(root.valueBytes) else {
            return (.respond(sw(.incorrectData)), nil)
        }
        if let (p, _) = chipAuthentication, sm != nil {
            guard let key = inner[0x80], let keys = chipAuthenticationKeys(peer: key, cipher: p.cipher) else {
                chipAuthentication = nil
                return (.respond(sw(.incorrectData)), nil)
            }
            return (.respond(DER.tlv(0x7C, []) + sw(.success)), { self.switchSession(keys) })
        }
        guard var state = pace else { return (.respond(sw(.conditionsNotSatisfied)), nil) }
        let chained = c.cla & 0x10 != 0
        let cipher = state.info.protocol.cipher
        do {
            switch state.step {
            case 0:
                guard inner.isEmpty, chained else { throw Refusal.data }
                state.nonce = try crypto.randomBytes(cipher.blockSize)
                let kPi = PACE.passwordKey(state.password, cipher: cipher, crypto)
                let z = try crypto.cbcEncrypt(cipher.blockCipher, key: kPi, iv: [UInt8](repeating: 0, count: cipher.blockSize), state.nonce)
                state.step = 1
                pace = state
                return (.respond(DER.tlv(0x7C, DER.tlv(0x80, z)) + sw(.success)), nil)
            case 1:
                guard chained, let terminalMap = inner[0x81] else { throw Refusal.data }
                state.mapPrivate = try state.domain.randomPrivateKey(crypto)
                let mapPublic = try state.domain.publicKey(state.mapPrivate, crypto)
                guard terminalMap != mapPublic else { throw Refusal.data }
                let h = try state.domain.sharedElement(state.mapPrivate, peer: terminalMap, crypto)
                state.mapped = try state.domain.mapped(nonce: state.nonce, shared: h, crypto)
                state.step = 2
                pace = state
                return (.respond(DER.tlv(0x7C, DER.tlv(0x82, mapPublic)) + sw(.success)), nil)
            case 2:
                guard chained, let terminalPublic = inner[0x83], let mapped = state.mapped else { throw Refusal.data }
                state.ephemeralPrivate = try mapped.randomPrivateKey(crypto)
                state.ephemeralPublic = try mapped.publicKey(state.ephemeralPrivate, crypto)
                guard terminalPublic != state.ephemeralPublic else { throw Refusal.data }
                let secret = try mapped.sharedSecret(state.ephemeralPrivate, peer: terminalPublic, crypto)
                state.terminalPublic = terminalPublic
                state.keys = SessionKeys.derive(from: secret, cipher: cipher, crypto: crypto)
                state.step = 3
                pace = state
                return (.respond(DER.tlv(0x7C, DER.tlv(0x84, state.ephemeralPublic)) + sw(.success)), nil)
            case 3:
                guard !chained, let token = inner[0x85], let keys = state.keys, let mapped = state.mapped else { throw Refusal.data }
                pace = nil
                let expected = try PACE.authenticationToken(state.info.protocol, macKey: keys.mac, publicKey: state.ephemeralPublic, domain: mapped, crypto)
                guard Bytes.constantTimeEqual(expected, token) else { return (.respond(sw(.authenticationFailed)), nil) }
                let mine = try PACE.authenticationToken(state.info.protocol, macKey: keys.mac, publicKey: state.terminalPublic, domain: mapped, crypto)
                sm = SecureMessaging(keys: keys, crypto: crypto)
                access = .pace
                protectedResponses = 0
                return (.respond(DER.tlv(0x7C, DER.tlv(0x86, mine)) + sw(.success)), nil)
            default:
                throw Refusal.data
            }
        } catch {
            pace = nil
            return (.respond(sw(.incorrectData)), nil)
        }
    }

    enum Refusal: Error { case data }

    // MARK: Active Authentication

    private func internalAuthenticate(_ c: CommandAPDU) -> [UInt8] {
        guard access != .none else { return sw(.securityStatusNotSatisfied) }
        guard let key = folder.activeAuthenticationKey else { return sw(.instructionNotSupported) }
        guard c.data.count == ActiveAuthentication.challengeLength else { return sw(.wrongLength) }
        for case let .replayActiveAuthentication(recorded) in faults { return recorded + sw(.success) }
        do {
            switch key.kind {
            case .rsa?:
                guard case .rsa(let modulus, _)? = folder.activeAuthenticationPublicKey?.key else { return sw(.noPreciseDiagnosis) }
                let k = modulus.count
                let hash = folder.activeAuthenticationHash
                let trailer = hash == .sha1 ? 1 : 2
                let m1 = try crypto.randomBytes(k - 1 - hash.length - trailer)
                let representative = ActiveAuthentication.iso9796Representative(m1: m1, challenge: c.data, hash: hash, modulusLength: k, crypto: crypto)
                return try key.rsaPrivateRaw(representative) + sw(.success)
            case .ec?:
                let digest = crypto.digest(folder.activeAuthenticationHash, c.data)
                return try key.ecdsaSignPlain(digest: digest) + sw(.success)
            default:
                return sw(.instructionNotSupported)
            }
        } catch {
            return sw(.noPreciseDiagnosis)
        }
    }
}
