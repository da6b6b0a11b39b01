import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVStoreSQLite
import IDVTools
import Imaging

extension Benchmark {
    /// `idvd bench server --heavy [--uploaders 4] [--frames 16] [--seconds 10] [--light 2] [--server PATH]`:
    /// the scenario "heavy uploads beside light traffic" (issue #21). Starts `idvd serve` (its
    /// defaults, light Argon2id) on loopback, measures `POST /v1/sessions` from `--light` keep-alive
    /// connections while idle, then again while `--uploaders` clients each upload maximum-cost
    /// selfies in a loop — `--frames` flat 2000×2000 PNG frames (4 MP each, the per-frame limit;
    /// 16 = 64 MP, the default `analysis.max_request_megapixels`) to the opt-in flow's
    /// `uploadIDVSelfieFrames`, waiting `Retry-After` (at most 1 s) when refused. Prints session
    /// creation's idle p50/p99 and its p50/p99 during the heavy work, the uploads answered and
    /// refused (1100/1101/1102), and the server's analysis metrics. Needs the dlib models.
    static func heavyBeside(light opts: [String: String]) throws -> Int32 {
        let seconds = Double(opts["seconds"] ?? "10") ?? 10
        let uploaders = Int(opts["uploaders"] ?? "4") ?? 4
        let frameCount = Int(opts["frames"] ?? "16") ?? 16
        let lightConnections = Int(opts["light"] ?? "2") ?? 2

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-bench-heavy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("bench.sqlite").path
        let settings = ["log.requests": "false", "argon2.opslimit": "1", "argon2.memlimit_kib": "8", "password.attempts": "1000000",
                        "documents.warm_up": "false",
                        // The abuse limits (docs/LIMITS.md) off: thousands of sessions from one address are the load here.
                        "limits.sessions_per_client": "0", "limits.sessions_per_device": "0", "limits.devices_per_client": "0",
                        // The key file in the bench's own folder (removed with it), not in ~/.local/state.
                        "templates.key_file": dir.appendingPathComponent("templates.key").path]
        let config = try ServerConfig.load(file: nil, overrides: settings.merging(["db.path": db]) { a, _ in a })
        let (server, port, codes) = try Self.startBenchServer(db: db, config: config, settings: settings,
                                                              users: (0..<uploaders).map { "heavy\($0)" }, executable: opts["server"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let password = "bench password 1"
        for (id, code) in codes {
            guard try Self.loginSteps(LoopbackHTTPClient(port: port), user: id,
                                      answers: [["activation_code": .string(code)], ["password": .string(password)]]).ok else {
                throw CLIError("activation of \(id) failed")
            }
        }

        let frame = try Image(gray: [UInt8](repeating: 118, count: 2000 * 2000), width: 2000, height: 2000).pngData()
        let frames = [Data](repeating: frame, count: frameCount)
        print("idvd bench server --heavy — loopback\(opts["server"].map { " (\($0))" } ?? ""), server defaults (analysis.threads, queue, http.workers), light Argon2id")
        print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; \(uploaders) uploaders × \(frameCount) flat 2000×2000 PNG frames "
              + "(\(frameCount * 4) MP, \(frame.count) bytes each frame); light: POST /v1/sessions on \(lightConnections) connections")

        let createSession: @Sendable (LoopbackHTTPClient) throws -> Bool = { c in
            try c.json("POST", "/v1/sessions", Data("{}".utf8)).status == 201
        }
        let idle = Self.drive(connections: lightConnections, seconds: seconds, port: port, pauseMicroseconds: 2_000, createSession)
        Self.report("POST /v1/sessions idle", idle, seconds: seconds, unit: "req")

        final class Tally: @unchecked Sendable {   // @unchecked: every field only under `lock`
            let lock = NSLock()
            var answered: [Double] = [], refused: [Int: Int] = [:], failed = 0
            var stop = false
        }
        let tally = Tally()
        let uploading = DispatchGroup()
        for (id, _) in codes {
            uploading.enter()
            Thread {
                defer { uploading.leave() }
                let c = LoopbackHTTPClient(port: port)
                let dec = JSONDecoder(), enc = JSONEncoder()
                var token: String?
                var challenge: WireChallenge?
                func post(_ path: String, _ payload: JSONValue) throws -> (Int, WireEnvelope) {
                    guard let ch = challenge else { throw CLIError("no challenge") }
                    let r = try c.json("POST", path, enc.encode(WireAnswer(to: ch, payload: payload)), bearer: token)
                    return (r.status, try dec.decode(WireEnvelope.self, from: r.body))
                }
                while !tally.lock.withLock({ tally.stop }) {
                    do {
                        if challenge?.name != WireName.uploadIDVSelfieFrames {
                            // Log in (once) and start the opt-in flow up to its selfie upload.
                            if token == nil {
                                var env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/sessions", Data("{}".utf8)).body)
                                token = env.session?.token
                                challenge = env.challenge
                                env = try post("/v1/session/answer", ["user_id": .string(id)]).1
                                challenge = env.challenge
                                env = try post("/v1/session/answer", ["password": .string(password)]).1
                                guard env.event?.name == WireName.onUserLoggedIn else { throw CLIError("login of \(id) failed") }
                                if let rotated = env.session?.token { token = rotated }   // the token is rotated at login
                            }
                            let started = try c.json("POST", "/v1/flows/idv.postlogin.optin", enc.encode(WireFlowStart(payload: .emptyObject)), bearer: token)
                            challenge = try dec.decode(WireEnvelope.self, from: started.body).challenge
                            challenge = try post("/v1/session/answer", ["password": .string(password)]).1.challenge
                            challenge = try post("/v1/session/answer", ["is_confirm": true, "use_back_camera": false]).1.challenge
                            guard challenge?.name == WireName.uploadIDVSelfieFrames else { throw CLIError("no selfie upload for \(id)") }
                        }
                        let t0 = DispatchTime.now().uptimeNanoseconds
                        let r = try c.json("POST", "/v1/session/upload",
                                           enc.encode(WireAnswer(to: challenge!, payload: ["frames": .array(frames.map { .string($0.base64EncodedString()) })])),
                                           bearer: token)
                        let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
                        let env = try dec.decode(WireEnvelope.self, from: r.body)
                        if let e = env.error, env.isRefusal {
                            tally.lock.withLock { tally.refused[e.longErrorCode, default: 0] += 1 }
                            let wait = min(1.0, Double(r.headers["retry-after"] ?? "1") ?? 1)
                            usleep(UInt32(wait * 1e6))
                        } else {
                            tally.lock.withLock { tally.answered.append(ms) }
                            challenge = env.challenge   // asked again (no face), or the flow ended
                        }
                    } catch {
                        tally.lock.withLock { tally.failed += 1 }
                        challenge = nil
                        usleep(100_000)
                    }
                }
            }.start()
        }
        usleep(1_000_000)   // the uploaders are logged in and uploading
        let during = Self.drive(connections: lightConnections, seconds: seconds, port: port, pauseMicroseconds: 2_000, createSession)
        tally.lock.withLock { tally.stop = true }
        let metrics = (try? LoopbackHTTPClient(port: port).request("GET", "/metrics")).map { String(decoding: $0.body, as: UTF8.self) } ?? ""
        uploading.wait()
        Self.report("POST /v1/sessions during the uploads", during, seconds: seconds, unit: "req")
        let ratio = Self.percentile(during.latencies, 0.99) / max(1e-9, Self.percentile(idle.latencies, 0.99))
        print("  p99 during / p99 idle: " + String(format: "%.1f", ratio) + "×")
        let (answered, refused, failed) = tally.lock.withLock { (tally.answered, tally.refused, tally.failed) }
        print("uploads analysed and answered: \(answered.count) (p50 " + String(format: "%.0f", Self.percentile(answered, 0.5))
              + " ms, p99 " + String(format: "%.0f", Self.percentile(answered, 0.99)) + " ms); refused: "
              + (refused.isEmpty ? "none" : refused.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", "))
              + "; client errors: \(failed)")
        let keep = metrics.split(separator: "\n").filter {
            !$0.hasPrefix("#") && ($0.hasPrefix("idvd_analysis_refusals_total") || $0.hasPrefix("idvd_analysis_wait_seconds_max")
                || $0.hasPrefix("idvd_analysis_wait_seconds_count") || $0.hasPrefix("idvd_analysis_wait_seconds_sum")
                || $0.hasPrefix("idvd_analysis_threads") || $0.hasPrefix("idvd_analysis_queue_limit"))
        }
        if !keep.isEmpty { print("server: " + keep.joined(separator: "; ")) }
        return 0
    }

    /// The `p` quantile of `values` (NaN when empty).
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let s = values.sorted()
        return s.isEmpty ? .nan : s[min(s.count - 1, Int(Double(s.count) * p))]
    }
}
