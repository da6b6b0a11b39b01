import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVReaders
import EMRTD
import IDVStoreSQLite

extension Command {
    static let admin = Command(name: "admin", summary: "administer users, links, keys, chip trust and the audit log (create-user, create-link, list-users, reset-user, audit, purge-expired, rekey, new-key, trust)") { args in
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
          audit [--limit N] [--verify]                        print the last N audit entries and verify the hash chain
                                                              (--verify: only the verdict; exit 1 when broken)
          purge-expired                                       delete expired/revoked sessions, closing their open flow
                                                              runs as "expired" (audited, sealed media dropped); prints counts
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
        The store and settings are the server's (db.path from --db, --config FILE, IDVD_DB / IDVD_DB_PATH, or
        ./idvd.sqlite; a postgresql:// URL works for every subcommand, with templates.key_file set and the
        password in IDVD_DB_PASSWORD, db.password_file or PGPASSWORD; activation.code_ttl_seconds and
        activation.code_attempts apply to the codes issued).
        Only create-user creates the database when it does not exist (the first user of a new install);
        every other subcommand refuses a missing database file, or a PostgreSQL database without the
        OpenIDV schema (exit 2), so a mistyped --db is not mistaken for an empty store.
        """
        guard let sub = args.first, !["-h", "--help"].contains(sub) else { print(usage); return args.isEmpty ? 2 : 0 }
        let (rest, settings) = try splitSettings(Array(args.dropFirst()))
        var overrides = settings
        let (opts, pos) = try CLI.parseOptions(rest, flags: ["no-idv", "verify"])
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
        try StoreOpening.refusePasswordOnCommandLine(overrides["db.path"])
        let config: ServerConfig
        do {
            config = try ServerConfig.load(file: opts["config"] ?? ProcessInfo.processInfo.environment["IDVD_CONFIG"], overrides: overrides)
        } catch { throw CLIError("\(error)") }
        guard ["create-user", "create-link", "list-users", "reset-user", "purge-expired", "rekey", "audit"].contains(sub) else {
            throw CLIError("unknown admin subcommand '\(sub)'\n\(usage)")
        }
        let store = try StoreOpening.open(config, mustExist: sub != "create-user", command: "admin \(sub)")
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
            case "trust":
                return try TrustCommand.run(pos, admin: admin)
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
