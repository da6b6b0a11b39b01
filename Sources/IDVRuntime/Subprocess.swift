import Foundation

/// Runs a program to completion and collects what it wrote: the one way `idvd` (ffmpeg decoding a
/// video) and the tests (the `idvd` binary) start a child process and read its output.
public enum Subprocess {
    /// What a finished program gave: its exit status (the signal's number when a signal ended it)
    /// and everything it wrote to standard output and standard error.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: Data
        public let stderr: Data
    }

    /// Runs `executable` with `arguments` in `directory` (nil: this process's working directory),
    /// with `environment` (nil: this process's), `stdin` written to its standard input (nil: none,
    /// the null device), and waits for it to end. Both output pipes are drained at once, so a
    /// program that fills one while the other is read cannot block.
    /// - Throws: what `Process.run()` throws when the program cannot be started.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           in directory: URL? = nil, stdin: Data? = nil) throws -> Result {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        if let environment { p.environment = environment }
        if let directory { p.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try p.run()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try? input.fileHandleForWriting.close()
        }
        final class Drained: @unchecked Sendable { var data = Data() }   // @unchecked: written by the reader thread before `group` is left, read after
        let errors = Drained()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errors.data = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: o, stderr: errors.data)
    }
}
