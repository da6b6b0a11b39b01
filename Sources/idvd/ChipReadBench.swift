import ChipAccess
import ChipAccessOpenSSL
import ChipAccessPCSC
import EMRTDCore
import Foundation
import VirtualEMRTD

extension Benchmark {
    static let chipRead = Benchmark(name: "chip-read", summary: "reading a chip through pcscd + vpcd: BAC vs PACE, DG2 sizes, per-APDU cost (--help)",
                                    hasUsage: true) { args in
        let usage = """
        usage: idvd bench chip-read [--iterations N] [--sizes KB,KB,…] [--quick]
          Reads a virtual eMRTD (VirtualEMRTD, in this process) through the real PC/SC stack — a private pcscd
          (Debian pcscd with vsmartcard-vpcd) and pcsc-lite's client — with the client library (ChipAccess): access
          control, EF.COM, DG14, Chip Authentication, EF.SOD, DG1, DG2, DG15 and Active Authentication (RSA-2048,
          ISO/IEC 9796-2). For each configuration — BAC; PACE ECDH-GM-AES-128 on P-256; PACE ECDH-GM-AES-256 on
          brainpoolP384r1; PACE DH-GM-AES-128 on the 2048-bit MODP group; each with extended lengths (4096-octet reads)
          and the PACE P-256 one also with short lengths (223-octet reads, 61xx chaining) — and each DG2 size (default
          20, 40 and 60 KB), prints the whole read's median and 95th percentile, the APDUs it took, and the median of
          each step; then the per-APDU cost: a plain SELECT (no secure messaging) and protected READ BINARY of 223 and
          4096 octets. Times in milliseconds; N reads each (default 10). --quick: one size (40 KB), 3 reads.
        """
        let (o, _) = try CLI.parseOptions(args, flags: ["help", "h", "quick"], valued: ["iterations", "sizes"], takesArguments: false, command: "bench chip-read")
        if o["help"] != nil || o["h"] != nil { print(usage); return 0 }
        let quick = o["quick"] != nil
        guard let n = Int(o["iterations"] ?? (quick ? "3" : "10")), n >= 1, n <= 1000 else { throw CLIError("--iterations must be 1…1000") }
        let sizes = try (o["sizes"] ?? (quick ? "40" : "20,40,60")).split(separator: ",").map { s -> Int in
            guard let k = Int(s), k >= 2, k <= 500 else { throw CLIError("--sizes lists DG2 sizes in KB, 2…500") }
            return k * 1000
        }

        let daemon: PCSCDaemon
        do { daemon = try PCSCDaemon.start() } catch { throw CLIError("\(error)") }
        defer { daemon.stop() }
        try daemon.useInThisProcess()
        let work = daemon.directory + "/chips"
        let crypto = OpenSSLChipCryptography()
        let challenge = Bytes.hex("0011223344556677")

        struct Config { let name: String; let pace: PACEInfo?; let extended: Bool }
        let configs = [
            Config(name: "BAC (3DES)", pace: nil, extended: true),
            Config(name: "PACE ECDH-GM-AES-128 P-256", pace: PACEInfo(spec: "ECDH-GM-AES-128:12"), extended: true),
            Config(name: "PACE ECDH-GM-AES-128 P-256 short", pace: PACEInfo(spec: "ECDH-GM-AES-128:12"), extended: false),
            Config(name: "PACE ECDH-GM-AES-256 bp384r1", pace: PACEInfo(spec: "ECDH-GM-AES-256:16"), extended: true),
            Config(name: "PACE DH-GM-AES-128 2048-bit", pace: PACEInfo(spec: "DH-GM-AES-128:2"), extended: true),
        ]
        print("idvd bench chip-read — \(n) reads each, through \(daemon.readerName) (pcscd + vsmartcard-vpcd), \(OpenSSLChipCryptography.version)")
        print("configuration".padding(toLength: 36, withPad: " ", startingAt: 0) + "DG2 KB  APDUs   median      p95   access   CA     DG2    AA")
        func ms(_ s: Double) -> String { String(format: "%8.1f", s * 1000) }
        var perAPDU: (plain: [Double], short: [Double], long: [Double]) = ([], [], [])

        for size in sizes {
            var chip = TestChip()
            chip.portraitBytes = size
            chip.pace = []
            let dir = work + "/dg2-\(size)"
            let written = try chip.write(to: dir)
            let key = AccessKey.mrz(try MRZKey(mrzLines: written.mrzLines))
            for config in configs {
                let folder = try ChipFolder(directory: dir, pace: config.pace.map { [$0] })
                let virtual = VirtualChip(folder: folder, extendedLength: config.extended)
                let link = VPCDLink(chip: virtual, port: daemon.port)
                try link.insert()
                defer { link.remove(); _ = try? PCSCContext().waitForRemoval(from: daemon.readerName, timeout: 10) }
                _ = try PCSCContext().waitForCard(in: daemon.readerName, timeout: 10)
                var totals: [Double] = [], apdus = 0
                var stepTimes: [String: [Double]] = [:]
                for _ in 0..<n {
                    let transport = try PCSCContext().connect(to: daemon.readerName)
                    defer { transport.close() }
                    let reader = EMRTDReader(transport: transport, crypto: crypto)
                    let t = try Command.measure {
                        let r = try reader.read(key, options: ChipReadOptions(activeAuthenticationChallenge: challenge))
                        guard r.dataGroups[2]?.count == folder.files[.dataGroup(2)]?.count, case .signed = r.activeAuthentication else {
                            throw CLIError("the read did not bring DG2 and an AA signature back")
                        }
                        apdus = r.commandCount
                        for s in r.steps { stepTimes[s.name, default: []].append(s.seconds) }
                    }
                    totals.append(t)
                }
                totals.sort()
                func median(_ name: String) -> String {
                    guard let v = stepTimes[name]?.sorted(), !v.isEmpty else { return "       -" }
                    return ms(v[v.count / 2])
                }
                print(config.name.padding(toLength: 36, withPad: " ", startingAt: 0) + String(format: "%6d %6d", size / 1000, apdus)
                      + ms(totals[totals.count / 2]) + " " + ms(totals[min(totals.count - 1, Int(Double(totals.count) * 0.95))])
                      + median("access control") + median("chip authentication") + median("DG2") + median("active authentication"))

                // Per-APDU cost, once per size on the PACE P-256 chip: plain SELECTs before access control, then
                // protected READ BINARY of 223 and 4096 octets.
                if config.pace?.parameterId == 12 {
                    let transport = try PCSCContext().connect(to: daemon.readerName)
                    defer { transport.close() }
                    let reader = EMRTDReader(transport: transport, crypto: crypto)
                    for _ in 0..<max(20, n * 5) {
                        perAPDU.plain.append(try Command.measure { _ = try reader.channel.send(CommandAPDU(ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1C])) })
                    }
                    try reader.establishAccess(key)
                    _ = try reader.channel.send(CommandAPDU(ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x02]))
                    let length = config.extended ? 4096 : 223
                    for i in 0..<max(20, n * 5) {
                        let offset = (i * 223) % 20_000
                        let t = try Command.measure {
                            _ = try reader.channel.send(CommandAPDU(ins: 0xB0, p1: UInt8(offset >> 8), p2: UInt8(offset & 0xFF), ne: length))
                        }
                        if config.extended { perAPDU.long.append(t) } else { perAPDU.short.append(t) }
                    }
                }
            }
        }
        func median(_ v: [Double]) -> String { v.isEmpty ? "-" : String(format: "%.2f ms", v.sorted()[v.count / 2] * 1000) }
        print("per APDU (median): plain SELECT \(median(perAPDU.plain)); protected READ BINARY 223 octets \(median(perAPDU.short)), 4096 octets \(median(perAPDU.long))")
        return 0
    }
}
