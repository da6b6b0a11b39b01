import Foundation
import IDVEngine

// The SQLite schema, one migration per version (`PRAGMA user_version`): the history of the
// database, never edited, only appended to. PostgreSQL's twin is PostgresMigrations.swift.

extension SQLiteStore {
    /// Migrations: index + 1 is the schema version (`PRAGMA user_version`). Append, never edit.
    static let migrations: [String] = [
        // 1: core tables + tables reserved for the IDV workflow engine.
        """
        CREATE TABLE users (
            user_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            activation_requires_idv INTEGER NOT NULL,
            idv_workflow INTEGER NOT NULL,
            password_hash TEXT,
            failed_password_attempts INTEGER NOT NULL DEFAULT 0,
            locked_at INTEGER,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        );
        CREATE TABLE activation_codes (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
            code_hash TEXT NOT NULL,
            salt TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            attempts_left INTEGER NOT NULL,
            used_at INTEGER,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE devices (
            device_id TEXT PRIMARY KEY,
            public_key TEXT NOT NULL,
            label TEXT,
            user_id TEXT REFERENCES users(user_id) ON DELETE SET NULL,
            lda_enabled INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER
        );
        CREATE INDEX devices_user ON devices(user_id);
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT,
            device_id TEXT,
            logged_in INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            last_seen_at INTEGER NOT NULL,
            idle_timeout INTEGER NOT NULL,
            absolute_expires_at INTEGER NOT NULL,
            revoked_at INTEGER,
            version INTEGER NOT NULL,
            state TEXT NOT NULL
        );
        CREATE INDEX sessions_user ON sessions(user_id);
        CREATE TABLE consumed_challenges (
            challenge_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            consumed_at INTEGER NOT NULL
        );
        CREATE TABLE flow_runs (
            run_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            user_id TEXT,
            flow TEXT NOT NULL,
            idv_workflow INTEGER,
            started_at INTEGER NOT NULL,
            ended_at INTEGER,
            outcome TEXT,
            error_code INTEGER
        );
        CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,
            action TEXT NOT NULL,
            user_id TEXT,
            session_id TEXT,
            details TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE TABLE biometric_templates (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
            ciphertext BLOB NOT NULL,
            nonce BLOB NOT NULL,
            key_id TEXT NOT NULL,
            model TEXT NOT NULL,
            consent_id TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE consents (
            consent_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            granted INTEGER NOT NULL,
            session_id TEXT,
            run_id TEXT,
            recorded_at INTEGER NOT NULL
        );
        CREATE TABLE document_scans (
            scan_id TEXT PRIMARY KEY,
            user_id TEXT,
            session_id TEXT,
            run_id TEXT,
            overall_status TEXT,
            report_ciphertext BLOB,
            report_nonce BLOB,
            key_id TEXT,
            created_at INTEGER NOT NULL
        );
        """,
        // 2: IDV workflow engine (Workflows/WorkflowStore.swift): consent provenance, scan reasons, kept images.
        WorkflowMigrations.v2,
        // 3: activation code bound to the session using it until activation completes.
        "ALTER TABLE activation_codes ADD COLUMN bound_session_id TEXT; ALTER TABLE activation_codes ADD COLUMN bound_until INTEGER;",
        // 4: verification links of the hosted page (SQLiteStore+Links.swift; IDVEngine/Links/VerificationLinks.swift).
        VerificationLinkMigrations.v4,
        // 5: the operator's chip trust material (SQLiteStore+Trust.swift; docs/CHIP.md "Trust management").
        TrustMaterialMigrations.v5,
        // 6: the relying-party API: API clients, review cases, read-model indexes (SQLiteStore+RelyingParty.swift).
        RelyingPartyMigrations.v6,
        // 7: the webhook outbox: endpoints, events, deliveries (SQLiteStore+Webhooks.swift; docs/WEBHOOKS.md).
        WebhookMigrations.v7,
        // 8: the audit chain's head (last seq and hash), moved in the transaction of each append, so
        // that deleting the newest entries is detected (PostgreSQL has had `audit_head` since 1).
        """
        CREATE TABLE audit_head (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            seq INTEGER NOT NULL,
            hash TEXT NOT NULL
        );
        INSERT INTO audit_head (id, seq, hash) VALUES (1,
            COALESCE((SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1), 0),
            COALESCE((SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1), '\(AuditEntry.genesisHash)'));
        """,
        // 9: a webhook endpoint's previous secret during a rotation's overlap (SQLiteStore+Webhooks.swift).
        WebhookMigrations.v9,
        // 10: the credential-limit counters every node shares (SQLiteStore+Limits.swift; docs/LIMITS.md).
        LimitMigrations.v10,
        // 11: data protection (docs/DATA-PROTECTION.md): audit pseudonyms, erasure receipts, evidence signing keys.
        DataProtectionMigrations.sqlite,
        // 12: the digests of judged selfie frames, for the replay check (IDVStoreSQL SQLStore+Presence.swift; docs/WORKFLOWS.md).
        PresenceMigrations.v12,
    ]
}

