import Foundation

/// One benchmark of `idvd bench <name>`. Benchmarks print figures; they never assert a time.
/// Each lives beside its area's command file and is listed once in `benchmarks` below.
struct Benchmark: Sendable {
    let name: String
    let summary: String
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
    .ocrb,
    .nodes,
    .audit,
    .chip,
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
        guard let b = benchmarks.first(where: { $0.name == name }) else {
            throw CLIError("unknown benchmark '\(name)'; known: \(benchmarks.map(\.name).joined(separator: ", "))")
        }
        return try b.run(Array(args.dropFirst()))
    }

    /// Wall-clock seconds of a closure, for benchmarks.
    static func measure(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
