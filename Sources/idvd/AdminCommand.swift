import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders
import EMRTD
import IDVStoreSQLite

extension Command {
    static let admin = Command(name: "admin", summary: "administer users, links, keys, chip trust, relying-party clients, reviews, webhooks and the audit log (create-user, create-link, list-users, reset-user, unlock-user, erase-user, evidence-key, audit, purge-expired, retention, rekey, new-key, trust, where, rp-client, review, webhook)") { args in
        let usage = """
        usage: idvd admin <subcommand> [--db PATH|URL | --config FILE] [--set key=value]...
          create-user <user_id> [--no-idv] [--workflow RAW]   create a user; prints its one-time activation code
          create-link <user_id> [--flow NAME] [--ttl S]       a single-use verification link to the hosted page (/verify/) for
                                                              the user and one flow (default: idv.activation when pending,
                                                              idv.postlogin.kyc when active); expires after S seconds
                                                              (default links.ttl_seconds); prints url (web.public_url), token once
          list-users                                          list users (no secrets)
          reset-user <user_id>                                back to pending activation: clears password and lock,
                                                              unbinds devices, revokes sessions, prints a new code
          unlock-user <user_id>                               end a password lock now (docs/LIMITS.md): active again, wrong-
                                                              password count zeroed, the liveness-challenge budget full
                                                              again; password, devices and template kept
          evidence-key list|rotate                            the evidence-signing keys (Ed25519, sealed by the vault
                                                              key): list them as the JWKS, or make a new current key
                                                              (old keys stay published so their records verify)
          erase-user <user_id>                                erase everything about the user (docs/DATA-PROTECTION.md):
                                                              open flows ended, every row deleted in one transaction, the
                                                              audit kept pseudonymous, the file scrubbed; prints the receipt
          audit [--limit N] [--verify]                        print the last N audit entries and verify the hash chain
                                                              (--verify: only the verdict; exit 1 when broken)
          purge-expired                                       delete expired/revoked sessions, closing their open flow
                                                              runs as "expired" (audited, sealed media dropped), then rows
                                                              past their retention.* period; prints counts
          retention                                           per class of data: the setting bounding how long it is kept,
                                                              its value, rows and bytes stored now, rows past the period
          rekey                                               key rotation: re-seal templates, scan reports, kept images and
                                                              session states under templates.key_file, opening them with
                                                              templates.previous_key_files; prints counts per table
          new-key FILE                                        write a new random key file (mode 0600; never overwrites):
                                                              the templates.key_file every node on one PostgreSQL shares
          trust import FILE…                                  keep eMRTD chip trust material in the store (CSCA certificates,
                                                              CSCA master lists — their own signature is verified —, CRLs,
                                                              document signer certificates, ICAO PKD LDIF; DER or PEM); all
                                                              files are checked before any is kept; audited (docs/CHIP.md)
          trust list                                          the trust material kept (id, kind, counts, sha256)
          trust remove ID                                     forget one (audited); a running server uses the change at once
        \(RPAdminCommand.usage)
        \(WebhookAdminCommand.usage)
          where                                               where the database and its key file live (and how each was
                                                              chosen); says how to move a key that still sits beside the database
        The store and settings are the server's (db.path from --db, --config FILE, IDVD_DB / IDVD_DB_PATH, or
        ./idvd.sqlite; a postgresql:// URL works for every subcommand, with templates.key_file set and the
        password in IDVD_DB_PASSWORD, db.password_file or PGPASSWORD; activation.code_ttl_seconds and
        activation.code_attempts apply to the codes issued).
        Only create-user creates the database when it does not exist (the first user of a new install);
        every other subcommand refuses a missing database file, or a PostgreSQL database without the
        OpenIDV schema (exit 2), so a mistyped --db is not mistaken for an empty store.
        The key file (templates.key_file) lives apart from the database: by default a per-database file in
        IDVD_KEY_DIR, $XDG_STATE_HOME/openidv/keys or ~/.local/state/openidv/keys; a key file group or
        others can read is refused (chmod 600). An old <db.path>.key beside the database is still used,
        with a warning saying how to move it (see `idvd admin where`).
        create-link prints links for --port N (= listen.port) when web.public_url is not set.
        """
        guard let sub = args.first, !["-h", "--help"].contains(sub) else { print(usage); return args.isEmpty ? 2 : 0 }
        let subcommands = ["create-user", "create-link", "list-users", "reset-user", "unlock-user", "erase-user", "evidence-key", "audit", "purge-expired", "retention", "rekey", "new-key", "trust",
                           "where", "rp-client", "review", "webhook"]
        if args.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
            guard subcommands.contains(sub) else { throw CLIError("unknown admin subcommand '\(sub)'\n\(usage)") }
            // A group's subcommand (`webhook add --help`) gets its own lines when the usage has them.
            if let verb = args.dropFirst().first, !verb.hasPrefix("-"), let own = adminUsage(of: "\(sub) \(verb)", in: usage, ifFound: true) {
                print(own)
            } else {
                print(adminUsage(of: sub, in: usage) ?? usage)
            }
            return 0
        }
        try CLI.refuseOptionForSubcommand(sub, command: "admin")
        guard subcommands.contains(sub) else { throw CLIError("unknown admin subcommand '\(sub)'\n\(usage)") }
        let (rest, settings) = try splitSettings(Array(args.dropFirst()))
        var overrides = settings
        // A group's verb (rp-client create, webhook add, …): its first positional argument, found
        // leniently here only to choose which options are known.
        let verb = (try? CLI.parseOptions(rest, flags: adminFlags, valued: nil, command: ""))?.positional.first
        let known = adminOptions(sub: sub, verb: verb)
        let (opts, pos) = try CLI.parseOptions(rest, flags: known.flags, valued: known.valued.union(["db", "config"]),
                                               command: "admin \(sub)")
        try checkAdminArguments(sub, pos, opts)
        if sub == "new-key" {   // needs no store
            guard pos.count == 1 else { throw CLIError("new-key needs exactly one file name") }
            do {
                let vault = try TemplateVault.create(keyFile: pos[0])
                struct Out: Encodable { let key_file: String; let key_id: String }
                try CLI.printJSON(Out(key_file: pos[0], key_id: vault.keyID))
                return 0
            } catch let e as VaultError { throw CLIError("\(e)") }
        }
        if let d = opts["db"] { overrides["db.path"] = d }
        if let p = opts["port"] { overrides["listen.port"] = p }
        try StoreOpening.refusePasswordOnCommandLine(overrides["db.path"])
        let config: ServerConfig
        do {
            config = try ServerConfig.load(file: opts["config"] ?? ProcessInfo.processInfo.environment["IDVD_CONFIG"], overrides: overrides)
        } catch { throw CLIError("\(error)") }
        if sub == "where" {   // opens nothing: says where things are
            guard pos.isEmpty else { throw CLIError("where takes no arguments") }
            try CLI.printJSON(try Where(config))
            return 0
        }
        // Every subcommand of the switch below that opens the store (checked before opening it, so a
        // typo does not create or touch a database).
        guard ["create-user", "create-link", "list-users", "reset-user", "unlock-user", "erase-user", "evidence-key", "purge-expired", "retention", "rekey", "trust", "audit", "rp-client", "review", "webhook"].contains(sub) else {
            throw CLIError("unknown admin subcommand '\(sub)'\n\(usage)")
        }
        let store = try StoreOpening.open(config, mustExist: sub != "create-user", command: "admin \(sub)").store
        defer { store.close() }
        let admin = Admin(store: store, config: config, crypto: Sodium())
        do {
            switch sub {
            case "create-user":
                try CLI.printJSON(admin.createUser(pos[0], activationRequiresIDV: opts["no-idv"] == nil, idvWorkflow: try createUserWorkflow(opts)))
            case "create-link":
                try CLI.printJSON(admin.createLink(pos[0], flow: opts["flow"], ttlSeconds: try createLinkTTL(opts)))
            case "list-users":
                try CLI.printJSON(admin.listUsers())
            case "reset-user":
                try CLI.printJSON(admin.resetUser(pos[0]))
            case "unlock-user":
                try CLI.printJSON(admin.unlockUser(pos[0]))
            case "erase-user":
                try CLI.printJSON(maintenanceEngine(store: store, config: config).eraseUser(pos[0], by: "admin"))
            case "evidence-key":
                guard pos.count == 1, ["list", "rotate"].contains(pos[0]) else { throw CLIError("evidence-key needs list or rotate") }
                let signer = EvidenceSigner(store: store, vault: try config.openVault(), crypto: Sodium())
                if pos[0] == "rotate" { try signer.rotate(now: Int(Date().timeIntervalSince1970)) }
                try CLI.printJSON(signer.jwks())
            case "purge-expired":
                try CLI.printJSON(maintenanceEngine(store: store, config: config).purgeExpired())
            case "retention":
                try CLI.printJSON(RetentionCommand.report(store: store, config: config, now: Int(Date().timeIntervalSince1970)))
            case "rekey":
                try CLI.printJSON(admin.rekey(vault: config.openVault()))
            case "trust":
                return try TrustCommand.run(pos, admin: admin)
            case "rp-client":
                return try RPAdminCommand.rpClient(pos, opts, admin: admin)
            case "review":
                return try RPAdminCommand.review(pos, opts, engine: maintenanceEngine(store: store, config: config), config: config)
            case "webhook":
                return try WebhookAdminCommand.run(pos, opts: opts, admin: admin, config: config)
            case "audit":
                let limit = try auditLimit(opts["limit"])
                struct Out: Encodable { let entries: [AuditEntry]; let chain_valid: Bool; let first_invalid_seq: Int? }
                let bad = try store.verifyAuditChain()
                if opts["verify"] != nil {
                    struct Verdict: Encodable { let chain_valid: Bool; let first_invalid_seq: Int?; let entries_checked: Int }
                    try CLI.printJSON(Verdict(chain_valid: bad == nil, first_invalid_seq: bad, entries_checked: try store.auditEntryCount()))
                    return bad == nil ? 0 : 1
                }
                try CLI.printJSON(Out(entries: try store.auditEntries(limit: limit), chain_valid: bad == nil, first_invalid_seq: bad))
                return bad == nil ? 0 : 1
            default:
                throw CLIError("unknown admin subcommand '\(sub)'\n\(usage)")
            }
        } catch let e as IDVError {
            throw CLIError("\(e.errorString) (\(e.longErrorCode))")
        }
        return 0
    }

    /// An engine for maintenance commands (`purge-expired`, `review`): every IDV flow registered
    /// whether or not this machine has its readers (closing a run needs no reader).
    static func maintenanceEngine(store: any EngineStore, config: ServerConfig) throws -> FlowEngine {
        FlowEngine(store: store, settings: config.engine, registry: .idvMaintenance(vault: try config.openVault()), metrics: Metrics(),
                   admission: AnalysisLimiter(settings: config.analysis), crypto: Sodium())
    }
}

