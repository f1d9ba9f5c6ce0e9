//! Every Iceberg REST operation of the guide's map needs exactly its listed actions.

use super::*;

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
        O::UnregisterTable => (M::POST, format!("{t}/unregister"), Value::Null),
        // Not in the guide's map.
        O::UpdateNamespaceProperties
        | O::RegisterView
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
