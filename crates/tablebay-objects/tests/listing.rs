//! Listings end to end over a temporary SQLite database: delimiters roll keys up into common prefixes, and
//! paging visits every entry once.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use tablebay_objects::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_roll_up_and_page() {
    let env = env().await;
    let keys = ["a/1", "a/2", "a/b/1", "b", "c/x/y", "c/z", "d"];
    for k in keys {
        put(&env, k, k.as_bytes()).await;
    }
    let list = |prefix: &str, delimiter: Option<&str>, after: Option<String>, max| ListRequest {
        prefix: prefix.into(),
        delimiter: delimiter.map(str::to_string),
        after,
        max_keys: max,
    };
    let page = env
        .objects
        .list_objects(env.id(), &list("", Some("/"), None, 1000))
        .await
        .unwrap();
    let got: Vec<_> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(got, ["b", "d"]);
    assert_eq!(page.common_prefixes, ["a/", "c/", "metadata/"]);
    assert!(!page.truncated);
    let page = env
        .objects
        .list_objects(env.id(), &list("a/", Some("/"), None, 1000))
        .await
        .unwrap();
    assert_eq!(
        page.objects
            .iter()
            .map(|o| o.key.as_str())
            .collect::<Vec<_>>(),
        ["a/1", "a/2"]
    );
    assert_eq!(page.common_prefixes, ["a/b/"]);
    // Paging one entry at a time visits every entry once, prefixes included.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = env
            .objects
            .list_objects(env.id(), &list("", Some("/"), after.clone(), 1))
            .await
            .unwrap();
        seen.extend(page.objects.iter().map(|o| o.key.clone()));
        seen.extend(page.common_prefixes.iter().cloned());
        if !page.truncated {
            break;
        }
        after = page.next_after;
    }
    assert_eq!(seen, ["a/", "b", "c/", "d", "metadata/"]);
    let page = env
        .objects
        .list_objects(env.id(), &list("", None, Some("c/x/y".into()), 2))
        .await
        .unwrap();
    assert_eq!(
        page.objects
            .iter()
            .map(|o| o.key.as_str())
            .collect::<Vec<_>>(),
        ["c/z", "d"]
    );
    assert!(page.truncated);
    assert_eq!(page.next_after.as_deref(), Some("d"));
    let empty = env
        .objects
        .list_objects(env.id(), &list("", None, None, 0))
        .await
        .unwrap();
    assert!(empty.objects.is_empty() && !empty.truncated);
}
