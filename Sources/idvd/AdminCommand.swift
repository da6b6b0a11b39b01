import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVStoreSQLite

extension Command {
    static let admin = Command(name: "admin", summary: "administer users, links, keys and the audit log (create-user, create-link, list-users, reset-user, audit, purge-expired, rekey)") { args in
        let usage = """
        usage: idvd admin <subcommand> [--db PATH | --config FILE] [--set key=value]...
          create-user <user_id> [--no-idv] [--workflow RAW]   create a user; prints its one-time activation code
          create-link <user_id> [--flow NAME] [--ttl S]       a single-use verification link to the hosted page (/verify/) for
                                                              the user and one flow (default: idv.activation when pending,
                                                              idv.postlogin.kyc when active); expires after S seconds
                                                              (default links.ttl_seconds); prints url (web.public_url), token once
          list-users                                          list users (no secrets)
          reset-user <user_id>                                back to pending activation: clears password and lock,
                                                              unbinds devices, revokes sessions, prints a new code
          audit [--limit N] [--verify]                        print the last N audit entries and verify the hash chain
                                                              (--verify: only the verdict; exit 1 when broken)
          purge-expired                                       delete expired/revoked sessions, closing their open flow
                                                              runs as "expired" (audited, sealed media dropped); prints counts
          rekey                                               key rotation: re-seal templates, scan reports, kept images and
                                                              session states under templates.key_file, opening them with
                                                              templates.previous_key_files; prints counts per table
        The store and settings are the server's (db.path from --db, --config FILE, IDVD_DB_PATH, or ./idvd.sqlite;
        activation.code_ttl_seconds and activation.code_attempts apply to the codes issued).
        Only create-user creates the database when it does not exist (the first user of a new install);
        every other subcommand refuses a missing database file (exit 2), so a mistyped --db is not
        mistaken for an empty store.
        """
        guard let sub = args.first, !["-h", "--help"].contains(sub) else { print(usage); return args.isEmpty ? 2 : 0 }
        let (rest, settings) = try splitSettings(Array(args.dropFirst()))
        var overrides = settings
        let (opts, pos) = try CLI.parseOptions(rest, flags: ["no-idv", "verify"])
        if let d = opts["db"] { overrides["db.path"] = d }
        let config: ServerConfig
        do {
            config = try ServerConfig.load(file: opts["config"] ?? ProcessInfo.processInfo.environment["IDVD_CONFIG"], overrides: overrides)
        } catch { throw CLIError("\(error)") }
        if sub != "create-user", !FileManager.default.fileExists(atPath: config.dbPath) {
            throw CLIError("no database at \(config.dbPath): `idvd admin \(sub)` does not create one "
                           + "(check --db / db.path; `idvd admin create-user` or `idvd serve` creates a new database)")
        }
        let store = try config.openStore()
        defer { store.close() }
        let admin = Admin(store: store, config: config, crypto: Sodium())
        do {
            switch sub {
            case "create-user":
                guard pos.count == 1 else { throw CLIError("create-user needs exactly one user id") }
                var wf = IDVWorkflow.activation
                if let w = opts["workflow"] {
                    guard let raw = Int(w), let v = IDVWorkflow(rawValue: raw) else { throw CLIError("--workflow must be a workflow raw value (0–5)") }
                    wf = v
                }
                try CLI.printJSON(admin.createUser(pos[0], activationRequiresIDV: opts["no-idv"] == nil, idvWorkflow: wf))
            case "create-link":
                guard pos.count == 1 else { throw CLIError("create-link needs exactly one user id") }
                var ttl: Int?
                if let t = opts["ttl"] {
                    guard let v = Int(t), v >= 1 else { throw CLIError("--ttl must be a positive number of seconds") }
                    ttl = v
                }
                try CLI.printJSON(admin.createLink(pos[0], flow: opts["flow"], ttlSeconds: ttl))
            case "list-users":
                try CLI.printJSON(admin.listUsers())
            case "reset-user":
                guard pos.count == 1 else { throw CLIError("reset-user needs exactly one user id") }
                try CLI.printJSON(admin.resetUser(pos[0]))
            case "purge-expired":
                let vault = try config.openVault()
                let engine = FlowEngine(store: store, config: config, registry: .idvMaintenance(vault: vault, policy: config.workflow), metrics: Metrics(),
                                        crypto: Sodium())
                try CLI.printJSON(engine.purgeExpired())
            case "rekey":
                try CLI.printJSON(admin.rekey(vault: config.openVault()))
            case "audit":
                let limit = Int(opts["limit"] ?? "50") ?? 50
                struct Out: Encodable { let entries: [AuditEntry]; let chain_valid: Bool; let first_invalid_seq: Int? }
                let bad = try store.verifyAuditChain()
                if opts["verify"] != nil {
                    struct Verdict: Encodable { let chain_valid: Bool; let first_invalid_seq: Int?; let entries_checked: Int }
                    try CLI.printJSON(Verdict(chain_valid: bad == nil, first_invalid_seq: bad, entries_checked: try store.auditEntryCount()))
                    return bad == nil ? 0 : 1
                }
                try CLI.printJSON(Out(entries: try store.auditEntries(limit: max(1, limit)), chain_valid: bad == nil, first_invalid_seq: bad))
                return bad == nil ? 0 : 1
            default:
                throw CLIError("unknown admin subcommand '\(sub)'\n\(usage)")
            }
        } catch let e as IDVError {
            throw CLIError("\(e.errorString) (\(e.longErrorCode))")
        }
        return 0
    }
}
