//! Identity rows: accounts, users/roles, identity policies and credentials — insert, duplicate, cascade on
//! delete, key status, temporary credentials and their sweep, and an account that still owns buckets.

use chrono::{Duration, Utc};
use tablebay_store::StoreError;
use tablebay_store::meta::{AccountRecord, CredentialRecord, PrincipalRecord};

use crate::Env;
use crate::fixtures::*;

fn account(id: &str) -> AccountRecord {
    AccountRecord {
        account_id: id.into(),
        name: Some("team".into()),
        created_at: Utc::now(),
    }
}

fn principal(account: &str, kind: &str, name: &str) -> PrincipalRecord {
    PrincipalRecord {
        account_id: account.into(),
        kind: kind.into(),
        name: name.into(),
        trust_policy: (kind == "role").then(|| "{}".to_string()),
        max_session_secs: (kind == "role").then_some(3600),
        created_at: Utc::now(),
    }
}

fn credential(
    id: &str,
    account: &str,
    kind: &str,
    name: &str,
    expires_in: Option<i64>,
) -> CredentialRecord {
    CredentialRecord {
        access_key_id: id.into(),
        secret: format!("secret-{id}"),
        account_id: account.into(),
        principal_kind: kind.into(),
        principal_name: name.into(),
        session_name: None,
        status: "Active".into(),
        session_token_sha256: expires_in.map(|_| "digest".to_string()),
        session_policy: None,
        expires_at: expires_in.map(|secs| Utc::now() + Duration::seconds(secs)),
        created_at: Utc::now(),
    }
}

