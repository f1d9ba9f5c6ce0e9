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

use http::{Method, Method as M};
use serde_json::{Value, json};
use tablebay_policy::{Action, IcebergOperation, iceberg_operation_actions};

use crate::identity::{Iceberg, S3, Tables};
use crate::server::{REGION, TestServer, seg};
use crate::world::{Surface, Who, World, must, send};

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
        A::AssumeRole | A::GetSessionToken => unreachable!("not a table action"),
    };
    Op::new(method, surface, path, body, &[action])
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

/// Actions that act on the caller's own account whatever the request says (CreateTableBucket creates in the
/// caller's account, ListTableBuckets lists it), so "another account's bucket" does not apply to them.
fn account_scoped(action: Action) -> bool {
    matches!(action, Action::CreateTableBucket | Action::ListTableBuckets)
}

#[tokio::test]
async fn every_action_is_enforced_as_the_guide_says() {
    let world = World::new().await;
    let (s, owner_account) = (&world.server, world.owner.account.clone());
    let mut n = 0;
    for &action in Action::all() {
        let what = |rule: &str| format!("{action} ({rule})");

        // Same account. Denied without a policy, and with a policy allowing everything but this action.
        n += 1;
        let f = world.fixture(n).await;
        if action == Action::DeleteTableBucket {
            empty_bucket(&world, &f).await;
        }
        let op = op_for(action, &f, &owner_account);
        let before = world.state(&f).await;
        world.set_identity("ana", None).await;
        assert_denied(&op.run(s, &world.ana).await, &what("no identity policy"));
        let all_but = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "NotAction": action.qualified_name(), "Resource": "*"}]});
        world.set_identity("ana", Some(all_but.to_string())).await;
        assert_denied(
            &op.run(s, &world.ana).await,
            &what("identity policy allows all but it"),
        );

        // An explicit Deny in the bucket policy wins over an identity allow.
        world
            .set_identity("ana", Some(identity_allowing(&op.needs, &owner_account)))
            .await;
        // The Deny names ana: a `"*"` would also stop the owner's root from replacing the bucket policy.
        let deny = json!({"Version": "2012-10-17", "Statement": [{"Sid": "no", "Effect": "Deny",
            "Principal": {"AWS": world.ana.arn}, "Action": action.qualified_name(), "Resource": "*"}]});
        if !account_scoped(action) {
            world.set_bucket_policy(&f, deny.to_string()).await;
            assert_denied(
                &op.run(s, &world.ana).await,
                &what("explicit deny in the bucket policy"),
            );
            world
                .set_bucket_policy(&f, benign_policy(&owner_account, "s3tables:GetTableBucket"))
                .await;
        }

        assert_eq!(
            world.state(&f).await,
            before,
            "{}",
            what("refusals change nothing")
        );

        // Allowed by the identity policy.
        assert_allowed(&op.run(s, &world.ana).await, &what("identity allow"));
        world.set_identity("ana", None).await;

        // Across accounts: bob, allowed by the bucket policy (naming his account) and by his identity policy.
        if account_scoped(action) {
            continue;
        }
        n += 1;
        let f = world.fixture(n).await;
        if action == Action::DeleteTableBucket {
            empty_bucket(&world, &f).await;
        }
        let op = op_for(action, &f, &owner_account);
        let grant = json!({"Version": "2012-10-17", "Statement": [{"Sid": "share", "Effect": "Allow",
            "Principal": {"AWS": world.other.account}, "Action": qualified(&op.needs),
            "Resource": [f.bucket_arn, format!("{}/*", f.bucket_arn)]}]});
        world.set_bucket_policy(&f, grant.to_string()).await;
        let before = world.state(&f).await;
        // One side alone never suffices.
        world.set_identity("bob", None).await;
        assert_denied(
            &op.run(s, &world.bob).await,
            &what("cross-account, bucket policy only"),
        );
        assert_eq!(
            world.state(&f).await,
            before,
            "{}",
            what("a cross-account refusal changes nothing")
        );
        world
            .set_identity("bob", Some(identity_allowing(&op.needs, &owner_account)))
            .await;
        let result = op.run(s, &world.bob).await;
        if op.needs.iter().all(|a| a.cross_account()) {
            assert_allowed(&result, &what("cross-account action, both sides allow"));
        } else {
            assert_denied(
                &result,
                &what("not a cross-account action, both sides allow"),
            );
            assert_eq!(
                world.state(&f).await,
                before,
                "{}",
                what("cross-account refusals change nothing")
            );
        }
        world.set_identity("bob", None).await;
    }
}

