//! Every action of the guide's list, under every rule (identity allow, none, bucket-policy deny, cross-account);
//! bad policies get 400 and change nothing.

use super::*;

/// Actions that act on the caller's own account whatever the request says (CreateTableBucket creates in the
/// caller's account, ListTableBuckets lists it), so "another account's bucket" does not apply to them.
fn account_scoped(action: Action) -> bool {
    matches!(action, Action::CreateTableBucket | Action::ListTableBuckets)
}

/// Actions whose operation succeeds only on a table a migration made (Sync, Update, Complete, Get): the fixture
/// has none. They are authorized on the table ARN as GetTable is (`control_plane/access.rs`), and
/// clients/python/test_model_coverage.py and test_migration.py call them on real migrations.
fn needs_migration(action: Action) -> bool {
    matches!(
        action,
        Action::SyncTableMigration
            | Action::UpdateTableMigration
            | Action::CompleteTableMigration
            | Action::GetTableMigration
    )
}

/// Actions whose operation succeeds only once a configuration exists (Get/Delete) or on a replica (status,
/// disassociation): the fixture has neither. They are authorized like their Put (`control_plane/access.rs`);
/// clients/python/test_replication.py and test_model_coverage.py call them on real configurations and replicas.
fn needs_replication(action: Action) -> bool {
    matches!(
        action,
        Action::GetTableBucketReplication
            | Action::DeleteTableBucketReplication
            | Action::GetTableReplication
            | Action::DeleteTableReplication
            | Action::GetTableReplicationStatus
            | Action::DisassociateTableReplication
    )
}

#[tokio::test]
async fn every_action_is_enforced_as_the_guide_says() {
    let world = World::new().await;
    let (s, owner_account) = (&world.server, world.owner.account.clone());
    let mut n = 0;
    for &action in Action::all() {
        if needs_migration(action) || needs_replication(action) {
            continue;
        }
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
