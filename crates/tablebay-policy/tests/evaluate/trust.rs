//! Trust policies (who may assume a role) and the Iceberg operation map's requests.

use super::*;

#[test]
fn trust_policies_name_who_may_assume() {
    let trust_ana = Policy::parse(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":"acs:ram::111122223333:user/ana"},"Action":"sts:AssumeRole"}}"#,
        PolicyKind::Trust,
    )
    .unwrap();
    let trust_account = Policy::parse(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sts:AssumeRole"}}"#,
        PolicyKind::Trust,
    )
    .unwrap();
    let trust_bob = Policy::parse(
        &format!(r#"{{"Statement":{{"Effect":"Allow","Principal":{{"AWS":"{BOB}"}},"Action":"sts:AssumeRole"}}}}"#),
        PolicyKind::Trust,
    )
    .unwrap();
    let trust_deny_eve = Policy::parse(
        r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sts:AssumeRole"},
            {"Sid":"no-eve","Effect":"Deny","Principal":{"AWS":"acs:ram::111122223333:user/eve"},"Action":"sts:AssumeRole"}]}"#,
        PolicyKind::Trust,
    )
    .unwrap();
    let ctx = ctx();
    let decide = |caller: Caller, trust: &Policy, identity: &[Policy], sessions: &[Policy]| {
        evaluate_assume_role(
            &Request {
                caller,
                action: Action::AssumeRole,
                resource_arn: ROLE,
                resource_account: OWNER,
                context: &ctx,
            },
            trust,
            &Policies {
                identity,
                resource: &[],
                sessions,
            },
        )
    };
    let eve = Caller {
        account_id: OWNER,
        arn: "acs:ram::111122223333:user/eve",
        is_account_root: false,
    };
    let may_assume_any = identity(&allow("sts:AssumeRole", "*"));
    let may_assume_role = identity(&allow(
        "sts:AssumeRole",
        "arn:aws:iam::111122223333:role/etl",
    ));
    let may_assume_other = identity(&allow("sts:AssumeRole", "acs:ram::111122223333:role/other"));
    let deny_assume = identity(
        r#"{"Statement":{"Sid":"never","Effect":"Deny","Action":"sts:AssumeRole","Resource":"*"}}"#,
    );
    let session_other = Policy::parse(&allow("oss:GetTable", "*"), PolicyKind::Session).unwrap();
    let session_assume = Policy::parse(&allow("sts:*", "*"), PolicyKind::Session).unwrap();
    let no = Decision::ImplicitDeny;
    for (what, caller, trust, ids, sessions, want) in [
        // The finding: a same-account user allowed sts:AssumeRole on * whom the trust policy does not name.
        (
            "unnamed, identity allows",
            eve,
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![],
            no.clone(),
        ),
        // Named, and its own policy allows: yes (either flavor of the role ARN).
        (
            "named, identity allows",
            user(ANA),
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        (
            "named, identity allows the role",
            user(ANA),
            &trust_ana,
            vec![may_assume_role.clone()],
            vec![],
            Decision::Allow,
        ),
        // Named but its own policy says nothing (or names another role): both sides must allow.
        (
            "named, no identity allow",
            user(ANA),
            &trust_ana,
            vec![],
            vec![],
            no.clone(),
        ),
        (
            "named, identity names another role",
            user(ANA),
            &trust_ana,
            vec![may_assume_other],
            vec![],
            no.clone(),
        ),
        // A trust policy naming the account delegates to the account's identity policies.
        (
            "account trusted, identity allows",
            eve,
            &trust_account,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        (
            "account trusted, no identity allow",
            eve,
            &trust_account,
            vec![],
            vec![],
            no.clone(),
        ),
        // The account root has no identity policies: the trust policy alone decides for it.
        (
            "root, account trusted",
            root(OWNER),
            &trust_account,
            vec![],
            vec![],
            Decision::Allow,
        ),
        (
            "root, only ana trusted",
            root(OWNER),
            &trust_ana,
            vec![],
            vec![],
            no.clone(),
        ),
        // Denies win, in the identity policy or in the trust policy.
        (
            "identity deny",
            eve,
            &trust_account,
            vec![may_assume_any.clone(), deny_assume],
            vec![],
            Decision::ExplicitDeny {
                sid: Some("never".into()),
            },
        ),
        (
            "trust deny",
            eve,
            &trust_deny_eve,
            vec![may_assume_any.clone()],
            vec![],
            Decision::ExplicitDeny {
                sid: Some("no-eve".into()),
            },
        ),
        (
            "trust deny for another",
            user(ANA),
            &trust_deny_eve,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        // A caller's session policy narrows.
        (
            "session without sts",
            user(ANA),
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![session_other],
            no.clone(),
        ),
        (
            "session with sts",
            user(ANA),
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![session_assume],
            Decision::Allow,
        ),
        // Across accounts: named, plus his own identity allow.
        (
            "other account, no identity allow",
            user(BOB),
            &trust_bob,
            vec![],
            vec![],
            no.clone(),
        ),
        (
            "other account, identity allows",
            user(BOB),
            &trust_bob,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        (
            "other account root, user trusted",
            root(OTHER),
            &trust_bob,
            vec![],
            vec![],
            no.clone(),
        ),
    ] {
        assert_eq!(decide(caller, trust, &ids, &sessions), want, "{what}");
    }
}

#[test]
fn iceberg_operation_map_drives_requests() {
    // A user holding exactly an operation's actions may perform every one of them; without one, that one fails.
    for &op in IcebergOperation::all() {
        let needed = iceberg_operation_actions(op);
        let list: Vec<String> = needed.iter().map(|a| format!("\"{a}\"")).collect();
        let policy = identity(&format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Action":[{}],"Resource":"*"}}}}"#,
            list.join(",")
        ));
        for &action in needed {
            let mut case = Case::new(user(ANA), action);
            case.identity = vec![policy.clone()];
            assert_eq!(case.decide(), Decision::Allow, "{op:?} {action}");
        }
    }
}