/// The Iceberg request of an operation, on fixture `f` (prefix: the URL-encoded bucket ARN).
fn iceberg_request(op: IcebergOperation, f: &Fixture) -> Option<(Method, String, Value)> {
    use IcebergOperation as O;
    let p = format!("/iceberg/v1/{}", seg(&f.bucket_arn));
    let t = format!("{p}/namespaces/ns/tables/t");
    Some(match op {
        O::GetConfig => (
            M::GET,
            format!("/iceberg/v1/config?warehouse={}", seg(&f.bucket_arn)),
            Value::Null,
        ),
        O::ListNamespaces => (M::GET, format!("{p}/namespaces"), Value::Null),
        O::CreateNamespace => (
            M::POST,
            format!("{p}/namespaces"),
            json!({"namespace": ["fresh"]}),
        ),
        O::LoadNamespace => (M::GET, format!("{p}/namespaces/ns"), Value::Null),
        O::NamespaceExists => (M::HEAD, format!("{p}/namespaces/ns"), Value::Null),
        O::DropNamespace => (M::DELETE, format!("{p}/namespaces/empty"), Value::Null),
        O::ListTables => (M::GET, format!("{p}/namespaces/ns/tables"), Value::Null),
        O::CreateTable => (
            M::POST,
            format!("{p}/namespaces/ns/tables"),
            json!({"name": "fresh", "schema": schema()}),
        ),
        O::LoadTable => (M::GET, t, Value::Null),
        O::TableExists => (M::HEAD, t, Value::Null),
        O::UpdateTable => (
            M::POST,
            t,
            json!({"requirements": [],
            "updates": [{"action": "set-properties", "updates": {"access": "control"}}]}),
        ),
        O::DropTable => (M::DELETE, t, Value::Null),
        O::RenameTable => (
            M::POST,
            format!("{p}/tables/rename"),
            json!({
            "source": {"namespace": ["ns"], "name": "t"}, "destination": {"namespace": ["ns"], "name": "renamed"}}),
        ),
        // Not in the guide's map.
        O::UpdateNamespaceProperties
        | O::RegisterTable
        | O::LoadCredentials
        | O::CommitTransaction => return None,
    })
}

#[tokio::test]
async fn every_iceberg_operation_needs_exactly_its_actions() {
    let world = World::new().await;
    let (s, owner_account) = (&world.server, world.owner.account.clone());
    for (i, &op) in IcebergOperation::all().iter().enumerate() {
        let f = world.fixture(1000 + i).await;
        let Some((method, path, body)) = iceberg_request(op, &f) else {
            continue;
        };
        let needs = iceberg_operation_actions(op);
        let before = world.state(&f).await;
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(&body).unwrap()
        };
        // Each action removed in turn: 403, and nothing happens.
        for missing in needs {
            let held: Vec<Action> = needs.iter().copied().filter(|a| a != missing).collect();
            if held.is_empty() {
                world.set_identity("ana", None).await;
            } else {
                world
                    .set_identity("ana", Some(identity_allowing(&held, &owner_account)))
                    .await;
            }
            let got = send(s, &world.ana, method.clone(), Iceberg, &path, &bytes).await;
            assert_denied(&got, &format!("{op:?} without {missing}"));
        }
        assert_eq!(
            world.state(&f).await,
            before,
            "{op:?}: refusals change nothing"
        );
        // Exactly the listed actions: success.
        world
            .set_identity("ana", Some(identity_allowing(needs, &owner_account)))
            .await;
        let got = send(s, &world.ana, method.clone(), Iceberg, &path, &bytes).await;
        assert_allowed(&got, &format!("{op:?} with {:?}", qualified(needs)));
    }
}