/// What `idvd admin` checks before it opens a store: the options each subcommand takes, and its
/// arguments, so a typo neither creates nor touches a database.
extension Command {
    /// Every flag (option without a value) of any admin subcommand.
    static let adminFlags: Set<String> = ["no-idv", "verify", "images"]

    /// The options `admin SUB` (a group's `SUB VERB`) takes besides --db, --config and --set.
    static func adminOptions(sub: String, verb: String?) -> (valued: Set<String>, flags: Set<String>) {
        let table: [String: (valued: Set<String>, flags: Set<String>)] = [
            "create-user": (["workflow"], ["no-idv"]), "create-link": (["flow", "ttl", "port"], []), "audit": (["limit"], ["verify"]),
            "rp-client create": (["name", "scope"], []),
            "review list": (["state"], []), "review show": ([], ["images"]), "review decide": (["decision", "reason"], []),
            "webhook add": (["url", "events"], []), "webhook rotate-secret": (["overlap"], []),
            "webhook deliveries": (["limit", "state", "event"], []),
        ]
        if let verb, let own = table["\(sub) \(verb)"] { return own }
        if let own = table[sub] { return own }
        return ([], [])
    }

    /// The positional arguments and option values of `admin SUB`, checked before any store is opened.
    static func checkAdminArguments(_ sub: String, _ pos: [String], _ opts: [String: String]) throws {
        switch sub {
        case "create-user":
            guard pos.count == 1 else { throw CLIError("create-user needs exactly one user id") }
            try checkUserID(pos[0])
            _ = try createUserWorkflow(opts)
        case "create-link":
            guard pos.count == 1 else { throw CLIError("create-link needs exactly one user id") }
            _ = try createLinkTTL(opts)
        case "reset-user", "unlock-user", "erase-user":
            guard pos.count == 1 else { throw CLIError("\(sub) needs exactly one user id") }
        case "list-users", "purge-expired", "retention", "rekey", "audit", "where":
            guard pos.isEmpty else { throw CLIError("\(sub) takes no arguments (unexpected '\(pos[0])')") }
            if sub == "audit" { _ = try auditLimit(opts["limit"]) }
        case "new-key":
            guard pos.count == 1 else { throw CLIError("new-key needs exactly one file name") }
        default:   // trust, rp-client, review, webhook check their verbs and arguments themselves
            break
        }
    }

