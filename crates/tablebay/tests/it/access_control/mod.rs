//! Access control end to end (issue 7, "How it is verified", bullets 1 and 2), against the real binary with
//! accounts, users and keys made through the admin API:
//!
//! - for **every action in the guide's list**: a user whose identity policy allows it may perform an operation
//!   that needs it; without it (no policy, or a policy allowing everything *but* it) gets 403; an explicit `Deny`
//!   in the bucket policy refuses it despite an identity allow; a user of another account, allowed by the bucket
//!   policy *and* by its own identity policy, may perform it only when the guide marks it cross-account;
//! - for **every Iceberg REST operation** in the guide's map: a user holding exactly the listed actions succeeds,
//!   and with any one of them removed gets 403.
//!
//! Every case runs on a fresh fixture (bucket, namespaces, a table with metadata, a data object, a table policy)
//! made by the owning account's root, so that the cases cannot disturb each other.
//!
//! This file builds the fixture and one operation per action; `actions.rs` and `iceberg_operations.rs` hold the tests.

use http::{Method, Method as M};
use serde_json::{Value, json};
use tablebay_policy::{Action, IcebergOperation, iceberg_operation_actions};

use crate::identity::{Iceberg, S3, Tables};
use crate::server::{REGION, TestServer, seg};
use crate::world::{Surface, Who, World, must, send};

mod actions;
mod iceberg_operations;

impl World {
    /// Replaces the bucket policy of `f`'s bucket, as its owner.
    async fn set_bucket_policy(&self, f: &Fixture, document: String) {
        let path = format!("/buckets/{}/policy", seg(&f.bucket_arn));
        must(
            &self.server,
            &self.owner,
            M::PUT,
            Tables,
            &path,
            json!({"resourcePolicy": document}),
        )
        .await;
    }

    /// A fresh bucket with namespaces `ns` and `empty`, table `ns.t` created through Iceberg (so it has metadata),
    /// a table policy, and one data object.
    async fn fixture(&self, n: usize) -> Fixture {
        let (s, o) = (&self.server, &self.owner);
        let bucket = must(s, o, M::PUT, Tables, "/buckets",
            json!({"name": format!("fixture-{n}"), "encryptionConfiguration": {"sseAlgorithm": "AES256"}})).await;
        let bucket_arn = bucket["arn"].as_str().unwrap().to_string();
        let b = seg(&bucket_arn);
        for ns in ["ns", "empty"] {
            must(
                s,
                o,
                M::PUT,
                Tables,
                &format!("/namespaces/{b}"),
                json!({"namespace": [ns]}),
            )
            .await;
        }
        must(
            s,
            o,
            M::POST,
            Iceberg,
            &format!("/iceberg/v1/{b}/namespaces/ns/tables"),
            json!({"name": "t", "schema": schema()}),
        )
        .await;
        let location = must(
            s,
            o,
            M::GET,
            Tables,
            &format!("/tables/{b}/ns/t/metadata-location"),
            Value::Null,
        )
        .await;
        let table = must(
            s,
            o,
            M::GET,
            Tables,
            &format!("/get-table?tableBucketARN={b}&namespace=ns&name=t"),
            Value::Null,
        )
        .await;
        let warehouse = location["warehouseLocation"]
            .as_str()
            .unwrap()
            .trim_end_matches('/')
            .to_string();
        let storage = warehouse.strip_prefix("s3://").unwrap().to_string();
        must(
            s,
            o,
            M::PUT,
            Tables,
            &format!("/tables/{b}/ns/t/policy"),
            json!({"resourcePolicy": benign_policy(&o.account, "s3tables:GetTable")}),
        )
        .await;
        let (status, text) = send(
            s,
            o,
            M::PUT,
            S3,
            &format!("/{storage}/data/probe.bin"),
            b"probe",
        )
        .await;
        assert_eq!(status, 200, "{text}");
        Fixture {
            n,
            bucket_arn,
            table_arn: table["tableARN"].as_str().unwrap().to_string(),
            version_token: location["versionToken"].as_str().unwrap().to_string(),
            warehouse,
            storage,
        }
    }
}

