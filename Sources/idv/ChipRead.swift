import ChipAccess
import ChipAccessOpenSSL
import ChipAccessPCSC
import EMRTDCore
import Foundation

/// `idv chip read`: reads an eMRTD chip over PC/SC into a folder `idvd chip verify --dir` reads, and `idv chip
/// readers`. Exit status: 0 read, 1 access denied (wrong MRZ or CAN), 2 no reader, no card (also one removed
/// mid-read) or unusable input, 3 the read failed another way (timeout, secure messaging, an unsupported protocol,
/// a reader error).
enum ChipReadCommand {
    static let usage = """
    usage: idv chip read (--mrz LINE1 LINE2 [LINE3] | --can NUMBER) --out DIR [--reader NAME] [--aa-challenge HEX]
                         [--wait SECONDS] [--timeout SECONDS] [--no-ca] [--bac] [--progress]
           idv chip readers
      Reads the passport or ID card chip on a PC/SC reader (ICAO 9303-11): PACE when EF.CardAccess offers it, else BAC
      (--bac: BAC only); with --mrz the key is the MRZ's document number, birth date and expiry date, with --can the
      card access number printed on the document (PACE only). Then Chip Authentication when DG14 offers it (--no-ca:
      skip), and Active Authentication on --aa-challenge (8 octets, 16 hex digits) when the chip has DG15.
      Writes EF_CardAccess.bin (when present), EF_COM.bin, EF_SOD.bin and DG<n>.bin into DIR, as 'idvd chip verify
      --dir' reads them, and AA_signature.bin when the chip signed. Prints the reader, the protocols that ran and the
      files. --reader: a reader's name or a unique part of it (default: the first reader with a card); --wait: seconds
      to wait for a document (default 15); --timeout: seconds allowed for each APDU (default 10); --progress: print each
      file's progress (octets read / total) on stderr. The PC/SC service is pcscd ($PCSCLITE_CSOCK_NAME selects its socket).
      Exit: 0 read, 1 access denied (wrong MRZ or CAN), 2 no reader, no card or card removed, unusable input,
      3 another failure (timeout, secure messaging, unsupported protocol, reader error).
    """

    static func fail(_ message: String, _ code: Int32) -> Int32 {
        FileHandle.standardError.write(Data("idv chip: \(message)\n".utf8))
        return code
    }

    static func run(_ args: [String]) -> Int32 {
        guard let sub = args.first, !["-h", "--help"].contains(sub) else {
            print(usage)
            return args.isEmpty ? 2 : 0
        }
        switch sub {
        case "readers": return readers()
        case "read": return read(Array(args.dropFirst()))
        default: return fail("unknown subcommand '\(sub)'\n\(usage)", 2)
        }
    }

    static func readers() -> Int32 {
        do {
            let names = try PCSCContext().readers()
            if names.isEmpty { return fail("no PC/SC reader is connected", 2) }
            names.forEach { print($0) }
            return 0
        } catch let e as ChipAccessError {
            return fail(e.description, 2)
        } catch {
            return fail("\(error)", 3)
        }
    }