/// Migration 11 of both stores (issue #37): `audit_subjects` (the random pseudonym each user is
/// named by in `audit_log`; deleting its row is what erasure does to the audit),
/// `erasure_receipts` (keyed by a digest of the erased id, never the id) and `signing_keys` (the
/// Ed25519 keys of evidence records, the private half sealed by the vault key, shared by every node).
enum DataProtectionMigrations {
    static let sqlite = """
    CREATE TABLE audit_subjects (
        user_id TEXT PRIMARY KEY,
        pseudonym TEXT NOT NULL UNIQUE
    );
    CREATE TABLE erasure_receipts (
        subject_key TEXT PRIMARY KEY,
        receipt_id TEXT NOT NULL UNIQUE,
        receipt TEXT NOT NULL,
        erased_at INTEGER NOT NULL
    );
    CREATE TABLE signing_keys (
        kid TEXT PRIMARY KEY,
        public_key BLOB NOT NULL,
        secret_ciphertext BLOB NOT NULL,
        secret_nonce BLOB NOT NULL,
        key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        retired_at INTEGER
    );
    """
}

enum WorkflowMigrations {
    static let v2 = """
    ALTER TABLE consents ADD COLUMN flow TEXT;
    ALTER TABLE consents ADD COLUMN idv_workflow INTEGER;
    ALTER TABLE consents ADD COLUMN text_version TEXT;
    CREATE INDEX consents_user ON consents(user_id);
    ALTER TABLE document_scans ADD COLUMN reason TEXT;
    ALTER TABLE document_scans ADD COLUMN idv_workflow INTEGER;
    CREATE INDEX document_scans_user ON document_scans(user_id);
    CREATE TABLE idv_media (
        media_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        ciphertext BLOB NOT NULL,
        nonce BLOB NOT NULL,
        key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER
    );
    CREATE INDEX idv_media_run ON idv_media(run_id);
    CREATE INDEX flow_runs_user_flow ON flow_runs(user_id, flow, ended_at);
    """
}

enum VerificationLinkMigrations {
    static let v4 = """
    CREATE TABLE verification_links (
        link_id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
        flow TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        session_id TEXT
    );
    CREATE INDEX verification_links_user ON verification_links(user_id);
    """
}

enum TrustMaterialMigrations {
    static let v5 = """
    CREATE TABLE trust_material (
        trust_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        sha256 TEXT NOT NULL UNIQUE,
        content BLOB NOT NULL,
        cscas INTEGER NOT NULL,
        crls INTEGER NOT NULL,
        document_signers INTEGER NOT NULL,
        source_name TEXT NOT NULL,
        imported_at INTEGER NOT NULL
    );
    """
}

enum RelyingPartyMigrations {
    static let v6 = """
    CREATE TABLE api_clients (
        client_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        salt TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    CREATE TABLE review_cases (
        case_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        triggers TEXT NOT NULL,
        opened_at INTEGER NOT NULL,
        decided_at INTEGER,
        decision TEXT,
        decision_reason TEXT,
        reviewer TEXT
    );
    CREATE INDEX review_cases_open ON review_cases(decided_at, opened_at);
    CREATE INDEX flow_runs_user_started ON flow_runs(user_id, started_at);
    CREATE INDEX audit_log_session ON audit_log(session_id);
    """
}

enum WebhookMigrations {
    static let v7 = """
    CREATE TABLE webhook_endpoints (
        endpoint_id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        secret_ciphertext BLOB NOT NULL,
        secret_nonce BLOB NOT NULL,
        key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE webhook_events (
        event_id TEXT PRIMARY KEY,
        type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        user_id TEXT,
        run_id TEXT,
        body BLOB NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        delivery_id TEXT PRIMARY KEY,
        event_id TEXT NOT NULL REFERENCES webhook_events(event_id) ON DELETE CASCADE,
        endpoint_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        next_attempt_at INTEGER,
        last_attempt_at INTEGER,
        last_status INTEGER,
        last_error TEXT,
        delivered_at INTEGER,
        claimed_by TEXT,
        claimed_until INTEGER
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
    """

    /// 9: an endpoint's previous secret during a rotation's overlap (`webhook rotate-secret`).
    static let v9 = """
    ALTER TABLE webhook_endpoints ADD COLUMN previous_ciphertext BLOB;
    ALTER TABLE webhook_endpoints ADD COLUMN previous_nonce BLOB;
    ALTER TABLE webhook_endpoints ADD COLUMN previous_key_id TEXT;
    ALTER TABLE webhook_endpoints ADD COLUMN previous_until INTEGER;
    """
}

enum LimitMigrations {
    static let v10 = """
    CREATE TABLE limit_counters (
        key TEXT PRIMARY KEY,
        tokens_milli INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        rounds INTEGER NOT NULL,
        blocked_until INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX limit_counters_updated ON limit_counters(updated_at);
    """
}

/// Schema of the replay check's frame digests (IDVEngine Workflows/Presence.swift): one row per
/// distinct frame of every judged selfie capture, kept until `expires_at` (`idv.capture_replay_seconds`),
/// deleted by the expiry sweep. PostgreSQL's migration 12 is the same with BIGINT times.
enum PresenceMigrations {
    static let v12 = """
    CREATE TABLE capture_digests (
        digest TEXT PRIMARY KEY,
        seen_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    );
    CREATE INDEX capture_digests_expires ON capture_digests(expires_at);
    """
}