    /// A user id as `Admin` accepts one (the same rule and words as its refusal).
    static func checkUserID(_ id: String) throws {
        guard Admin.validUserID(id) else { throw CLIError("user id must be 1–128 characters of letters, digits and . _ - @") }
    }

    /// `admin create-user --workflow RAW` (default: activation): a pre-login workflow.
    static func createUserWorkflow(_ opts: [String: String]) throws -> IDVWorkflow {
        guard let w = opts["workflow"] else { return .activation }
        guard let raw = Int(w), let v = IDVWorkflow(rawValue: raw), v.isPreLogin else {
            throw CLIError("--workflow must be a pre-login workflow raw value (0–5; see idvd codes)")
        }
        return v
    }

    /// `admin create-link --ttl S` (nil: links.ttl_seconds).
    static func createLinkTTL(_ opts: [String: String]) throws -> Int? {
        guard let t = opts["ttl"] else { return nil }
        guard let v = Int(t), v >= 1 else { throw CLIError("--ttl must be a positive number of seconds") }
        return v
    }

    /// `admin audit --limit N`: a positive integer (default 50).
    static func auditLimit(_ value: String?) throws -> Int {
        guard let value else { return 50 }
        guard let n = Int(value), n >= 1 else { throw CLIError("--limit must be a positive integer (the number of entries), got '\(value)'") }
        return n
    }
}