    static func read(_ args: [String]) -> Int32 {
        var mrz: [String] = []
        var can: String?, out: String?, readerName: String?, challengeHex: String?
        var wait = 15.0, timeout = PCSCTransport.defaultTimeout
        var chipAuthentication = true, preferPACE = true, progress = false
        var i = 0
        func value(_ name: String) -> String? {
            i += 1
            guard i < args.count, !args[i].hasPrefix("--") else { return nil }
            return args[i]
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help": print(usage); return 0
            case "--mrz":
                while i + 1 < args.count, !args[i + 1].hasPrefix("--"), mrz.count < 3 { i += 1; mrz.append(args[i]) }
                guard mrz.count >= 2 else { return fail("--mrz takes the 2 or 3 lines of the MRZ", 2) }
            case "--can": guard let v = value(a) else { return fail("--can needs the card access number", 2) }; can = v
            case "--out": guard let v = value(a) else { return fail("--out needs a folder", 2) }; out = v
            case "--reader": guard let v = value(a) else { return fail("--reader needs a name", 2) }; readerName = v
            case "--aa-challenge": guard let v = value(a) else { return fail("--aa-challenge needs 16 hex digits", 2) }; challengeHex = v
            case "--wait":
                guard let v = value(a).flatMap(Double.init), v >= 0, v <= 3600 else { return fail("--wait needs seconds (0–3600)", 2) }
                wait = v
            case "--timeout":
                guard let v = value(a).flatMap(Double.init), v > 0, v <= 600 else { return fail("--timeout needs seconds (0–600)", 2) }
                timeout = v
            case "--no-ca": chipAuthentication = false
            case "--bac": preferPACE = false
            case "--progress": progress = true
            default: return fail("unknown argument '\(a)' (see idv chip --help)", 2)
            }
            i += 1
        }
        guard let out else { return fail("--out DIR is required", 2) }
        let key: AccessKey
        do {
            switch (mrz.isEmpty, can) {
            case (false, nil): key = .mrz(try MRZKey(mrzLines: mrz))
            case (true, let c?): key = try AccessKey.canNumber(c)
            default: return fail("give either --mrz LINE1 LINE2 [LINE3] or --can NUMBER", 2)
            }
        } catch let e as ChipAccessError {
            return fail(e.description, 2)
        } catch {
            return fail("\(error)", 2)
        }
        var challenge: [UInt8]?
        if let challengeHex {
            guard let c = Bytes.parseHex(challengeHex), c.count == ActiveAuthentication.challengeLength else {
                return fail("--aa-challenge is 8 octets: 16 hex digits", 2)
            }
            challenge = c
        }

        do {
            let context = try PCSCContext()
            let name = try readerName.map { try context.reader(named: $0) }
            let readerWithCard = try context.waitForCard(in: name, timeout: wait)
            let transport = try context.connect(to: readerWithCard, timeout: timeout)
            defer { transport.close() }
            print("reader: \(readerWithCard)")
            let reader = EMRTDReader(transport: transport, crypto: OpenSSLChipCryptography())
            let started = Date()
            var options = ChipReadOptions(chipAuthentication: chipAuthentication, activeAuthenticationChallenge: challenge, preferPACE: preferPACE)
            if progress {
                options.progress = { (p: ReadProgress) in
                    FileHandle.standardError.write(Data("progress: \(p.file) \(p.bytesRead)/\(p.totalBytes)\n".utf8))
                }
            }
            let result = try reader.read(key, options: options)
            let names = try result.write(to: URL(fileURLWithPath: out))
            print("access control: \(result.accessControl)")
            print("chip authentication: \(result.chipAuthentication)")
            print("active authentication: \(result.activeAuthentication)")
            var ran = [result.accessControl.accessProtocol.rawValue]
            if case .succeeded = result.chipAuthentication { ran.append("CA") }
            if case .signed(_, let signature) = result.activeAuthentication {
                try Data(signature).write(to: URL(fileURLWithPath: out).appendingPathComponent("AA_signature.bin"))
                ran.append("AA")
            }
            let sizes = result.files.sorted { $0.key < $1.key }.map { "\($0.key.fileName) \($0.value.count)" }
            print("files: \(sizes.joined(separator: ", "))")
            if !result.skippedDataGroups.isEmpty {
                print("not read: " + result.skippedDataGroups.sorted { $0.key < $1.key }.map { "DG\($0.key) (\($0.value))" }.joined(separator: ", "))
            }
            print("protocols: \(ran.joined(separator: " "))")
            print(String(format: "apdus: %d in %.2f s (%d octets sent, %d received)", result.commandCount, Date().timeIntervalSince(started),
                         result.bytesSent, result.bytesReceived))
            print("written: \(out) (\(names.count) files)")
            return 0
        } catch let e as ChipAccessError {
            switch e {
            case .accessDenied: return fail(e.description, 1)
            case .noReader, .noCard, .cardRemoved, .invalidInput: return fail(e.description, 2)
            default: return fail(e.description, 3)
            }
        } catch {
            return fail("\(error)", 3)
        }
    }
}