#[tokio::test]
async fn bad_policies_get_400_and_change_nothing() {
    let world = World::new().await;
    let (s, owner) = (&world.server, &world.owner);
    let f = world.fixture(1).await;
    world
        .set_identity(
            "ana",
            Some(identity_allowing(&[Action::GetTableBucket], &owner.account)),
        )
        .await;
    let b = seg(&f.bucket_arn);
    let bad = [
        ("not json", "not valid JSON"),
        (
            r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"oss:GetTabel","Resource":"*"}]}"#,
            "unknown action",
        ),
        (
            r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"oss:GetTable","Resource":"bucket/x"}]}"#,
            "not a valid resource ARN",
        ),
        (
            r#"{"Version":"2012-10-17","Statement":[{"Action":"oss:GetTable","Resource":"*"}]}"#,
            "missing Effect",
        ),
    ];
    for (document, message) in bad {
        // Identity policy through the admin API.
        let (status, text) = send(
            s,
            owner,
            M::PUT,
            Tables,
            "/admin/users/ana/policies/p",
            document.as_bytes(),
        )
        .await;
        assert_eq!(status, 400, "{document}: {text}");
        assert!(text.contains(message), "{document}: {text}");
        // Bucket policy through the control plane (the same fault, with the Principal a bucket policy needs).
        let resource_document = document.replace("[{", r#"[{"Principal":"*","#);
        let body = serde_json::to_vec(&json!({"resourcePolicy": resource_document})).unwrap();
        let (status, text) = send(
            s,
            owner,
            M::PUT,
            Tables,
            &format!("/buckets/{b}/policy"),
            &body,
        )
        .await;
        assert_eq!(status, 400, "{document}: {text}");
        assert!(text.contains(message), "{document}: {text}");
    }
    // A Principal in an identity policy, and none in a bucket policy.
    let with_principal = r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"oss:GetTable","Resource":"*"}]}"#;
    let (status, _) = send(
        s,
        owner,
        M::PUT,
        Tables,
        "/admin/users/ana/policies/p",
        with_principal.as_bytes(),
    )
    .await;
    assert_eq!(status, 400);
    let without = r#"{"Statement":[{"Effect":"Allow","Action":"oss:GetTable","Resource":"*"}]}"#;
    let body = serde_json::to_vec(&json!({"resourcePolicy": without})).unwrap();
    assert_eq!(
        send(
            s,
            owner,
            M::PUT,
            Tables,
            &format!("/buckets/{b}/policy"),
            &body
        )
        .await
        .0,
        400
    );
    // Nothing changed: the earlier identity policy still rules, and the bucket has no policy.
    let got = must(
        s,
        owner,
        M::GET,
        Tables,
        "/admin/users/ana/policies/p",
        Value::Null,
    )
    .await;
    assert!(got.to_string().contains("GetTableBucket"), "{got}");
    assert_eq!(
        send(
            s,
            owner,
            M::GET,
            Tables,
            &format!("/buckets/{b}/policy"),
            b""
        )
        .await
        .0,
        404
    );
    assert_allowed(
        &send(s, &world.ana, M::GET, Tables, &format!("/buckets/{b}"), b"").await,
        "GetTableBucket",
    );
    assert_denied(
        &send(
            s,
            &world.ana,
            M::GET,
            Tables,
            &format!("/namespaces/{b}"),
            b"",
        )
        .await,
        "ListNamespaces",
    );
}