/// `idvd admin trust import|list|remove`.
enum TrustCommand {
    static func run(_ pos: [String], admin: Admin) throws -> Int32 {
        guard let verb = pos.first else { throw CLIError("trust needs import FILE…, list or remove ID") }
        switch verb {
        case "list":
            guard pos.count == 1 else { throw CLIError("trust list takes no arguments") }
            try CLI.printJSON(admin.listTrust())
        case "remove":
            guard pos.count == 2 else { throw CLIError("trust remove needs exactly one id (see trust list)") }
            try CLI.printJSON(admin.removeTrust(pos[1]))
        case "import":
            let paths = Array(pos.dropFirst())
            guard !paths.isEmpty else { throw CLIError("trust import needs at least one file") }
            try CLI.printJSON(importFiles(paths, admin: admin))
        default:
            throw CLIError("unknown trust subcommand '\(verb)' (import FILE…, list, remove ID)")
        }
        return 0
    }

    /// Reads and checks every file (EMRTD `TrustMaterial`: certificates and CRLs first, then master
    /// lists against what is trusted so far and in the store), then keeps them all; refuses them all
    /// (exit 2, nothing kept) when one is unreadable or fails its own checks.
    static func importFiles(_ paths: [String], admin: Admin) throws -> [Admin.TrustRow] {
        var trust = EMRTDChipVerifier().trust(try admin.trustStoreRecords())
        var read: [(String, [UInt8])] = []
        for p in paths {
            do { read.append((p, try ChipFiles.readFile(p, limit: ChipFiles.trustFileLimit))) } catch {
                throw CLIError("\(p): \(error)")
            }
        }
        let simple: Set<TrustMaterialKind> = [.cscaCertificate, .crl, .documentSignerCertificate]
        var checked: [(String, [UInt8], TrustMaterial)] = []
        var later: [(String, [UInt8])] = []
        for (p, b) in read {
            if let m = try? TrustMaterial(b), simple.contains(m.kind) { trust.add(m); checked.append((p, b, m)) } else { later.append((p, b)) }
        }
        for (p, b) in later {
            do {
                let m = try TrustMaterial(b, trusted: trust)
                trust.add(m)
                checked.append((p, b, m))
            } catch {
                throw CLIError("\(p): refused (\(error)); nothing was imported")
            }
        }
        let now = Int(Date().timeIntervalSince1970)
        return try checked.map { p, b, m in
            let sha = Hex.string(DigestAlgorithm.sha256.digest(b))
            return try admin.importTrust(TrustMaterialRecord(
                id: "tm_" + sha.prefix(16), kind: m.kind.rawValue, sha256: sha, bytes: Data(b), cscas: m.cscas.count, crls: m.crls.count,
                documentSigners: m.documentSigners.count, sourceName: (p as NSString).lastPathComponent, importedAt: now))
        }
    }
}

