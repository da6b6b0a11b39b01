import FaceKit
import Foundation
import Synchronization
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVReaders
import IDVStoreSQLite
import IDVWebhooks

extension Command {
    static let serve = Command(name: "serve", summary: "run the idvd HTTP server (idvd serve --help lists every setting)") { args in
        if args.contains("--help") || args.contains("-h") {
            print("""
            usage: idvd serve [--config FILE] [--port N] [--db PATH|URL] [--set KEY=VALUE]...

            Runs the server until SIGTERM/SIGINT (then in-flight requests finish and the store closes).
            Arguments and settings are checked before the store is opened; a SQLite file this start
            created is removed again when the server then cannot listen (port in use, bad TLS material).
            Prints one ready line on stdout: {"event":"listening","port":N,...}. Logs JSON lines on stderr.

            Settings, lowest precedence first: defaults < --config FILE (flat JSON object of the keys
            below) < environment variables < command-line options.

              key                         environment variable              meaning
            \(ServerConfig.helpTable)
            Options: --config FILE (or IDVD_CONFIG), --port N (= listen.port), --db PATH|URL (= db.path),
            --set key=value (any setting). Argon2id production default: opslimit 3, memlimit 65536 KiB.

            Store: a SQLite file (default), or a PostgreSQL URL, e.g. postgresql://idvd@db.internal:5432/idvd,
            shared by any number of idvd nodes (README "Several nodes on PostgreSQL"). With PostgreSQL set
            templates.key_file (the same key file on every node); the password goes in IDVD_DB_PASSWORD,
            db.password_file (mode 0600) or PGPASSWORD, never on the command line.
            """)
            return 0
        }
        let (rest, settings) = try splitSettings(args)
        var overrides = settings
        let (opts, positional) = try CLI.parseOptions(rest, valued: ["port", "db", "config"], command: "serve")
        guard positional.isEmpty else { throw CLIError("unexpected argument '\(positional[0])'") }
        if let p = opts["port"] { overrides["listen.port"] = p }
        if let d = opts["db"] { overrides["db.path"] = d }
        try StoreOpening.refusePasswordOnCommandLine(overrides["db.path"])
        let file = opts["config"] ?? ProcessInfo.processInfo.environment["IDVD_CONFIG"]
        let config: ServerConfig
        do { config = try ServerConfig.load(file: file, overrides: overrides) } catch { throw CLIError("\(error)") }
        // The composition root: the store (SQLite or PostgreSQL), libsodium, the production readers,
        // the engine and HTTP. The store first: a node that cannot reach its database fails at once.
        // A SQLite file this run creates is removed again when the server then fails to start (port
        // in use, bad TLS material, …) before it listened: a failed start leaves no empty database.
        var newFile: String?
        if case let .sqlite(path) = config.database, !FileManager.default.fileExists(atPath: path) { newFile = path }
        let opened = try StoreOpening.open(config, mustExist: false, command: "serve")
        StoreOpening.logOpened(opened, config: config)
        let store = opened.store
        let listened = Flag()
        do {
            return try serve(config: config, store: store, listened: listened)
        } catch {
            if let newFile, !listened.value {
                store.close()
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: newFile + suffix) }
                Log.event("removed the new database file of this failed start", level: "warning", ["path": .string(newFile)])
            }
            throw error
        }
    }

    /// Set once, read after: whether `idvd serve` got as far as listening.
    final class Flag: Sendable {
        private let raised = Atomic<Bool>(false)
        var value: Bool { raised.load(ordering: .acquiring) }
        func raise() { raised.store(true, ordering: .releasing) }
    }

    /// `idvd serve` from the opened store on: readers, engine, HTTP, until SIGTERM/SIGINT.
    static func serve(config: ServerConfig, store: any EngineStore, listened: Flag) throws -> Int32 {
        if config.documentsWarmUp { DocumentReaderAdapter.warmUp() }
        // One warning per setting that is not for production (ServerConfig.nonProductionWarnings).
        for warning in config.nonProductionWarnings {
            Log.event("non-production setting: " + warning, level: "warning")
        }
        let registry: FlowRegistry
        do { registry = FlowRegistry.idv(IDVServices.production(vault: try config.openVault(), policy: config.engine.workflow)) } catch { store.close(); throw error }
        // The webhook outbox's delivery worker (docs/WEBHOOKS.md), on every node unless webhooks.deliver is off.
        let vault = registry.services?.vault
        return try ServerRunner.run(config: config, store: store, registry: registry, crypto: Sodium(),
                                    readinessChecks: readinessChecks(config: config, registry: registry)) { app in
            listened.raise()
            guard config.webhooks.deliver, let vault else { return {} }
            let deliverer = WebhookDeliverer(store: store, vault: vault, settings: config.webhooks, metrics: app.metrics)
            deliverer.start()
            return { deliverer.stop() }
        }
    }

    /// `/readyz`'s checks of what `idvd serve` loads (beside the database, schema and analysis pool):
    /// `face_models` — the dlib model files were found and the selfie analyser built (without them the
    /// selfie flows are not offered: a node that cannot run them is not ready); `document_reader` —
    /// the OCR-B parameters are loaded (`documents.warm_up`; with it off they load at the first upload).
    static func readinessChecks(config: ServerConfig, registry: FlowRegistry) -> [ReadinessCheck] {
        let selfiesReady = registry.services?.selfies != nil
        let missing = FaceEngine.missingModels().map(\.rawValue)
        let warmUp = config.documentsWarmUp
        return [
            ReadinessCheck(name: "face_models") {
                selfiesReady ? nil : (missing.isEmpty ? "selfie_analyser_unavailable" : "missing: " + missing.joined(separator: ", "))
            },
            ReadinessCheck(name: "document_reader") { !warmUp || DocumentReaderAdapter.isWarm ? nil : "loading" },
        ]
    }

    /// Removes every `--set key=value` (repeatable) from `args`; returns the rest and the settings.
    static func splitSettings(_ args: [String]) throws -> (rest: [String], settings: [String: String]) {
        var rest: [String] = []
        var settings: [String: String] = [:]
        var i = 0
        while i < args.count {
            var kv: Substring?
            if args[i] == "--set" {
                guard i + 1 < args.count else { throw CLIError("--set needs key=value") }
                kv = Substring(args[i + 1])
                i += 1
            } else if args[i].hasPrefix("--set=") {
                kv = args[i].dropFirst(6)
            }
            if let kv {
                guard let eq = kv.firstIndex(of: "=") else { throw CLIError("--set needs key=value, got '\(kv)'") }
                settings[String(kv[..<eq])] = String(kv[kv.index(after: eq)...])
            } else {
                rest.append(args[i])
            }
            i += 1
        }
        return (rest, settings)
    }

    static let openapi = Command(name: "openapi", summary: "print the OpenAPI 3 document of the HTTP API") { args in
        let usage = """
        usage: idvd openapi
          Prints the OpenAPI 3 document of the standard server's HTTP API (JSON; openapi.json in the checkout).
        """
        if try CLI.noArguments(args, usage: usage, command: "openapi") { return 0 }
        FileHandle.standardOutput.write(try standardOpenAPIDocument())
        FileHandle.standardOutput.write(Data("\n".utf8))
        return 0
    }

    /// The OpenAPI document of the standard server's routes (what `idvd openapi` prints): the route
    /// table of a server over an in-memory store.
    static func standardOpenAPIDocument() throws -> Data {
        let app = IDVServerApp(config: ServerConfig(), store: try SQLiteStore(path: ":memory:"), crypto: Sodium())
        return OpenAPI.document(routes: app.http.router.routes)
    }
}
