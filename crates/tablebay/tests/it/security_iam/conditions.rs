//! Issue 14, finding 6: the resource's condition keys (namespace, table name, tags) apply on every surface.

use http::Method;
use serde_json::{Value, json};

use crate::identity::{Creds, Surface, must, send, user};
use crate::server::{ACCOUNT, TestServer, seg};

use super::common::*;

// --- Finding 6 --------------------------------------------------------------------------------------------------

/// A bucket `conds` with tables `hr.people` and `sales.orders` (each with `data/x` in its storage), as root.
pub(super) struct TwoTables {
    pub(super) bucket_arn: String,
    pub(super) hr: String,
    pub(super) sales: String,
    pub(super) hr_arn: String,
    pub(super) sales_arn: String,
}

pub(super) async fn two_tables(server: &TestServer, root: &Creds) -> TwoTables {
    let bucket_arn = bucket(server, root, "conds").await;
    let hr = iceberg_table(server, root, "conds", "hr", "people").await;
    let sales = iceberg_table(server, root, "conds", "sales", "orders").await;
    TwoTables {
        hr_arn: table_arn(server, root, &bucket_arn, "hr", "people").await,
        sales_arn: table_arn(server, root, &bucket_arn, "sales", "orders").await,
        bucket_arn,
        hr,
        sales,
    }
}

/// Every table-service action, but denied where `condition` holds.
pub(super) fn allow_but(condition: Value) -> Value {
    json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:*"], "Resource": "*"},
        {"Sid": "NoGo", "Effect": "Deny", "Action": ["s3tables:*"], "Resource": "*", "Condition": condition}]})
}

/// Reads of table `ns.name` on each surface, as (operation, status): GetTable and GetTableMetadataLocation on the
/// control plane, loadTable and tableExists in the Iceberg catalog, GetObject and ListObjectsV2 on the data plane.
pub(super) async fn table_requests(
    server: &TestServer,
    creds: &Creds,
    tables: &TwoTables,
    ns: &str,
    name: &str,
) -> Vec<(String, u16)> {
    let (data, arn) = if ns == "hr" {
        (&tables.hr, &tables.hr_arn)
    } else {
        (&tables.sales, &tables.sales_arn)
    };
    let b = seg(&tables.bucket_arn);
    let prefix = format!("{ACCOUNT}.conds");
    let mut out = Vec::new();
    for (what, surface, method, path) in [
        (
            "GetTable",
            Surface::Tables,
            Method::GET,
            format!("/get-table?tableArn={}", seg(arn)),
        ),
        (
            "GetTableMetadataLocation",
            Surface::Tables,
            Method::GET,
            format!("/tables/{b}/{ns}/{name}/metadata-location"),
        ),
        (
            "loadTable",
            Surface::Iceberg,
            Method::GET,
            format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        ),
        (
            "tableExists",
            Surface::Iceberg,
            Method::HEAD,
            format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        ),
        (
            "GetObject",
            Surface::S3,
            Method::GET,
            format!("/{data}/data/x"),
        ),
        (
            "ListObjectsV2",
            Surface::S3,
            Method::GET,
            format!("/{data}?list-type=2"),
        ),
    ] {
        let (status, _) = send(server, creds, method, surface, &path, b"").await;
        out.push((what.to_string(), status));
    }
    out
}