impl World {
    /// What the owner sees of fixture `f` (and of its bucket list): compared before and after refused requests,
    /// which must change nothing. The bucket policy is left out; the cases set it themselves.
    async fn state(&self, f: &Fixture) -> Vec<(String, u16, String)> {
        let b = seg(&f.bucket_arn);
        let mut reads: Vec<(Surface, String)> = [
            "/buckets".to_string(),
            format!("/buckets/{b}"),
            format!("/buckets/{b}/encryption"),
            format!("/buckets/{b}/maintenance"),
            format!("/namespaces/{b}"),
            format!("/tables/{b}?namespace=ns"),
            format!("/tables/{b}/ns/t/metadata-location"),
            format!("/tables/{b}/ns/t/policy"),
            format!("/tables/{b}/ns/t/maintenance"),
            format!("/table-record-expiration?tableArn={}", seg(&f.table_arn)),
        ]
        .into_iter()
        .map(|path| (Tables, path))
        .collect();
        reads.push((S3, format!("/{}?list-type=2", f.storage)));
        let mut state = Vec::new();
        for (surface, path) in reads {
            let (status, body) = send(&self.server, &self.owner, M::GET, surface, &path, b"").await;
            // An S3 error names its request; that is the one part that may differ.
            let body = match (body.find("<RequestId>"), body.find("</RequestId>")) {
                (Some(start), Some(end)) if start < end => {
                    format!("{}{}", &body[..start], &body[end..])
                }
                _ => body,
            };
            state.push((path, status, body));
        }
        state
    }
}

/// What the owner set up for one case.
struct Fixture {
    n: usize,
    bucket_arn: String,
    table_arn: String,
    version_token: String,
    warehouse: String,
    storage: String,
}

fn schema() -> Value {
    json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": true}]})
}

/// A resource policy that grants nothing to the users under test (it names the account, which delegates to the
/// account's own identity policies).
fn benign_policy(account: &str, action: &str) -> String {
    json!({"Version": "2012-10-17", "Statement": [{"Sid": "benign", "Effect": "Allow",
        "Principal": {"AWS": account}, "Action": action, "Resource": "*"}]})
    .to_string()
}

fn qualified(actions: &[Action]) -> Vec<String> {
    actions.iter().map(|a| a.qualified_name()).collect()
}

/// An identity policy allowing `actions` on every bucket and table of `account`.
fn identity_allowing(actions: &[Action], account: &str) -> String {
    json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": qualified(actions),
        "Resource": format!("arn:aws:s3tables:{REGION}:{account}:bucket/*")}]})
    .to_string()
}

/// One operation that exercises an action: the request, the actions it needs, and its success status.
struct Op {
    method: Method,
    surface: Surface,
    path: String,
    body: Value,
    needs: Vec<Action>,
}

impl Op {
    fn new(method: Method, surface: Surface, path: String, body: Value, needs: &[Action]) -> Op {
        Op {
            method,
            surface,
            path,
            body,
            needs: needs.to_vec(),
        }
    }

    async fn run(&self, server: &TestServer, who: &Who) -> (u16, String) {
        let bytes = match &self.body {
            Value::Null => Vec::new(),
            Value::String(s) => s.clone().into_bytes(),
            other => serde_json::to_vec(other).unwrap(),
        };
        send(
            server,
            who,
            self.method.clone(),
            self.surface,
            &self.path,
            &bytes,
        )
        .await
    }
}

