//! Iceberg REST namespaces: the control plane's, with Java's error types and messages, properties, pagination.

use super::*;

#[tokio::test]
async fn namespaces_are_the_control_planes_with_javas_errors() {
    let (server, arn, p) = setup().await;
    let (status, _, created) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces"),
        json!({"namespace": ["sales"], "properties": {"owner": "me"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(
        created,
        json!({"namespace": ["sales"], "properties": {"owner": "me"}})
    );
    // The control plane sees it.
    let cp = server
        .call(
            M::GET,
            &format!("/namespaces/{}/sales", seg(&arn)),
            Value::Null,
        )
        .await;
    assert_eq!(cp.status(), StatusCode::OK);

    let namespaces = format!("/{p}/namespaces");
    let exists = Some("Namespace already exists: sales");
    let missing = Some("Namespace does not exist: nope");
    // One row a request: what is sent, then the status, the error type and the message (when it is fixed).
    #[rustfmt::skip]
    let refused = [
        (M::POST, namespaces.clone(), json!({"namespace": ["sales"]}), 409, ALREADY_EXISTS, exists),
        (M::POST, namespaces.clone(), json!({"namespace": ["a", "b"]}), 400, BAD_REQUEST, None),
        (M::POST, namespaces.clone(), json!({"namespace": ["Upper"]}), 400, BAD_REQUEST, None),
        (M::GET, format!("{namespaces}/a%1Fb"), Value::Null, 400, BAD_REQUEST, None),
        (M::GET, format!("{namespaces}/nope"), Value::Null, 404, NO_SUCH_NAMESPACE, missing),
    ];
    for (method, path, body, status, kind, message) in refused {
        let got = call(&server, method.clone(), &path, body).await;
        assert_error(&got, status, kind, message);
    }
    for (name, status) in [
        ("sales", StatusCode::NO_CONTENT),
        ("nope", StatusCode::NOT_FOUND),
    ] {
        let got = call(
            &server,
            M::HEAD,
            &format!("{namespaces}/{name}"),
            Value::Null,
        )
        .await;
        assert_eq!(got.0, status, "HEAD {name}");
    }

    let (status, _, updated) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/properties"),
        json!({"removals": ["owner", "absent"], "updates": {"k": "v"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        updated,
        json!({"updated": ["k"], "removed": ["owner"], "missing": ["absent"]})
    );
    let (_, _, loaded) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces/sales"),
        Value::Null,
    )
    .await;
    assert_eq!(loaded["properties"], json!({"k": "v"}));

    // Lists: an absent pageToken is everything (PyIceberg 0.10), an empty one a first page (Java).
    for name in ["ns_a", "ns_b", "ns_c"] {
        call(
            &server,
            M::POST,
            &format!("/{p}/namespaces"),
            json!({"namespace": [name]}),
        )
        .await;
    }
    let (_, _, all) = call(&server, M::GET, &format!("/{p}/namespaces"), Value::Null).await;
    assert_eq!(
        all,
        json!({"namespaces": [["ns_a"], ["ns_b"], ["ns_c"], ["sales"]]})
    );
    let (_, _, first) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces?pageToken=&pageSize=3"),
        Value::Null,
    )
    .await;
    assert_eq!(first["namespaces"], json!([["ns_a"], ["ns_b"], ["ns_c"]]));
    let token = first["next-page-token"].as_str().unwrap();
    assert!(!token.is_empty());
    let (_, _, last) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces?pageToken={token}&pageSize=3"),
        Value::Null,
    )
    .await;
    assert_eq!(last, json!({"namespaces": [["sales"]]}));
    let (_, _, children) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces?parent=sales"),
        Value::Null,
    )
    .await;
    assert_eq!(children, json!({"namespaces": []}));
    assert_error(
        &call(
            &server,
            M::GET,
            &format!("/{p}/namespaces?parent=non_existing"),
            Value::Null,
        )
        .await,
        404,
        NO_SUCH_NAMESPACE,
        Some("Namespace does not exist: non_existing"),
    );

    call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables"),
        json!({"name": "t", "schema": schema()}),
    )
    .await;
    assert_error(
        &call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales"),
            Value::Null,
        )
        .await,
        409,
        "NamespaceNotEmptyException",
        None,
    );
    assert_eq!(
        call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales/tables/t"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
}
