/// The PostgreSQL schema, as versioned migrations that mirror ``SQLiteStore``'s one for one
/// (migration N here makes the same change as SQLite's migration N, so both stores report the same
/// schema version); index + 1 is the version, kept in `idvd_schema`. Append, never edit.
///
/// Types: Unix seconds and counters are `BIGINT`, flags `BOOLEAN`, sealed boxes `BYTEA`; the audit
/// `details` is the canonical JSON *text* the chain hash covers (not `jsonb`, which would reorder it).
/// PostgreSQL-only parts, for several writers: `audit_head` (the chain's last seq and hash, one row,
/// locked by each append — docs/AUDIT-CHAIN.md), `sessions.sweep_claimed_by/_until` (which node's
/// expiry sweep holds a session, until when), `ord` identity columns (insertion order where SQLite uses `rowid`), and
/// `idvd_meta` (the session-state key id every node must hold).
enum PostgresMigrations {
    static let all: [String] = [
        // 1: core tables + tables reserved for the IDV workflow engine.
        """
        CREATE TABLE users (
            user_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            activation_requires_idv BOOLEAN NOT NULL,
            idv_workflow BIGINT NOT NULL,
            password_hash TEXT,
            failed_password_attempts BIGINT NOT NULL DEFAULT 0,
            locked_at BIGINT,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL
        );
        CREATE TABLE activation_codes (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
            code_hash TEXT NOT NULL,
            salt TEXT NOT NULL,
            expires_at BIGINT NOT NULL,
            attempts_left BIGINT NOT NULL,
            used_at BIGINT,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE devices (
            device_id TEXT PRIMARY KEY,
            public_key TEXT NOT NULL,
            label TEXT,
            user_id TEXT REFERENCES users(user_id) ON DELETE SET NULL,
            lda_enabled BOOLEAN NOT NULL DEFAULT false,
            created_at BIGINT NOT NULL,
            last_used_at BIGINT
        );
        CREATE INDEX devices_user ON devices(user_id);
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT,
            device_id TEXT,
            logged_in BOOLEAN NOT NULL,
            created_at BIGINT NOT NULL,
            last_seen_at BIGINT NOT NULL,
            idle_timeout BIGINT NOT NULL,
            absolute_expires_at BIGINT NOT NULL,
            revoked_at BIGINT,
            version BIGINT NOT NULL,
            state BYTEA NOT NULL,
            sweep_claimed_by TEXT,
            sweep_claimed_until BIGINT
        );
        CREATE INDEX sessions_user ON sessions(user_id);
        CREATE INDEX sessions_last_seen ON sessions(last_seen_at);
        CREATE TABLE consumed_challenges (
            challenge_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            consumed_at BIGINT NOT NULL
        );
        CREATE INDEX consumed_challenges_session ON consumed_challenges(session_id);
        CREATE TABLE flow_runs (
            run_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            user_id TEXT,
            flow TEXT NOT NULL,
            idv_workflow BIGINT,
            started_at BIGINT NOT NULL,
            ended_at BIGINT,
            outcome TEXT,
            error_code BIGINT
        );
        CREATE TABLE audit_log (
            seq BIGINT PRIMARY KEY,
            at BIGINT NOT NULL,
            action TEXT NOT NULL,
            user_id TEXT,
            session_id TEXT,
            details TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE TABLE audit_head (
            id SMALLINT PRIMARY KEY CHECK (id = 1),
            seq BIGINT NOT NULL,
            hash TEXT NOT NULL
        );
        INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
        CREATE TABLE biometric_templates (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
            ciphertext BYTEA NOT NULL,
            nonce BYTEA NOT NULL,
            key_id TEXT NOT NULL,
            model TEXT NOT NULL,
            consent_id TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE consents (
            consent_id TEXT PRIMARY KEY,
            ord BIGINT GENERATED ALWAYS AS IDENTITY,
            user_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            granted BOOLEAN NOT NULL,
            session_id TEXT,
            run_id TEXT,
            recorded_at BIGINT NOT NULL
        );
        CREATE TABLE document_scans (
            scan_id TEXT PRIMARY KEY,
            ord BIGINT GENERATED ALWAYS AS IDENTITY,
            user_id TEXT,
            session_id TEXT,
            run_id TEXT,
            overall_status TEXT,
            report_ciphertext BYTEA,
            report_nonce BYTEA,
            key_id TEXT,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE idvd_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
        // 2: IDV workflow engine: consent provenance, scan reasons, kept images.
        """
        ALTER TABLE consents ADD COLUMN flow TEXT;
        ALTER TABLE consents ADD COLUMN idv_workflow BIGINT;
        ALTER TABLE consents ADD COLUMN text_version TEXT;
        CREATE INDEX consents_user ON consents(user_id);
        ALTER TABLE document_scans ADD COLUMN reason TEXT;
        ALTER TABLE document_scans ADD COLUMN idv_workflow BIGINT;
        CREATE INDEX document_scans_user ON document_scans(user_id);
        CREATE TABLE idv_media (
            media_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            ciphertext BYTEA NOT NULL,
            nonce BYTEA NOT NULL,
            key_id TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT
        );
        CREATE INDEX idv_media_run ON idv_media(run_id);
        CREATE INDEX idv_media_expires ON idv_media(expires_at) WHERE expires_at IS NOT NULL;
        CREATE INDEX flow_runs_user_flow ON flow_runs(user_id, flow, ended_at);
        """,
        // 3: activation code bound to the session using it until activation completes.
        "ALTER TABLE activation_codes ADD COLUMN bound_session_id TEXT; ALTER TABLE activation_codes ADD COLUMN bound_until BIGINT;",
        // 4: verification links of the hosted page (PostgresStore+Links.swift; IDVEngine/Links/VerificationLinks.swift).
        """
        CREATE TABLE verification_links (
            link_id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
            flow TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT,
            session_id TEXT
        );
        CREATE INDEX verification_links_user ON verification_links(user_id);
        """,
        // 5: the operator's chip trust material (PostgresStore+Trust.swift; docs/CHIP.md "Trust management").
        """
        CREATE TABLE trust_material (
            trust_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            sha256 TEXT NOT NULL UNIQUE,
            content BYTEA NOT NULL,
            cscas BIGINT NOT NULL,
            crls BIGINT NOT NULL,
            document_signers BIGINT NOT NULL,
            source_name TEXT NOT NULL,
            imported_at BIGINT NOT NULL
        );
        """,
        // 6: the relying-party API: API clients, review cases, read-model indexes (PostgresStore+RelyingParty.swift).
        """
        CREATE TABLE api_clients (
            client_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            scopes TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            salt TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            revoked_at BIGINT
        );
        CREATE TABLE review_cases (
            case_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            flow TEXT NOT NULL,
            triggers TEXT NOT NULL,
            opened_at BIGINT NOT NULL,
            decided_at BIGINT,
            decision TEXT,
            decision_reason TEXT,
            reviewer TEXT
        );
        CREATE INDEX review_cases_open ON review_cases(decided_at, opened_at);
        CREATE INDEX flow_runs_user_started ON flow_runs(user_id, started_at);
        CREATE INDEX audit_log_session ON audit_log(session_id);
        """,
        // 7: the webhook outbox: endpoints, events, deliveries (PostgresStore+Webhooks.swift; docs/WEBHOOKS.md).
        """
        CREATE TABLE webhook_endpoints (
            endpoint_id TEXT PRIMARY KEY,
            ord BIGINT GENERATED ALWAYS AS IDENTITY,
            url TEXT NOT NULL,
            events TEXT NOT NULL,
            secret_ciphertext BYTEA NOT NULL,
            secret_nonce BYTEA NOT NULL,
            key_id TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE webhook_events (
            event_id TEXT PRIMARY KEY,
            type TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            user_id TEXT,
            run_id TEXT,
            body BYTEA NOT NULL
        );
        CREATE TABLE webhook_deliveries (
            delivery_id TEXT PRIMARY KEY,
            ord BIGINT GENERATED ALWAYS AS IDENTITY,
            event_id TEXT NOT NULL REFERENCES webhook_events(event_id) ON DELETE CASCADE,
            endpoint_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts BIGINT NOT NULL DEFAULT 0,
            created_at BIGINT NOT NULL,
            next_attempt_at BIGINT,
            last_attempt_at BIGINT,
            last_status BIGINT,
            last_error TEXT,
            delivered_at BIGINT,
            claimed_by TEXT,
            claimed_until BIGINT
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
        CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
        """,
        // 8: SQLite's `audit_head` (the chain's head, checked by verify); PostgreSQL has had it since 1.
        "SELECT 1;",
        // 9: a webhook endpoint's previous secret during a rotation's overlap (`webhook rotate-secret`).
        """
        ALTER TABLE webhook_endpoints ADD COLUMN previous_ciphertext BYTEA;
        ALTER TABLE webhook_endpoints ADD COLUMN previous_nonce BYTEA;
        ALTER TABLE webhook_endpoints ADD COLUMN previous_key_id TEXT;
        ALTER TABLE webhook_endpoints ADD COLUMN previous_until BIGINT;
        """,
        // 10: the credential-limit counters every node shares (PostgresStore+Limits.swift; docs/LIMITS.md).
        """
        CREATE TABLE limit_counters (
            key TEXT PRIMARY KEY,
            tokens_milli BIGINT NOT NULL,
            failures BIGINT NOT NULL,
            rounds BIGINT NOT NULL,
            blocked_until BIGINT NOT NULL,
            updated_at BIGINT NOT NULL
        );
        CREATE INDEX limit_counters_updated ON limit_counters(updated_at);
        """,
        // 11: data protection (docs/DATA-PROTECTION.md): audit pseudonyms, erasure receipts, evidence signing keys.
        """
        CREATE TABLE audit_subjects (
            user_id TEXT PRIMARY KEY,
            pseudonym TEXT NOT NULL UNIQUE
        );
        CREATE TABLE erasure_receipts (
            subject_key TEXT PRIMARY KEY,
            receipt_id TEXT NOT NULL UNIQUE,
            receipt TEXT NOT NULL,
            erased_at BIGINT NOT NULL
        );
        CREATE TABLE signing_keys (
            kid TEXT PRIMARY KEY,
            public_key BYTEA NOT NULL,
            secret_ciphertext BYTEA NOT NULL,
            secret_nonce BYTEA NOT NULL,
            key_id TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            retired_at BIGINT
        );
        """,
        // 12: the digests of judged selfie frames, for the replay check (IDVStoreSQL SQLStore+Presence.swift; docs/WORKFLOWS.md).
        """
        CREATE TABLE capture_digests (
            digest TEXT PRIMARY KEY,
            seen_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX capture_digests_expires ON capture_digests(expires_at);
        """,
    ]
}