/// The operation that needs `action`, on fixture `f`.
fn op_for(action: Action, f: &Fixture, owner: &str) -> Op {
    use Action as A;
    let b = seg(&f.bucket_arn);
    let t = format!("/tables/{b}/ns/t");
    let maintenance_bucket = json!({"value": {"status": "enabled",
        "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 4, "nonCurrentDays": 10}}}});
    let maintenance_table = json!({"value": {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 256}}}});
    let aes = json!({"sseAlgorithm": "AES256"});
    let (method, surface, path, body): (Method, Surface, String, Value) = match action {
        A::CreateTableBucket => (
            M::PUT,
            Tables,
            "/buckets".into(),
            json!({"name": format!("created-{}", f.n)}),
        ),
        A::GetTableBucket => (M::GET, Tables, format!("/buckets/{b}"), Value::Null),
        A::ListTableBuckets => (M::GET, Tables, "/buckets".into(), Value::Null),
        A::CreateNamespace => (
            M::PUT,
            Tables,
            format!("/namespaces/{b}"),
            json!({"namespace": ["fresh"]}),
        ),
        A::GetNamespace => (M::GET, Tables, format!("/namespaces/{b}/ns"), Value::Null),
        A::ListNamespaces => (M::GET, Tables, format!("/namespaces/{b}"), Value::Null),
        A::DeleteNamespace => (
            M::DELETE,
            Tables,
            format!("/namespaces/{b}/empty"),
            Value::Null,
        ),
        // The fixture's tables and namespaces are dropped first (`empty_bucket`): only an empty bucket goes.
        A::DeleteTableBucket => (M::DELETE, Tables, format!("/buckets/{b}"), Value::Null),
        A::PutTableBucketPolicy => (
            M::PUT,
            Tables,
            format!("/buckets/{b}/policy"),
            json!({"resourcePolicy": benign_policy(owner, "s3tables:ListTables")}),
        ),
        A::GetTableBucketPolicy => (M::GET, Tables, format!("/buckets/{b}/policy"), Value::Null),
        A::DeleteTableBucketPolicy => (
            M::DELETE,
            Tables,
            format!("/buckets/{b}/policy"),
            Value::Null,
        ),
        A::GetTableBucketMaintenanceConfiguration => (
            M::GET,
            Tables,
            format!("/buckets/{b}/maintenance"),
            Value::Null,
        ),
        A::PutTableBucketMaintenanceConfiguration => (
            M::PUT,
            Tables,
            format!("/buckets/{b}/maintenance/icebergUnreferencedFileRemoval"),
            maintenance_bucket,
        ),
        A::PutTableBucketEncryption => (
            M::PUT,
            Tables,
            format!("/buckets/{b}/encryption"),
            json!({"encryptionConfiguration": aes}),
        ),
        A::GetTableBucketEncryption => (
            M::GET,
            Tables,
            format!("/buckets/{b}/encryption"),
            Value::Null,
        ),
        A::DeleteTableBucketEncryption => (
            M::DELETE,
            Tables,
            format!("/buckets/{b}/encryption"),
            Value::Null,
        ),
        // An empty status is valid (it turns logging off) and needs no target bucket in the fixture.
        A::PutTableBucketLogging => (
            M::PUT,
            Tables,
            format!("/buckets/{b}/logging"),
            json!({"tableBucketLoggingStatus": {}}),
        ),
        A::GetTableBucketLogging => (M::GET, Tables, format!("/buckets/{b}/logging"), Value::Null),
        A::GetTableMaintenanceConfiguration => {
            (M::GET, Tables, format!("{t}/maintenance"), Value::Null)
        }
        A::PutTableMaintenanceConfiguration => (
            M::PUT,
            Tables,
            format!("{t}/maintenance/icebergCompaction"),
            maintenance_table,
        ),
        A::GetTableMaintenanceJobStatus => (
            M::GET,
            Tables,
            format!("{t}/maintenance-job-status"),
            Value::Null,
        ),
        A::PutTablePolicy => (
            M::PUT,
            Tables,
            format!("{t}/policy"),
            json!({"resourcePolicy": benign_policy(owner, "s3tables:GetTableData")}),
        ),
        A::GetTablePolicy => (M::GET, Tables, format!("{t}/policy"), Value::Null),
        A::DeleteTablePolicy => (M::DELETE, Tables, format!("{t}/policy"), Value::Null),
        A::CreateTable => (
            M::PUT,
            Tables,
            format!("/tables/{b}/ns"),
            json!({"name": "fresh", "format": "ICEBERG"}),
        ),
        A::GetTable => (
            M::GET,
            Tables,
            format!("/get-table?tableArn={}", seg(&f.table_arn)),
            Value::Null,
        ),
        A::GetTableMetadataLocation => (
            M::GET,
            Tables,
            format!("{t}/metadata-location"),
            Value::Null,
        ),
        A::ListTables => (
            M::GET,
            Tables,
            format!("/tables/{b}?namespace=ns"),
            Value::Null,
        ),
        A::RenameTable => (
            M::PUT,
            Tables,
            format!("{t}/rename"),
            json!({"newName": "renamed"}),
        ),
        A::UpdateTableMetadataLocation => (
            M::PUT,
            Tables,
            format!("{t}/metadata-location"),
            json!({
            "versionToken": f.version_token,
            "metadataLocation": format!("{}/metadata/00009-access-control.metadata.json", f.warehouse)}),
        ),
        A::GetTableData => (
            M::GET,
            S3,
            format!("/{}/data/probe.bin", f.storage),
            Value::Null,
        ),
        A::PutTableData => (
            M::PUT,
            S3,
            format!("/{}/data/written.bin", f.storage),
            Value::String("written".into()),
        ),
        A::GetTableEncryption => (M::GET, Tables, format!("{t}/encryption"), Value::Null),
        A::PutTableEncryption => {
            // Table encryption is set only at creation (reference/s3tables-api.md §2): CreateTable with an
            // encryptionConfiguration needs both actions.
            let body =
                json!({"name": "encrypted", "format": "ICEBERG", "encryptionConfiguration": aes});
            return Op::new(
                M::PUT,
                Tables,
                format!("/tables/{b}/ns"),
                body,
                &[A::CreateTable, A::PutTableEncryption],
            );
        }
        A::DeleteTable => (M::DELETE, Tables, t.clone(), Value::Null),
        A::GetTableRecordExpirationConfiguration => (
            M::GET,
            Tables,
            format!("/table-record-expiration?tableArn={}", seg(&f.table_arn)),
            Value::Null,
        ),
        A::PutTableRecordExpirationConfiguration => (
            M::PUT,
            Tables,
            format!("/table-record-expiration?tableArn={}", seg(&f.table_arn)),
            json!({"value": {"status": "enabled", "settings": {"days": 30}}}),
        ),
        A::GetTableRecordExpirationJobStatus => (
            M::GET,
            Tables,
            format!(
                "/table-record-expiration-job-status?tableArn={}",
                seg(&f.table_arn)
            ),
            Value::Null,
        ),
        A::StartTableMigration => {
            // Accepted (202) whatever the source: the run fails later, and leaves no table.
            let body = json!({"roleARN": "arn:aws:iam::111122223333:role/m", "sourceType": "icebergRestTable",
                "source": {"icebergRestTable": {"uri": "http://127.0.0.1:1", "namespace": ["a"], "name": "t",
                    "auth": {"type": "none"}}},
                "destinationTable": {"tableBucketARN": f.bucket_arn, "namespace": "ns", "name": "migrated"},
                "migrationOutput": {"bucket": "arn:aws:s3:::reports"}});
            return Op::new(
                M::POST,
                Tables,
                "/start-table-migration".into(),
                body,
                &[A::StartTableMigration, A::CreateTable, A::PutTableData],
            );
        }
        A::ListTableMigrations => (
            M::GET,
            Tables,
            format!("/list-table-migrations?tableBucketARN={b}"),
            Value::Null,
        ),
        A::PutTableBucketReplication => (
            M::PUT,
            Tables,
            format!("/table-bucket-replication?tableBucketARN={b}"),
            replication(owner),
        ),
        A::PutTableReplication => (
            M::PUT,
            Tables,
            format!("/table-replication?tableArn={}", seg(&f.table_arn)),
            replication(owner),
        ),
        A::SyncTableMigration
        | A::UpdateTableMigration
        | A::CompleteTableMigration
        | A::GetTableMigration => unreachable!("needs a migrated table: see needs_migration"),
        A::GetTableBucketReplication
        | A::DeleteTableBucketReplication
        | A::GetTableReplication
        | A::DeleteTableReplication
        | A::GetTableReplicationStatus
        | A::DisassociateTableReplication => {
            unreachable!("needs a replication configuration or a replica: see needs_replication")
        }
        A::AssumeRole | A::GetSessionToken => unreachable!("not a table action"),
    };
    Op::new(method, surface, path, body, &[action])
}

/// A replication configuration to a bucket of the owner's account that does not exist (the worker then reports
/// the destination failed; nothing is written).
fn replication(owner: &str) -> Value {
    json!({"configuration": {"role": format!("arn:aws:iam::{owner}:role/replicator"),
        "rules": [{"destinations": [{"destinationTableBucketARN":
            format!("arn:aws:s3tables:us-east-1:{owner}:bucket/replica-elsewhere")}]}]}})
}

/// DeleteTableBucket needs an empty bucket: the owner drops the fixture's table and namespaces first (the bucket
/// and its policies stay).
async fn empty_bucket(world: &World, f: &Fixture) {
    let b = seg(&f.bucket_arn);
    let (s, o) = (&world.server, &world.owner);
    must(
        s,
        o,
        M::DELETE,
        Tables,
        &format!("/tables/{b}/ns/t"),
        Value::Null,
    )
    .await;
    for ns in ["ns", "empty"] {
        must(
            s,
            o,
            M::DELETE,
            Tables,
            &format!("/namespaces/{b}/{ns}"),
            Value::Null,
        )
        .await;
    }
}

#[track_caller]
fn assert_denied((status, text): &(u16, String), what: &str) {
    assert_eq!(*status, 403, "{what}: expected 403, got {status} {text}");
}

#[track_caller]
fn assert_allowed((status, text): &(u16, String), what: &str) {
    assert!(
        (200..300).contains(status),
        "{what}: expected success, got {status} {text}"
    );
}