/// Writes that a denied caller must not get through: DeleteTable (control plane), dropTable (Iceberg), PutObject
/// over `data/x` (S3). Asserts each is refused and changed nothing.
pub(super) async fn writes_refused(
    server: &TestServer,
    creds: &Creds,
    root: &Creds,
    tables: &TwoTables,
    ns: &str,
    name: &str,
) {
    let data = if ns == "hr" {
        &tables.hr
    } else {
        &tables.sales
    };
    let b = seg(&tables.bucket_arn);
    let prefix = format!("{ACCOUNT}.conds");
    let (status, text) = send(
        server,
        creds,
        Method::DELETE,
        Surface::Tables,
        &format!("/tables/{b}/{ns}/{name}"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "DeleteTable {ns}.{name}: {text}");
    let (status, text) = send(
        server,
        creds,
        Method::DELETE,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "dropTable {ns}.{name}: {text}");
    let (status, text) = send(
        server,
        creds,
        Method::PUT,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"evil",
    )
    .await;
    assert_eq!(status, 403, "PutObject {ns}.{name}: {text}");
    // Unchanged: the table is there and its object still says hello.
    let (status, _) = send(
        server,
        root,
        Method::GET,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = send(
        server,
        root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
}

/// Every request answered `want` (200 standing for any 2xx: tableExists answers 204).
pub(super) fn assert_all(results: &[(String, u16)], want: u16, who: &str) {
    for (what, status) in results {
        let got = if (200..300).contains(status) {
            200
        } else {
            *status
        };
        assert_eq!(got, want, "{who}: {what} answered {status}");
    }
}

#[tokio::test]
pub(super) async fn namespace_and_table_name_conditions_apply_on_every_surface() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;

    // In an identity policy: ana may do everything outside namespace hr (the key in its oss: spelling too).
    let ana = user(
        s,
        &root,
        "ana",
        Some(allow_but(
            json!({"StringEquals": {"s3tables:namespace": "hr"}}),
        )),
    )
    .await;
    let oscar = user(
        s,
        &root,
        "oscar",
        Some(allow_but(json!({"StringLike": {"oss:namespace": "h*"}}))),
    )
    .await;
    for (who, creds) in [("ana", &ana), ("oscar", &oscar)] {
        assert_all(
            &table_requests(s, creds, &tables, "hr", "people").await,
            403,
            who,
        );
        assert_all(
            &table_requests(s, creds, &tables, "sales", "orders").await,
            200,
            who,
        );
        writes_refused(s, creds, &root, &tables, "hr", "people").await;
    }

    // In the bucket policy: bob may not touch the table named orders.
    let bob = user(s, &root, "bob", Some(allow_all("s3tables:*"))).await;
    let policy = json!({"Version": "2012-10-17", "Statement": [{"Sid": "NoOrders", "Effect": "Deny",
        "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:user/bob")}, "Action": "s3tables:*", "Resource": "*",
        "Condition": {"StringEquals": {"s3tables:tableName": "orders"}}}]});
    must(
        s,
        &root,
        Method::PUT,
        Surface::Tables,
        &format!("/buckets/{}/policy", seg(&tables.bucket_arn)),
        json!({"resourcePolicy": policy.to_string()}),
    )
    .await;
    assert_all(
        &table_requests(s, &bob, &tables, "sales", "orders").await,
        403,
        "bob",
    );
    assert_all(
        &table_requests(s, &bob, &tables, "hr", "people").await,
        200,
        "bob",
    );
    writes_refused(s, &bob, &root, &tables, "sales", "orders").await;

    // A role session whose session policy denies namespace hr: the session's own policy reads the key as well.
    let role = create_role(
        s,
        &root,
        "reader",
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:root")}, "Action": "sts:AssumeRole"}]}),
        allow_all("s3tables:*"),
    )
    .await;
    let (status, xml) = assume(
        s,
        &root,
        &role,
        Some(&allow_but(
            json!({"StringEquals": {"s3tables:namespace": "hr"}}),
        )),
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let session = session_of(&xml);
    assert_all(
        &table_requests(s, &session, &tables, "hr", "people").await,
        403,
        "session",
    );
    assert_all(
        &table_requests(s, &session, &tables, "sales", "orders").await,
        200,
        "session",
    );
}

#[tokio::test]
pub(super) async fn tag_conditions_apply_on_every_surface() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;
    let other_bucket = bucket(s, &root, "plain").await;
    let plain = iceberg_table(s, &root, "plain", "ns", "t").await;
    for (arn, tags) in [
        (&tables.hr_arn, json!({"env": "secret"})),
        (&tables.bucket_arn, json!({"team": "data"})),
    ] {
        must(
            s,
            &root,
            Method::POST,
            Surface::Tables,
            &format!("/tag/{}", seg(arn)),
            json!({"tags": tags}),
        )
        .await;
    }

    // The table's own tag.
    let carol = user(
        s,
        &root,
        "carol",
        Some(allow_but(
            json!({"StringEquals": {"aws:ResourceTag/Env": "secret"}}),
        )),
    )
    .await;
    assert_all(
        &table_requests(s, &carol, &tables, "hr", "people").await,
        403,
        "carol",
    );
    assert_all(
        &table_requests(s, &carol, &tables, "sales", "orders").await,
        200,
        "carol",
    );
    writes_refused(s, &carol, &root, &tables, "hr", "people").await;

    // The bucket's tag reaches every table in it, and the bucket itself.
    let dave = user(
        s,
        &root,
        "dave",
        Some(allow_but(
            json!({"StringEquals": {"s3tables:TableBucketTag/team": "data"}}),
        )),
    )
    .await;
    assert_all(
        &table_requests(s, &dave, &tables, "sales", "orders").await,
        403,
        "dave",
    );
    let (status, _) = send(
        s,
        &dave,
        Method::GET,
        Surface::Tables,
        &format!("/buckets/{}", seg(&tables.bucket_arn)),
        b"",
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = send(
        s,
        &dave,
        Method::GET,
        Surface::Tables,
        &format!("/buckets/{}", seg(&other_bucket)),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = send(
        s,
        &dave,
        Method::GET,
        Surface::S3,
        &format!("/{plain}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
}

/// Bucket-level operations that name a namespace. The control plane and the Iceberg catalog must hand the
/// namespace to authorization (`Resource::in_namespace` / `naming_table`); until they do, these requests are
/// decided without `s3tables:namespace`.
#[tokio::test]
pub(super) async fn namespace_conditions_apply_to_namespace_operations() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;
    let b = seg(&tables.bucket_arn);
    let prefix = format!("{ACCOUNT}.conds");
    // An empty namespace hr_empty to try deleting.
    must(
        s,
        &root,
        Method::PUT,
        Surface::Tables,
        &format!("/namespaces/{b}"),
        json!({"namespace": ["hr_empty"]}),
    )
    .await;
    let ana = user(
        s,
        &root,
        "ana",
        Some(allow_but(
            json!({"StringLike": {"s3tables:namespace": "hr*"}}),
        )),
    )
    .await;
    let schema = json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]});
    let create = json!({"name": "fresh", "format": "ICEBERG"}).to_string();
    let create_iceberg = json!({"name": "fresh2", "schema": schema}).to_string();
    for (ns, want) in [("hr", 403), ("sales", 200)] {
        for (what, surface, method, path, body) in [
            (
                "GetNamespace",
                Surface::Tables,
                Method::GET,
                format!("/namespaces/{b}/{ns}"),
                "",
            ),
            (
                "ListTables",
                Surface::Tables,
                Method::GET,
                format!("/tables/{b}?namespace={ns}"),
                "",
            ),
            (
                "loadNamespaceMetadata",
                Surface::Iceberg,
                Method::GET,
                format!("/iceberg/v1/{prefix}/namespaces/{ns}"),
                "",
            ),
            (
                "listTables",
                Surface::Iceberg,
                Method::GET,
                format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables"),
                "",
            ),
            (
                "CreateTable",
                Surface::Tables,
                Method::PUT,
                format!("/tables/{b}/{ns}"),
                create.as_str(),
            ),
            (
                "createTable",
                Surface::Iceberg,
                Method::POST,
                format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables"),
                create_iceberg.as_str(),
            ),
        ] {
            let (status, text) = send(s, &ana, method, surface, &path, body.as_bytes()).await;
            assert_eq!(status, want, "{what} in {ns}: {text}");
        }
    }
    // Refused deletes and creates changed nothing.
    for (what, surface, method, path, body) in [
        (
            "DeleteNamespace",
            Surface::Tables,
            Method::DELETE,
            format!("/namespaces/{b}/hr_empty"),
            String::new(),
        ),
        (
            "dropNamespace",
            Surface::Iceberg,
            Method::DELETE,
            format!("/iceberg/v1/{prefix}/namespaces/hr_empty"),
            String::new(),
        ),
        (
            "CreateNamespace",
            Surface::Tables,
            Method::PUT,
            format!("/namespaces/{b}"),
            json!({"namespace": ["hr_new"]}).to_string(),
        ),
        (
            "createNamespace",
            Surface::Iceberg,
            Method::POST,
            format!("/iceberg/v1/{prefix}/namespaces"),
            json!({"namespace": ["hr_new"]}).to_string(),
        ),
    ] {
        let (status, text) = send(s, &ana, method, surface, &path, body.as_bytes()).await;
        assert_eq!(status, 403, "{what}: {text}");
    }
    for (ns, exists) in [("hr_empty", 200), ("hr_new", 404)] {
        let (status, _) = send(
            s,
            &root,
            Method::GET,
            Surface::Tables,
            &format!("/namespaces/{b}/{ns}"),
            b"",
        )
        .await;
        assert_eq!(status, exists, "{ns}");
    }
    for name in ["fresh", "fresh2"] {
        let (status, _) = send(
            s,
            &root,
            Method::GET,
            Surface::Iceberg,
            &format!("/iceberg/v1/{prefix}/namespaces/hr/tables/{name}"),
            b"",
        )
        .await;
        assert_eq!(status, 404, "hr.{name} was created");
    }
}
