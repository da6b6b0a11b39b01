import Foundation

/// One benchmark of `idvd bench <name>`. Benchmarks print figures; they never assert a time.
/// Each lives beside its area's command file and is listed once in `benchmarks` below.
struct Benchmark: Sendable {
    let name: String
    let summary: String
    /// Whether `run(["--help"])` prints the benchmark's own usage (and runs nothing); otherwise
    /// `idvd bench NAME --help` prints the name and summary.
    var hasUsage = false
    /// For a benchmark without its own usage: the options `idvd bench NAME --help` lists after
    /// the name (every option its parse accepts), e.g. `[--iterations N]`; a second usage line may
    /// follow after a newline.
    var options = ""
    let run: @Sendable ([String]) throws -> Int32
}

/// Every benchmark. Add one by writing an `extension Benchmark { static let x = … }` and listing it here.
let benchmarks: [Benchmark] = [
    .payload,
    .server,
    .mrz,
    .face,
    .workflow,
    .document,
    .liveness,
    .presence,
    .ocrb,
    .nodes,
    .audit,
    .chip,
    .chipRead,
    .webhooks,
]

extension Command {
    static let bench = Command(name: "bench", summary: "run a benchmark and print its figures (idvd bench --list)") { args in
        guard let name = args.first, !["-h", "--help"].contains(name) else {
            var s = "usage: idvd bench <name> [options]   (release build recommended)\n\nbenchmarks:\n"
            for b in benchmarks { s += "  " + b.name.padding(toLength: 10, withPad: " ", startingAt: 0) + b.summary + "\n" }
            print(s)
            return args.isEmpty ? 2 : 0
        }
        if name == "--list" {
            benchmarks.forEach { print($0.name) }
            return benchmarks.isEmpty ? 1 : 0
        }
        try CLI.refuseOptionForSubcommand(name, command: "bench")
        guard let b = benchmarks.first(where: { $0.name == name }) else {
            throw CLIError("unknown benchmark '\(name)'; known: \(benchmarks.map(\.name).joined(separator: ", "))")
        }
        let rest = Array(args.dropFirst())
        if rest.contains(where: { $0 == "--help" || $0 == "-h" }) {
            if b.hasUsage { return try b.run(["--help"]) }
            let lines = b.options.split(separator: "\n").map { "idvd bench \(b.name) " + $0 }
            print("usage: " + (lines.isEmpty ? ["idvd bench \(b.name)"] : lines).joined(separator: "\n       ")
                  + "\n  (release build recommended)\n\n  \(b.summary)")
            return 0
        }
        return try b.run(rest)
    }

    /// Wall-clock seconds of a closure, for benchmarks.
    static func measure(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// A child process's cost, measured by `Command.measureProcess`.
struct ProcessCost {
    /// Wall-clock seconds from `posix_spawn` to the child's exit (process start included).
    var seconds: Double
    /// The child's peak resident set size, bytes (`wait4`'s `ru_maxrss`).
    var maxRSSBytes: Int
    var exitStatus: Int32
    /// The child's CPU time, seconds (`wait4`'s `ru_utime` and `ru_stime`).
    var userSeconds = 0.0
    var systemSeconds = 0.0
}

extension Command {
    /// Runs `executable` with `arguments` (stdout and stderr to /dev/null) and measures it from spawn
    /// to exit: wall time and the child's own peak RSS (`wait4`, so other children do not count).
    static func measureProcess(_ executable: String, _ arguments: [String]) throws -> ProcessCost {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard rc == 0 else { throw CLIError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw CLIError("wait4 failed: \(String(cString: strerror(errno)))") }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let exited = (status & 0x7f) == 0
        func cpu(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return ProcessCost(seconds: seconds, maxRSSBytes: Int(usage.ru_maxrss) * 1024, exitStatus: exited ? (status >> 8) & 0xff : -1,
                           userSeconds: cpu(usage.ru_utime), systemSeconds: cpu(usage.ru_stime))
    }

    /// Seconds since this process started (the kernel's start time in /proc/self/stat, 10 ms ticks,
    /// against CLOCK_BOOTTIME); NaN when /proc cannot be read.
    static func secondsSinceProcessStart() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return .nan }
        // Fields after the command name (which may hold spaces): state is field 3, starttime field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return .nan }
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// This process's own executable (for benchmarks that time a fresh `idvd` process).
    static var selfExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