pub(crate) async fn iam_identities_and_keys(env: Env) {
    let store = env.store;
    store
        .insert_account(&account("210987654321"))
        .await
        .unwrap();
    assert!(matches!(
        store.insert_account(&account("210987654321")).await,
        Err(StoreError::AlreadyExists(_))
    ));
    assert_eq!(
        store
            .account("210987654321")
            .await
            .unwrap()
            .unwrap()
            .name
            .as_deref(),
        Some("team")
    );
    assert!(store.account("000000000000").await.unwrap().is_none());

    // Users and roles: unique per account and kind; a missing account is NotFound.
    store
        .insert_principal(&principal("210987654321", "user", "ana"))
        .await
        .unwrap();
    store
        .insert_principal(&principal("210987654321", "role", "ana"))
        .await
        .unwrap();
    assert!(matches!(
        store
            .insert_principal(&principal("210987654321", "user", "ana"))
            .await,
        Err(StoreError::AlreadyExists(_))
    ));
    assert!(
        store
            .insert_principal(&principal("999999999999", "user", "x"))
            .await
            .is_err()
    );
    let users = store.list_principals("210987654321", "user").await.unwrap();
    assert_eq!(
        users.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["ana"]
    );
    assert_eq!(
        store
            .principal("210987654321", "role", "ana")
            .await
            .unwrap()
            .unwrap()
            .max_session_secs,
        Some(3600)
    );

    // Policies: upsert, list, delete; a policy of a missing principal is refused.
    store
        .put_principal_policy("210987654321", "user", "ana", "p", "{\"v\":1}")
        .await
        .unwrap();
    store
        .put_principal_policy("210987654321", "user", "ana", "p", "{\"v\":2}")
        .await
        .unwrap();
    store
        .put_principal_policy("210987654321", "user", "ana", "q", "{}")
        .await
        .unwrap();
    let policies = store
        .principal_policies("210987654321", "user", "ana")
        .await
        .unwrap();
    assert_eq!(
        policies,
        vec![
            ("p".to_string(), "{\"v\":2}".to_string()),
            ("q".to_string(), "{}".to_string())
        ]
    );
    assert!(
        store
            .put_principal_policy("210987654321", "user", "ghost", "p", "{}")
            .await
            .is_err()
    );
    assert!(
        store
            .delete_principal_policy("210987654321", "user", "ana", "q")
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_principal_policy("210987654321", "user", "ana", "q")
            .await
            .unwrap()
    );

    // Keys: long-term listed, temporary not; status; delete.
    store
        .insert_credential(&credential("K1", "210987654321", "user", "ana", None))
        .await
        .unwrap();
    store
        .insert_credential(&credential("S1", "210987654321", "user", "ana", Some(3600)))
        .await
        .unwrap();
    assert!(matches!(
        store
            .insert_credential(&credential("K1", "210987654321", "user", "ana", None))
            .await,
        Err(StoreError::AlreadyExists(_))
    ));
    let keys = store
        .list_access_keys("210987654321", "user", "ana")
        .await
        .unwrap();
    assert_eq!(
        keys.iter()
            .map(|k| k.access_key_id.as_str())
            .collect::<Vec<_>>(),
        ["K1"]
    );
    assert!(
        store
            .set_access_key_status("210987654321", "user", "ana", "K1", "Inactive")
            .await
            .unwrap()
    );
    assert_eq!(
        store.credential("K1").await.unwrap().unwrap().status,
        "Inactive"
    );
    assert!(
        !store
            .set_access_key_status("210987654321", "user", "ana", "S1", "Inactive")
            .await
            .unwrap()
    );
    let session = store.credential("S1").await.unwrap().unwrap();
    assert!(session.expires_at.is_some() && session.session_token_sha256.is_some());

    // Secrets stored in clear are listed for sealing; the replacement is conditional on the old value.
    let mut unsealed = store.unsealed_secrets().await.unwrap();
    unsealed.sort();
    assert_eq!(
        unsealed,
        [
            ("K1".to_string(), "secret-K1".to_string()),
            ("S1".to_string(), "secret-S1".to_string())
        ]
    );
    assert!(
        !store
            .replace_secret("K1", "not-the-old-one", "sealed1:{}")
            .await
            .unwrap()
    );
    assert!(
        store
            .replace_secret("K1", "secret-K1", "sealed1:{}")
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_secret("NOPE", "x", "sealed1:{}")
            .await
            .unwrap()
    );
    assert_eq!(
        store.credential("K1").await.unwrap().unwrap().secret,
        "sealed1:{}"
    );
    let unsealed = store.unsealed_secrets().await.unwrap();
    assert_eq!(unsealed, [("S1".to_string(), "secret-S1".to_string())]);

    // Expired sessions are swept, live ones stay.
    store
        .insert_credential(&credential("S0", "210987654321", "user", "ana", Some(-5)))
        .await
        .unwrap();
    assert_eq!(
        store.delete_expired_credentials(Utc::now()).await.unwrap(),
        1
    );
    assert!(store.credential("S0").await.unwrap().is_none());
    assert!(store.credential("S1").await.unwrap().is_some());

    // Deleting a user removes its policies and every credential, and reports the keys.
    let mut removed = store
        .delete_principal("210987654321", "user", "ana")
        .await
        .unwrap();
    removed.sort();
    assert_eq!(removed, ["K1", "S1"]);
    assert!(store.credential("K1").await.unwrap().is_none());
    assert!(
        store
            .principal_policies("210987654321", "user", "ana")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store.delete_principal("210987654321", "user", "ana").await,
        Err(StoreError::NotFound)
    ));
    assert!(
        store
            .principal("210987654321", "role", "ana")
            .await
            .unwrap()
            .is_some(),
        "the role of the same name stays"
    );

    // An account that owns a bucket cannot be deleted; an empty one goes with everything it has.
    store
        .insert_bucket(&bucket("210987654321", "owned"))
        .await
        .unwrap();
    assert!(matches!(
        store.delete_account("210987654321").await,
        Err(StoreError::Conflict(_))
    ));
    store
        .insert_account(&account("310987654321"))
        .await
        .unwrap();
    store
        .insert_principal(&principal("310987654321", "role", "r"))
        .await
        .unwrap();
    store
        .put_principal_policy("310987654321", "role", "r", "p", "{}")
        .await
        .unwrap();
    store
        .insert_credential(&credential("R1", "310987654321", "root", "", None))
        .await
        .unwrap();
    store.delete_account("310987654321").await.unwrap();
    assert!(store.account("310987654321").await.unwrap().is_none());
    assert!(store.credential("R1").await.unwrap().is_none());
    assert!(
        store
            .principal("310987654321", "role", "r")
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        store.delete_account("310987654321").await,
        Err(StoreError::NotFound)
    ));
}
