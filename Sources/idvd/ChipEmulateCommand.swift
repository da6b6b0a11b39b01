import ChipAccess
import EMRTDCore
import Foundation
import VirtualEMRTD

/// `idvd chip emulate`: serves a chip folder as a virtual eMRTD through vsmartcard's vpcd, so any PC/SC client
/// (`idv chip read`, OpenSC, JMRTD) reads it as a card on a reader.
enum ChipEmulateCommand {
    static let usage = """
    usage: idvd chip emulate --dir CHIPDIR [--pcscd | --port P [--host H]] [--pace SPEC …] [--can NUMBER]
                             [--aa-hash sha1|sha256] [--short-lengths]
      Serves CHIPDIR as a virtual eMRTD chip (ICAO 9303-11: BAC, PACE with the MRZ or the CAN, secure messaging,
      Chip Authentication, Active Authentication) to pcscd through vsmartcard's vpcd reader driver.
      CHIPDIR: EF_COM.bin, EF_SOD.bin, DG<n>.bin, EF_CardAccess.bin when the chip offers PACE, and the secrets in
      private/ (aa-key.pem, ca-key.pem: PKCS #8 PEM; can.txt), as 'idvd specimen --chip' writes them; real chip dumps
      (Datagroup1.bin, ef0101.bin, …) load too. The MRZ key is DG1's.
      --pcscd       start a private pcscd with its own socket and vpcd reader (no system service); prints the
                    PCSCLITE_CSOCK_NAME a client needs, e.g. PCSCLITE_CSOCK_NAME=… idv chip read --mrz … --out DIR
      --port P      connect to a vpcd already listening on H:P (default 127.0.0.1:35963, the port Debian's
                    /etc/reader.conf.d/vpcd gives the system pcscd)
      --pace SPEC   offer PACE with this protocol and standardized domain parameters in a generated EF.CardAccess,
                    replacing the folder's (repeatable): ECDH-GM-AES-128:12 (P-256), ECDH-GM-AES-256:17
                    (brainpoolP512r1), DH-GM-3DES:0 (1024-bit MODP), …
      --can N       the CAN (default: private/can.txt)
      --aa-hash H   the hash of RSA Active Authentication (ISO/IEC 9796-2 scheme 1): sha1 (default) or sha256
      --short-lengths  answer as a chip without extended lengths (long responses through 61xx / GET RESPONSE)
      Runs until interrupted; the card is in the reader while it runs.
    """

    /// One line on stdout at once (unbuffered: a script waits for these lines while the command runs).
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func run(_ args: [String]) throws -> Int32 {
        var dir: String?, port: UInt16 = 35_963, host = "127.0.0.1", can: String?
        var privateDaemon = false, shortLengths = false, rsaHash = HashAlgorithm.sha1
        var pace: [PACEInfo] = []
        var i = 0
        func value(_ name: String) throws -> String {
            guard i + 1 < args.count else { throw CLIError("\(name) needs a value") }
            i += 1
            return args[i]
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help": print(usage); return 0
            case "--dir": dir = try value(a)
            case "--port":
                guard let p = UInt16(try value(a)), p > 0 else { throw CLIError("--port needs a TCP port") }
                port = p
            case "--host": host = try value(a)
            case "--pcscd": privateDaemon = true
            case "--can": can = try value(a)
            case "--short-lengths": shortLengths = true
            case "--aa-hash":
                switch try value(a).lowercased() {
                case "sha1", "sha-1": rsaHash = .sha1
                case "sha256", "sha-256": rsaHash = .sha256
                default: throw CLIError("--aa-hash is sha1 or sha256")
                }
            case "--pace":
                let spec = try value(a)
                guard let info = PACEInfo(spec: spec) else { throw CLIError("--pace \(spec): not a PACE generic-mapping protocol with a standardized domain parameter ID (e.g. ECDH-GM-AES-128:12)") }
                pace.append(info)
            default:
                if a.hasPrefix("-") { throw CLIError("unknown option \(CLI.optionName(a)) (see idvd chip emulate --help)") }
                throw CLIError("unexpected argument '\(a)' (see idvd chip emulate --help)")
            }
            i += 1
        }
        guard let dir else { throw CLIError("--dir CHIPDIR is required") }
        let folder: ChipFolder
        do {
            folder = try ChipFolder(directory: dir, pace: pace.isEmpty ? nil : pace, can: can, rsaHash: rsaHash)
        } catch {
            throw CLIError("\(dir): \(error)")
        }
        guard folder.mrzKey != nil || folder.can != nil else { throw CLIError("\(dir): no DG1 (MRZ) and no CAN: nothing could open this chip") }
        let chip = VirtualChip(folder: folder, extendedLength: !shortLengths)
        var daemon: PCSCDaemon?
        if privateDaemon {
            do { daemon = try PCSCDaemon.start() } catch { throw CLIError("\(error)") }
            port = daemon!.port
            say("PCSCLITE_CSOCK_NAME=\(daemon!.socketPath)")
            say("reader: \(daemon!.readerName)")
        }
        let link = VPCDLink(chip: chip, host: host, port: port)
        do { try link.insert(timeout: 10) } catch {
            daemon?.stop()
            throw CLIError("\(error) (is pcscd running with the vpcd reader? try --pcscd)")
        }
        let offers = folder.securityInfos?.paceInfos.map { "\($0.protocol) parameters \($0.parameterId.map(String.init) ?? "-")" } ?? []
        say("chip: \(dir) — \(offers.isEmpty ? "BAC" : "PACE (" + offers.joined(separator: "; ") + ") and BAC")"
              + (folder.chipAuthenticationKey != nil ? ", CA" : "") + (folder.activeAuthenticationKey != nil ? ", AA" : ""))
        say("inserted into the vpcd reader at \(host):\(port); interrupt to stop")

        // Wait for SIGINT or SIGTERM, then remove the card and stop the daemon.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { stop.signal() }
            s.resume()
            return s
        }
        stop.wait()
        sources.forEach { $0.cancel() }
        link.remove()
        daemon?.stop()
        say("removed; \(chip.commandCount) commands served")
        return 0
    }
}
