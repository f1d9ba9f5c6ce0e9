-- Tablebay metadata, version 5: identity and access management. Accounts, their users and roles (with identity
-- policies, and a trust policy for roles), and every credential that can sign a request: account root keys, user
-- access keys, and temporary (STS) credentials with their session token digest, expiry and session policy.
-- Secrets are stored as given, because SigV4 verification needs the plaintext secret.
CREATE TABLE iam_accounts (
    account_id    TEXT   NOT NULL PRIMARY KEY,
    name          TEXT,
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE iam_principals (
    account_id       TEXT   NOT NULL REFERENCES iam_accounts (account_id),
    kind             TEXT   NOT NULL,
    name             TEXT   NOT NULL,
    trust_policy     TEXT,
    max_session_secs BIGINT,
    created_at_ms    BIGINT NOT NULL,
    PRIMARY KEY (account_id, kind, name)
);

CREATE TABLE iam_policies (
    account_id     TEXT NOT NULL,
    principal_kind TEXT NOT NULL,
    principal_name TEXT NOT NULL,
    policy_name    TEXT NOT NULL,
    document       TEXT NOT NULL,
    PRIMARY KEY (account_id, principal_kind, principal_name, policy_name),
    FOREIGN KEY (account_id, principal_kind, principal_name) REFERENCES iam_principals (account_id, kind, name)
);

CREATE TABLE iam_credentials (
    access_key_id        TEXT   NOT NULL PRIMARY KEY,
    secret               TEXT   NOT NULL,
    account_id           TEXT   NOT NULL,
    principal_kind       TEXT   NOT NULL,
    principal_name       TEXT   NOT NULL,
    session_name         TEXT,
    status               TEXT   NOT NULL,
    session_token_sha256 TEXT,
    session_policy       TEXT,
    expires_at_ms        BIGINT,
    created_at_ms        BIGINT NOT NULL
);
CREATE INDEX iam_credentials_owner ON iam_credentials (account_id, principal_kind, principal_name);