/// The lines of the admin usage about `sub` (its line and the continuation lines under it), with
/// the common options: what `idvd admin <sub> --help` prints.
/// `sub`'s lines of the admin usage (its line and the indented lines under it) with a header and a
/// footer; with `ifFound`, nil when the usage has no line for `sub`.
func adminUsage(of sub: String, in usage: String, ifFound: Bool = false) -> String? {
    let lines = usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var out = ["usage: idvd admin \(sub) … [--db PATH|URL | --config FILE] [--set key=value]..."]
    var inside = false
    for l in lines.dropFirst() {
        if l.hasPrefix("  \(sub) ") || l == "  \(sub)" { inside = true; out.append(l); continue }
        if inside {
            if l.hasPrefix("      ") && !l.trimmingCharacters(in: .whitespaces).isEmpty { out.append(l); continue }
            inside = false
        }
    }
    if ifFound && out.count == 1 { return nil }
    out.append("The store and settings are the server's: see `idvd admin --help`.")
    return out.joined(separator: "\n")
}

/// What `idvd admin where` prints: the database and the key file, each with how it was chosen.
struct Where: Encodable {
    struct DB: Encodable { let engine: String; let location: String; let exists: Bool? }
    struct Key: Encodable {
        let path: String; let source: String; let exists: Bool; let default_path: String?; let warning: String?
    }
    let database: DB
    let key_file: Key
    let previous_key_files: [String]

    init(_ config: ServerConfig) throws {
        switch config.database {
        case let .sqlite(path):
            database = DB(engine: "sqlite", location: path, exists: FileManager.default.fileExists(atPath: path))
        case .postgres:
            database = DB(engine: "postgresql", location: config.database.redacted, exists: nil)
        }
        let k: KeyLocation
        do { k = try config.keyLocation() } catch { throw CLIError("\(error)") }
        key_file = Key(path: k.path, source: k.source.rawValue, exists: FileManager.default.fileExists(atPath: k.path),
                       default_path: k.defaultPath, warning: k.legacyWarning)
        previous_key_files = config.keys.resolvedPreviousKeyFiles
    }
}
